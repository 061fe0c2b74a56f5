"""Security headers and a lockout after repeated failed logins."""

from __future__ import annotations

import ipaddress
import unicodedata
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_logged_in
from django.core.exceptions import PermissionDenied, ValidationError
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

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


def from_trusted_proxy(address: str) -> bool:
    """Whether ``address`` (a REMOTE_ADDR, or an X-Forwarded-For entry further in) is
    one of TRUSTED_PROXY_IPS."""
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip in network for network in settings.TRUSTED_PROXY_IPS)


def client_ip(request: HttpRequest | None) -> str:
    """The client's address: REMOTE_ADDR, or with TRUSTED_PROXIES = N (the number of
    proxies in front of the web server, each appending to X-Forwarded-For) the address
    the outermost trusted proxy saw — read from the right, one entry per proxy, and
    only while the address at hand is one of TRUSTED_PROXY_IPS: a caller that reaches
    the web server without the proxy is its own REMOTE_ADDR whatever it sends. Entries
    a client adds itself stand further left and are never read."""
    if request is None:
        return "-"
    address = str(request.META.get("REMOTE_ADDR", "-"))
    chain = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
             if part.strip()]
    for _proxy in range(settings.TRUSTED_PROXIES):
        if not chain or not from_trusted_proxy(address):
            break
        address = chain.pop()[:64]
    return address


class UntrustedProxyHeadersMiddleware:
    """Drops X-Forwarded-For and X-Forwarded-Proto from a request that did not come from
    one of TRUSTED_PROXY_IPS (with TRUSTED_PROXIES set): nobody else says which address
    the client has or that it came over HTTPS (SECURE_PROXY_SSL_HEADER)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if settings.TRUSTED_PROXIES > 0 and not from_trusted_proxy(
                str(request.META.get("REMOTE_ADDR", ""))):
            for header in ("HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO", "HTTP_FORWARDED"):
                request.META.pop(header, None)
        return self.get_response(request)


def account_name(username: str) -> str:
    """The account a username names as the database compares it: NFKC, accents removed,
    case folded ("vîctim", "VICTIM" and "victim" are one account on MariaDB's
    accent-insensitive collation, so they share one failure count)."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", username))
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return plain.casefold().strip()[:150]


def _account(username: str) -> str:
    """The account a username signs in to, compared as the database compares it: the
    user's own name when the database finds one (``utf8mb4_general_ci`` takes ``vıctim``
    and ``victim`` for one name, which no normalisation in Python reproduces), else the
    name itself; then :func:`account_name`."""
    from django.contrib.auth import get_user_model

    model = get_user_model()
    found = (model._default_manager.filter(**{model.USERNAME_FIELD: username[:150]})
             .values_list(model.USERNAME_FIELD, flat=True).first())
    return account_name(found if found is not None else username)


def _pair(username: str, request: HttpRequest | None) -> tuple[str, ...]:
    return ("login", "fail", _account(username), client_ip(request))


def _address(request: HttpRequest | None) -> tuple[str, ...]:
    return ("login", "fail-ip", client_ip(request))


def _wait(request: HttpRequest | None) -> tuple[str, ...]:
    return ("login", "wait", client_ip(request))


def address_delay(failures: int) -> int:
    """Seconds an address waits before its next try once it failed ``failures`` times
    (LOGIN_ADDRESS_LIMIT or more) for any accounts: 1, 2, 4... up to
    LOGIN_LOCKOUT_SECONDS. A slowdown rather than a lock: everybody behind one NAT or a
    proxy with TRUSTED_PROXIES unset shares the address."""
    excess = max(0, failures - settings.LOGIN_ADDRESS_LIMIT)
    return int(min(settings.LOGIN_LOCKOUT_SECONDS, 2 ** min(excess, 30)))


def lockout_seconds(username: str, request: HttpRequest | None) -> int:
    """Seconds left before this account may be tried from this address (0: now).
    Locked: the address failed LOGIN_FAILURE_LIMIT times for the account within
    LOGIN_LOCKOUT_SECONDS (only that address: a stranger elsewhere cannot lock a real
    user out). Slowed: the address failed LOGIN_ADDRESS_LIMIT times for any accounts,
    and its last try is less than :func:`address_delay` ago."""
    if not username:
        return 0
    return _seconds_left(_pair(username, request), request)


def _seconds_left(pair: tuple[str, ...], request: HttpRequest | None) -> int:
    if counters.count(*pair) >= settings.LOGIN_FAILURE_LIMIT:
        return max(1, counters.ttl(*pair))
    if counters.count(*_address(request)) >= settings.LOGIN_ADDRESS_LIMIT:
        return counters.ttl(*_wait(request))
    return 0


class ThrottledModelBackend(ModelBackend):
    """Refuses a try while :func:`lockout_seconds` says so, and counts every try
    *before* its password is checked: each try takes a number from an atomic counter
    (INCR), and only those within the account's limit are checked, so concurrent wrong
    passwords cannot all be checked before the first failure is counted. Past the
    address's limit one try at a time is let through (SET NX), each failure doubling
    the wait. A try that succeeds gives its address number back (the account's count
    is reset)."""

    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> Any:
        if not username:
            return super().authenticate(request, username=username, password=password,
                                        **kwargs)
        pair, address = _pair(username, request), _address(request)  # one user lookup
        if _seconds_left(pair, request):
            _refuse(request)
        window = settings.LOGIN_LOCKOUT_SECONDS
        tries = counters.hit(*pair, expire_s=window, sliding=False)
        guesses = counters.hit(*address, expire_s=window, sliding=False)
        if tries > settings.LOGIN_FAILURE_LIMIT or (
                guesses > settings.LOGIN_ADDRESS_LIMIT
                and not counters.claim(*_wait(request), expire_s=1)):
            # lost the race to tries already being checked: not checked, not counted
            counters.take_back(*pair)
            counters.take_back(*address)
            _refuse(request)
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None:
            counters.take_back(*address)
        elif guesses >= settings.LOGIN_ADDRESS_LIMIT:
            counters.hold(*_wait(request), expire_s=address_delay(guesses))
        return user


#: set on a request whose sign-in the backend refused unchecked (Django's authenticate()
#: turns the PermissionDenied into "no user"; the form tells the two apart by this)
REFUSED_ATTRIBUTE = "dedupsite_login_refused"


def _refuse(request: HttpRequest | None) -> None:
    if request is not None:
        setattr(request, REFUSED_ATTRIBUTE, True)
    raise PermissionDenied("temporarily locked after too many failed logins")


@receiver(user_logged_in)
def _reset_failures(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    counters.reset(*_pair(user.get_username(), request))


class LockoutAwareAuthenticationForm(AuthenticationForm):
    """The login form, saying "temporarily locked" (and for how long) during a lock
    instead of "wrong password" — also to a try that lost the race to the tries being
    checked (the backend refused it unchecked): only a checked password is ever called
    wrong."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username") or ""
        if lockout_seconds(username, self.request):
            raise self._locked(username)
        try:
            return super().clean()
        except ValidationError:
            if getattr(self.request, REFUSED_ATTRIBUTE, False):
                raise self._locked(username) from None
            raise

    def _locked(self, username: str) -> ValidationError:
        # a lost race may end before the lock begins: "1 minute" then
        minutes = max(1, -(-lockout_seconds(username, self.request) // 60))
        return ValidationError(
            _("Too many failed sign-ins: signing in is temporarily locked. Try again in "
              "%(minutes)d minutes.") % {"minutes": minutes}, code="locked")


class LockoutAwareAdminAuthenticationForm(LockoutAwareAuthenticationForm,
                                          AdminAuthenticationForm):
    """The admin's login form (staff only), saying "temporarily locked" the same way."""
