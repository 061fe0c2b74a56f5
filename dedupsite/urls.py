from django.contrib import admin
from django.urls import include, path

from articles.api import seed
from articles.api.endpoints import api

urlpatterns = [
    path("api/", api.urls),
    path("docId/getDocId", seed.get_doc_id, name="seed_get_doc_id"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
    path("django-rq/", include("django_rq.urls")),
    path("", include("articles.urls")),
]
