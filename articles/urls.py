"""The editors' pages (the crawler API and the seed call are routed in dedupsite/urls.py)."""

from django.urls import path

from articles.editor import stats, views
from articles.images import views as images

urlpatterns = [
    path("", views.home, name="home"),
    path("clusters/", views.clusters, name="clusters"),
    path("clusters/news/", views.clusters_news, name="clusters_news"),
    path("clusters/<str:doc_id>/", views.cluster_detail, name="cluster_detail"),
    path("clusters/<str:doc_id>/confirm/", views.confirm, name="cluster_confirm"),
    path("clusters/<str:doc_id>/split/", views.split, name="cluster_split"),
    path("clusters/<str:doc_id>/move/", views.move, name="cluster_move"),
    path("clusters/<str:doc_id>/merge/", views.merge, name="cluster_merge"),
    path("clusters/<str:doc_id>/representative/", views.representative,
         name="cluster_representative"),
    path("clusters/<str:doc_id>/release/", views.release, name="cluster_release"),
    path("decisions/<int:pk>/undo/", views.undo, name="decision_undo"),
    path("review/", views.review_queue, name="review"),
    path("review/take/", views.review_take, name="review_take"),
    path("review/filter/", views.review_filter, name="review_filter"),
    path("review/pass/<str:kind>/", views.review_pass, name="review_pass"),
    path("review/news/", views.review_news, name="review_news"),
    path("review/teach/", views.teach, name="teach"),
    path("review/teach/answer/", views.teach_answer, name="teach_answer"),
    path("review/teach/<int:pk>/undo/", views.teach_undo, name="teach_undo"),
    path("bulk/", views.bulk_start, name="bulk_start"),
    path("bulk/<int:pk>/", views.bulk_status, name="bulk"),
    path("bulk/<int:pk>/undo/", views.bulk_undo, name="bulk_undo"),
    path("nav/counts/", views.nav_counts, name="nav_counts"),
    path("stats/", stats.stats, name="stats"),
    path("images/<int:image_id>/thumb.jpg", views.viewer_required(images.thumbnail),
         name="image_thumbnail"),
]
