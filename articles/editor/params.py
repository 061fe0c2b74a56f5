"""Query parameters of the editor pages, validated: a bad one is a 400 with a message.

``str.isdigit`` accepts superscripts and other digits ``int`` refuses (``"²"``), and a
number past 64 bits overflows the database's columns: every integer parameter goes
through :func:`whole_number`. :class:`BadParameterMiddleware` turns the error into a
plain-text 400 naming the parameter (never echoing its value).
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.utils.translation import gettext as _

#: The largest id or version a parameter may name (signed 64-bit, as the columns).
MAX_WHOLE_NUMBER = (1 << 63) - 1


class BadParameter(ValueError):
    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


def parse_whole_number(raw: str) -> int | None:
    """``raw`` as a whole number from 0 to :data:`MAX_WHOLE_NUMBER` (ASCII digits only),
    or None."""
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 19:
        return None
    value = int(raw)
    return value if value <= MAX_WHOLE_NUMBER else None


def whole_number(request: HttpRequest, name: str, default: int | None = None) -> int | None:
    """``request.GET[name]`` as :func:`parse_whole_number` reads it; ``default`` when the
    parameter is absent or empty; a :class:`BadParameter` when it is not one."""
    raw = request.GET.get(name, "")
    if raw == "":
        return default
    value = parse_whole_number(raw)
    if value is None:
        raise BadParameter(name, _("%(name)s must be a whole number from 0 to %(max)s.")
                           % {"name": name, "max": MAX_WHOLE_NUMBER})
    return value


def whole_numbers(request: HttpRequest, name: str, limit: int) -> list[int]:
    """``request.GET[name]`` as comma-separated whole numbers (at most ``limit``); a
    :class:`BadParameter` when one is not a whole number or there are too many."""
    raw = request.GET.get(name, "")
    parts = [part for part in raw.split(",") if part]
    values = [parse_whole_number(part) for part in parts]
    if len(parts) > limit or any(value is None for value in values):
        raise BadParameter(name, _("%(name)s must be up to %(limit)s whole numbers, "
                                   "separated by commas.") % {"name": name, "limit": limit})
    return [value for value in values if value is not None]


class BadParameterMiddleware:
    """A :class:`BadParameter` raised by a view -> 400, text/plain, the message alone."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception
                          ) -> HttpResponse | None:
        if isinstance(exception, BadParameter):
            return HttpResponseBadRequest(str(exception), content_type="text/plain; charset=utf-8")
        return None
