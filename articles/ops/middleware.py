"""Counts and times every HTTP answer (``dedupsite_http_requests_total``,
``dedupsite_http_request_seconds``) by area and status class: a few series, whatever
the URLs crawlers and scanners send."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from dedupsite import metrics

#: First path segment -> area (anything else: "desk" for the editors' pages, "other").
AREAS = {"api": "api", "docId": "seed", "admin": "admin", "django-rq": "admin",
         "metrics": "metrics", "static": "static", "accounts": "desk", "i18n": "desk"}
DESK = {"", "clusters", "review", "bulk", "decisions", "nav", "stats", "ops"}


def area(path: str) -> str:
    first = path.lstrip("/").split("/", 1)[0]
    return AREAS.get(first) or ("desk" if first in DESK else "other")


class RequestMetricsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.monotonic()
        response = self.get_response(request)
        where = area(request.path)
        if where != "static":
            with metrics.record() as m:
                m.inc("dedupsite_http_requests_total", area=where,
                      status=f"{response.status_code // 100}xx")
                m.observe("dedupsite_http_request_seconds", time.monotonic() - started,
                          area=where)
        return response
