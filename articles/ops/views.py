"""``GET /metrics`` for Prometheus, guarded as the design says: with ``METRICS_TOKEN``
set, only a caller sending it as a bearer token; without it, only loopback callers
(the client address after ``TRUSTED_PROXIES``; a request a proxy forwarded that
TRUSTED_PROXIES does not account for is refused, since its REMOTE_ADDR is the proxy's).
The text is the classic exposition format (0.0.4), which every Prometheus reads."""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.parser import text_string_to_metric_families

from articles.ops import exporter
from dedupsite.security import client_ip


def _refused(status: int, code: str, message: str) -> JsonResponse:
    response = JsonResponse({"error": {"code": code, "message": message, "details": {}}},
                            status=status)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
    return response


def allowed(request: HttpRequest) -> tuple[bool, JsonResponse | None]:
    token = settings.METRICS_TOKEN
    if token:
        header = request.headers.get("Authorization", "")
        sent = header[7:].strip() if header.startswith("Bearer ") else ""
        if sent and hmac.compare_digest(sent.encode(), token.encode()):
            return True, None
        return False, _refused(401, "unauthorized",
                               "send METRICS_TOKEN as 'Authorization: Bearer <token>'")
    forwarded = "HTTP_X_FORWARDED_FOR" in request.META or "HTTP_FORWARDED" in request.META
    if forwarded and settings.TRUSTED_PROXIES == 0:
        return False, _refused(403, "forbidden", "a proxy forwarded this request and "
                               "TRUSTED_PROXIES is 0: set METRICS_TOKEN or TRUSTED_PROXIES")
    try:
        loopback = ipaddress.ip_address(client_ip(request)).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        return False, _refused(403, "forbidden", "/metrics answers loopback callers only "
                               "while METRICS_TOKEN is unset")
    return True, None


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    ok, refusal = allowed(request)
    if not ok:
        assert refusal is not None
        return refusal
    response = HttpResponse(exporter.render(), content_type=CONTENT_TYPE_PLAIN_0_0_4)
    response["Cache-Control"] = "no-store"
    return response


# ---- the operator's page ------------------------------------------------------------------

Samples = dict[str, list[tuple[dict[str, str], float]]]


def snapshot() -> Samples:
    """What /metrics answers now, parsed: sample name -> [(labels, value)]."""
    samples: Samples = {}
    for family in text_string_to_metric_families(exporter.render().decode()):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return samples


def _one(samples: Samples, name: str, **labels: str) -> float | None:
    for have, val in samples.get(name, []):
        if all(have.get(k) == v for k, v in labels.items()):
            return val
    return None


def _by(samples: Samples, name: str, label: str) -> list[tuple[str, float]]:
    return sorted((have.get(label, ""), val) for have, val in samples.get(name, []))


def quantile(samples: Samples, name: str, q: float, **labels: str) -> float | None:
    """The bucket bound under which ``q`` of a histogram's observations fall (an upper
    estimate, as histogram_quantile's is an interpolation within that bucket)."""
    buckets = sorted((float(have["le"]), val) for have, val in samples.get(f"{name}_bucket", [])
                     if all(have.get(k) == v for k, v in labels.items()))
    if not buckets or buckets[-1][1] == 0:
        return None
    total = buckets[-1][1]
    return next(bound for bound, count in buckets if count >= q * total)


def checks(samples: Samples) -> list[dict[str, Any]]:
    """The alerts' conditions as they stand now (deploy/prometheus/alerts.yml says how
    long each must last before it pages)."""
    out = []

    def check(ok: bool, label: str, detail: str) -> None:
        out.append({"ok": ok, "label": label, "detail": detail})

    for store, up in _by(samples, "dedupsite_up", "store"):
        check(up == 1, _("Store %(store)s") % {"store": store},
              _("answers") if up == 1 else _("does not answer"))
    workers = _one(samples, "dedupsite_workers", queue="ingest")
    check(bool(workers), _("Workers on the ingest queue"),
          _("%(n)s live") % {"n": int(workers or 0)})
    waited = _one(samples, "dedupsite_articles_oldest_queued_age_seconds")
    if waited is not None:
        check(waited <= 600, _("Oldest queued article"),
              _("waited %(s)s s (alert above 600 s)") % {"s": round(waited)})
    outbox = _one(samples, "dedupsite_outbox_oldest_age_seconds")
    if outbox is not None:
        check(outbox <= 300, _("Representative outbox"),
              _("oldest change %(s)s s old (alert above 300 s)") % {"s": round(outbox)})
    ready = _one(samples, "dedupsite_index_ready")
    rebuilding = _one(samples, "dedupsite_index_rebuilding")
    if ready is not None:
        check(ready == 1 or rebuilding == 1, _("Index"),
              _("ready") if ready == 1 else (_("rebuilding") if rebuilding == 1
                                             else _("missing, no rebuild running")))
    failed = sum(val for _q, val in _by(samples, "dedupsite_queue_failed_jobs", "queue"))
    check(failed == 0, _("Failed jobs"), _("%(n)s in the failed registries") % {"n": int(failed)})
    return out


@require_GET
def operations(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not request.user.is_staff:
        raise PermissionDenied
    samples = snapshot()
    queues = [{"name": name,
               "depth": int(depth),
               "oldest": round(_one(samples, "dedupsite_queue_oldest_age_seconds",
                                    queue=name) or 0),
               "workers": int(_one(samples, "dedupsite_workers", queue=name) or 0),
               "failed": int(_one(samples, "dedupsite_queue_failed_jobs", queue=name) or 0),
               "scheduled": int(_one(samples, "dedupsite_queue_scheduled_jobs",
                                     queue=name) or 0),
               "wait_p95": quantile(samples, "dedupsite_job_wait_seconds", 0.95, queue=name)}
              for name, depth in _by(samples, "dedupsite_queue_depth", "queue")]
    gauges = [(_("Articles queued"), _one(samples, "dedupsite_articles_queued")),
              (_("Articles failed"), _one(samples, "dedupsite_articles_failed")),
              (_("Outbox pending"), _one(samples, "dedupsite_outbox_pending")),
              (_("Articles in the index window"), _one(samples, "dedupsite_index_articles")),
              (_("Index Redis memory (MB)"),
               None if (mem := _one(samples, "dedupsite_index_redis_memory_bytes")) is None
               else round(mem / 2**20, 1)),
              (_("Review queue"), _one(samples, "dedupsite_review_queue_size"))]
    counters = [
        (_("Received, by kind"), _by(samples, "dedupsite_articles_received_total", "kind")),
        (_("Processed, by reason"), _by(samples, "dedupsite_articles_processed_total",
                                        "reason")),
        (_("Failures, by stage"), _by(samples, "dedupsite_article_failures_total", "stage")),
        (_("Editor decisions, by kind"),
         _by(samples, "dedupsite_editor_decisions_total", "kind")),
        (_("Watchdog repairs, by kind"),
         _by(samples, "dedupsite_watchdog_recoveries_total", "kind")),
    ]
    per_article = quantile(samples, "dedupsite_processing_seconds", 0.95, scope="article")
    return render(request, "ops/operations.html", {
        "checks": checks(samples), "queues": queues, "gauges": gauges,
        "counters": counters, "per_article_p95": per_article,
        "batch_p95": quantile(samples, "dedupsite_processing_seconds", 0.95, scope="batch"),
    })
