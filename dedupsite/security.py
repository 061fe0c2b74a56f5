"""Security headers and a lockout after repeated failed logins."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.exceptions import PermissionDenied
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse

from dedupsite import counters

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)


class SecurityHeadersMiddleware:
    """Content-Security-Policy (scripts only from this site, none inline)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", CSP)
        response.setdefault("Cross-Origin-Opener-Policy", "same-origin")
        response.setdefault("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
        return response


def _client_ip(request: HttpRequest | None) -> str:
    if request is None:
        return "-"
    return str(request.META.get("REMOTE_ADDR", "-"))


def _counter(username: str, request: HttpRequest | None) -> tuple[str, ...]:
    return ("login", "fail", username.lower()[:150], _client_ip(request))


class ThrottledModelBackend(ModelBackend):
    """Refuses a username from an address after LOGIN_FAILURE_LIMIT failures, for a while."""

    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> Any:
        failures = counters.count(*_counter(username, request)) if username else 0
        if failures >= settings.LOGIN_FAILURE_LIMIT:
            raise PermissionDenied("too many failed logins; try again later")
        return super().authenticate(request, username=username, password=password, **kwargs)


@receiver(user_login_failed)
def _count_failure(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None,
                   **kwargs: Any) -> None:
    username = credentials.get("username")
    if username:
        counters.hit(*_counter(username, request), expire_s=settings.LOGIN_LOCKOUT_SECONDS)


@receiver(user_logged_in)
def _reset_failures(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    counters.reset(*_counter(user.get_username(), request))
