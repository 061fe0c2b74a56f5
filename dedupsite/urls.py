from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.views import LoginView, redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.urls import include, path
from django.views.generic.base import RedirectView
from django_rq.urls import get_admin_urlpatterns, get_api_urlpatterns

from articles.api import seed
from articles.api.endpoints import api
from articles.ops import views as ops_views
from dedupsite import counters
from dedupsite.security import (
    LockoutAwareAdminAuthenticationForm,
    LockoutAwareAuthenticationForm,
    client_ip,
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


def mail_reset(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """The password-reset pages exist only when mail can be sent (``EMAIL_HOST``), and
    an address may ask for a reset ``PASSWORD_RESET_LIMIT`` times an hour."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not settings.EMAIL_HOST:
            raise Http404("password reset by mail is not configured")
        if request.method == "POST" and counters.hit(
                "pwreset", client_ip(request), expire_s=3600, sliding=False
        ) > settings.PASSWORD_RESET_LIMIT:
            return HttpResponse("Too many password resets from this address; try later.",
                                status=429, content_type="text/plain; charset=utf-8")
        return view(request, *args, **kwargs)

    return wrapped


admin.site.login_form = LockoutAwareAdminAuthenticationForm


def _superusers_only(patterns: list[Any]) -> list[Any]:
    """django-rq's JSON views (stats, metrics) let staff or an RQ token in: superusers
    only here as well (no RQ token is configured)."""
    for pattern in patterns:
        pattern.callback = superuser_required(pattern.callback)
    return patterns


rq_patterns = (_superusers_only(get_api_urlpatterns())
               + get_admin_urlpatterns(view_wrapper=superuser_required))

urlpatterns = [
    path("api/", api.urls),
    path("docId/getDocId", seed.get_doc_id, name="seed_get_doc_id"),
    path("accounts/login/", LoginView.as_view(authentication_form=LockoutAwareAuthenticationForm),
         name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password_change/", auth_views.PasswordChangeView.as_view(),
         name="password_change"),
    path("accounts/password_change/done/", auth_views.PasswordChangeDoneView.as_view(),
         name="password_change_done"),
    path("accounts/password_reset/", mail_reset(auth_views.PasswordResetView.as_view()),
         name="password_reset"),
    path("accounts/password_reset/done/",
         mail_reset(auth_views.PasswordResetDoneView.as_view()), name="password_reset_done"),
    path("accounts/reset/<uidb64>/<token>/",
         mail_reset(auth_views.PasswordResetConfirmView.as_view()),
         name="password_reset_confirm"),
    path("accounts/reset/done/", mail_reset(auth_views.PasswordResetCompleteView.as_view()),
         name="password_reset_complete"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
    path("django-rq/", include((rq_patterns, "django_rq"))),
    path("metrics", ops_views.metrics, name="metrics"),
    # browsers ask for /favicon.ico whatever the page says: the same icon
    path("favicon.ico", RedirectView.as_view(url=f"{settings.STATIC_URL}favicon.svg",
                                             permanent=True)),
    path("ops/", ops_views.operations, name="operations"),
    path("", include("articles.urls")),
]
