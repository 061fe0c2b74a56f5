from collections.abc import Callable

from django.http import HttpRequest, HttpResponse


class HtmxMiddleware:
    """Sets request.htmx: True when the request came from htmx (HX-Request header)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.htmx = request.headers.get("HX-Request") == "true"  # type: ignore[attr-defined]
        return self.get_response(request)
