from django.contrib import admin
from django.urls import include, path

from articles import seed, views
from articles.api import api

urlpatterns = [
    path("", views.home, name="home"),
    path("api/", api.urls),
    path("docId/getDocId", seed.get_doc_id, name="seed_get_doc_id"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("clusters/", views.clusters, name="clusters"),
    path("clusters/<str:doc_id>/", views.cluster_detail, name="cluster_detail"),
    path("admin/", admin.site.urls),
    path("django-rq/", include("django_rq.urls")),
]
