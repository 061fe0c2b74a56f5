"""Event metrics kept in the queue Redis, so that every process counts into one place.

Web workers (gunicorn, several processes), RQ workers (several, on several machines,
forking or not) and management commands all record events here; ``GET /metrics``
(``articles/ops/exporter.py``) reads them back on each scrape and adds the gauges it
computes then (queue depth, outbox lag, index size...). Nothing is kept in process
memory, so a process that dies (a killed worker, a forked job) loses no count, and any
web server answers the whole system's totals. docs/operations.md lists every metric.

Layout: one Redis hash per metric, ``{prefix}:metrics:{name}``; a field per label set
(the label values joined by U+001F); a histogram adds one field per bucket, ``sum``
and ``count`` (suffixes after U+001E). One pipeline per :func:`record` call.

Recording never fails its caller: when Redis is down the event is dropped and logged
(at most once a minute per process); the article, job or decision goes on.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import redis

from dedupsite import redis_store

log = logging.getLogger(__name__)

LABEL_SEP = "\x1f"
PART_SEP = "\x1e"

#: Buckets (seconds) of the latency histograms: 5 ms to 10 min.
SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
           120.0, 300.0, 600.0)


@dataclass(frozen=True)
class Metric:
    name: str
    kind: str  # "counter" or "histogram"
    help: str
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] = SECONDS

    def key(self) -> str:
        return redis_store.key("metrics", self.name)


_METRICS = (
    Metric("dedupsite_articles_received_total", "counter",
           "Articles accepted by the API or the seed call, by kind: new (a nid never "
           "seen), changed (a known nid with another text, processed again), unchanged "
           "(the same payload again), updated (side fields only), pinned (a changed "
           "text an editor pinned: kept as it was), refused (another key's article).", ("kind",)),
    Metric("dedupsite_articles_processed_total", "counter",
           "Articles given their docId, by the reason: url, title, content (joined a "
           "story) or new (a docId of their own).", ("reason",)),
    Metric("dedupsite_article_failures_total", "counter",
           "Articles hit by a failure, by stage: intake (not stored: the client got a "
           "503), enqueue (stored, but the queue was unreachable: the watchdog "
           "enqueues it again), process (an attempt raised; it is retried), gave_up "
           "(out of retries: status failed).", ("stage",)),
    Metric("dedupsite_processing_seconds", "histogram",
           "Time to decide and save, per batch (scope=batch) and its share per article "
           "(scope=article).", ("scope",)),
    Metric("dedupsite_job_wait_seconds", "histogram",
           "Time an RQ job waited from enqueue to start, by queue.", ("queue",)),
    Metric("dedupsite_job_run_seconds", "histogram",
           "Time an RQ job ran, by queue and outcome (ok, failed).", ("queue", "outcome")),
    Metric("dedupsite_representative_pushes_total", "counter",
           "Representative store (HBase) writes by outcome: ok, failed (retried).",
           ("outcome",)),
    Metric("dedupsite_editor_decisions_total", "counter",
           "Editor decisions by kind (confirm, split, merge, move, representative, "
           "undo...), hand or bulk.", ("kind", "via")),
    Metric("dedupsite_watchdog_ticks_total", "counter",
           "Watchdog passes (one worker's, every WATCHDOG_SECONDS): flat means no worker "
           "watches."),
    Metric("dedupsite_watchdog_recoveries_total", "counter",
           "What the watchdog repaired, by kind: rebuilt (the index), requeued (articles "
           "whose job was lost), pushes (overdue representative pushes), bulk_resumed.",
           ("kind",)),
    Metric("dedupsite_images_fetched_total", "counter",
           "Article pictures handled by the image jobs, by outcome: read, known (the same "
           "URL read before), or the refusal (unreachable, timeout, too_large, not_an_image, "
           "decompression_bomb, http_status, job_failed...).", ("outcome",)),
    Metric("dedupsite_webhook_deliveries_total", "counter",
           "Batches of changes POSTed to webhooks, by outcome: delivered (a 2xx answer), "
           "failed (retried after a back-off), dead (out of tries: redeliver in the "
           "admin).", ("outcome",)),
    Metric("dedupsite_webhook_seconds", "histogram",
           "Time a webhook took to answer a batch of changes (or to fail)."),
    Metric("dedupsite_http_requests_total", "counter",
           "HTTP requests answered, by area (api, seed, desk, admin, metrics, other) and "
           "status class (2xx, 3xx, 4xx, 5xx).", ("area", "status")),
    Metric("dedupsite_http_request_seconds", "histogram",
           "Time to answer an HTTP request, by area.", ("area",)),
)

METRICS: dict[str, Metric] = {m.name: m for m in _METRICS}

_dropped_logged_at = 0.0


@dataclass
class _Batch:
    ops: list[tuple[str, str, float]]

    def inc(self, name: str, amount: float = 1, **labels: object) -> None:
        metric = METRICS[name]
        if metric.kind != "counter":
            raise TypeError(f"{name} is a {metric.kind}")
        if amount:
            self.ops.append((metric.key(), _field(metric, labels), amount))

    def observe(self, name: str, value: float, count: int = 1, **labels: object) -> None:
        """``count`` observations of ``value`` (a batch's per-article share, n times)."""
        metric = METRICS[name]
        if metric.kind != "histogram":
            raise TypeError(f"{name} is a {metric.kind}")
        if count <= 0 or not math.isfinite(value):
            return
        base = _field(metric, labels)
        bucket = next((i for i, le in enumerate(metric.buckets) if value <= le),
                      len(metric.buckets))
        key = metric.key()
        self.ops.append((key, f"{base}{PART_SEP}{bucket}", count))
        self.ops.append((key, f"{base}{PART_SEP}sum", value * count))
        self.ops.append((key, f"{base}{PART_SEP}count", count))


def _field(metric: Metric, labels: dict[str, object]) -> str:
    if set(labels) != set(metric.labels):
        raise ValueError(f"{metric.name} takes labels {metric.labels}, not {tuple(labels)}")
    return LABEL_SEP.join(str(labels[name]).replace(LABEL_SEP, " ") for name in metric.labels)


@contextmanager
def record() -> Iterator[_Batch]:
    """Collect events, then write them in one pipeline::

        with metrics.record() as m:
            m.inc("dedupsite_articles_processed_total", 3, reason="new")
            m.observe("dedupsite_processing_seconds", 0.12, scope="batch")
    """
    batch = _Batch([])
    yield batch
    if batch.ops:
        _write(batch.ops)


def inc(name: str, amount: float = 1, **labels: object) -> None:
    with record() as m:
        m.inc(name, amount, **labels)


def observe(name: str, value: float, count: int = 1, **labels: object) -> None:
    with record() as m:
        m.observe(name, value, count, **labels)


def _write(ops: Sequence[tuple[str, str, float]]) -> None:
    global _dropped_logged_at
    try:
        pipe = redis_store.client().pipeline(transaction=False)
        for key, field, amount in ops:
            if float(amount).is_integer():
                pipe.hincrby(key, field, int(amount))
            else:
                pipe.hincrbyfloat(key, field, amount)
        pipe.execute()
    except (redis.RedisError, OSError) as exc:
        now = time.monotonic()
        if now - _dropped_logged_at > 60:
            _dropped_logged_at = now
            log.warning("metrics: %d event(s) not recorded, Redis unavailable: %s",
                        len(ops), exc)


def read(metric: Metric) -> dict[str, float]:
    """The raw fields of one metric (raises redis.RedisError when Redis is down)."""
    raw = redis_store.client().hgetall(metric.key())
    return {(k.decode() if isinstance(k, bytes) else k): float(v) for k, v in raw.items()}


def series(metric: Metric, raw: dict[str, float]
           ) -> Iterator[tuple[tuple[str, ...], float | tuple[list[float], float, float]]]:
    """Label values and value of each series: a counter's total, or a histogram's
    (cumulative bucket counts, sum, count)."""
    if metric.kind == "counter":
        for field, value in sorted(raw.items()):
            yield tuple(field.split(LABEL_SEP)) if metric.labels else (), value
        return
    grouped: dict[str, dict[str, float]] = {}
    for field, value in raw.items():
        base, _sep, part = field.rpartition(PART_SEP)
        grouped.setdefault(base, {})[part] = value
    for base, parts in sorted(grouped.items()):
        running, cumulative = 0.0, []
        for i in range(len(metric.buckets) + 1):
            running += parts.get(str(i), 0.0)
            cumulative.append(running)
        labels = tuple(base.split(LABEL_SEP)) if metric.labels else ()
        yield labels, (cumulative, parts.get("sum", 0.0), parts.get("count", running))


def reset() -> None:
    """Forget every recorded event (tests)."""
    redis_store.client().delete(*(m.key() for m in _METRICS))
