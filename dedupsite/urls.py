from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import admin
from django.contrib.auth.views import LoginView, redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from django_rq.urls import get_admin_urlpatterns, get_api_urlpatterns

from articles.api import seed
from articles.api.endpoints import api
from dedupsite.security import (
    LockoutAwareAdminAuthenticationForm,
    LockoutAwareAuthenticationForm,
)


def superuser_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """django-rq's pages can empty queues and delete jobs: superusers only (django-rq
    itself lets any staff member in)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not (request.user.is_active and request.user.is_superuser):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapped


admin.site.login_form = LockoutAwareAdminAuthenticationForm

rq_patterns = get_api_urlpatterns() + get_admin_urlpatterns(view_wrapper=superuser_required)

urlpatterns = [
    path("api/", api.urls),
    path("docId/getDocId", seed.get_doc_id, name="seed_get_doc_id"),
    path("accounts/login/", LoginView.as_view(authentication_form=LockoutAwareAuthenticationForm),
         name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
    path("django-rq/", include((rq_patterns, "django_rq"))),
    path("", include("articles.urls")),
]
