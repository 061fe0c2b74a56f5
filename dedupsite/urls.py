from django.contrib import admin
from django.urls import include, path

from articles import seed, stats, views
from articles.api import api

urlpatterns = [
    path("", views.home, name="home"),
    path("api/", api.urls),
    path("docId/getDocId", seed.get_doc_id, name="seed_get_doc_id"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("clusters/", views.clusters, name="clusters"),
    path("clusters/<str:doc_id>/", views.cluster_detail, name="cluster_detail"),
    path("clusters/<str:doc_id>/confirm/", views.confirm, name="cluster_confirm"),
    path("clusters/<str:doc_id>/split/", views.split, name="cluster_split"),
    path("clusters/<str:doc_id>/move/", views.move, name="cluster_move"),
    path("clusters/<str:doc_id>/merge/", views.merge, name="cluster_merge"),
    path("clusters/<str:doc_id>/representative/", views.representative,
         name="cluster_representative"),
    path("clusters/<str:doc_id>/release/", views.release, name="cluster_release"),
    path("review/", views.review_queue, name="review"),
    path("stats/", stats.stats, name="stats"),
    path("admin/", admin.site.urls),
    path("django-rq/", include("django_rq.urls")),
]
