"""What ``GET /metrics`` answers: the recorded events (``dedupsite.metrics``, counted in
Redis by every process) and gauges read from the stores at scrape time.

A store that is down does not fail the scrape: its gauges are left out and
``dedupsite_up{store=...}`` says 0, which is what the alerts watch
(deploy/prometheus/alerts.yml). docs/operations.md lists every metric.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import redis
from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from redis.cluster import RedisClusterException
from rq.worker_registration import get_keys

from dedupsite import metrics, redis_store

log = logging.getLogger(__name__)

QUEUES = tuple(settings.RQ_QUEUES)
STORES = ("database", "redis", "index_redis", "representatives")


def _gauge(name: str, help_text: str, value: float | None = None,
           labels: tuple[str, ...] = ()) -> GaugeMetricFamily:
    if labels:
        return GaugeMetricFamily(name, help_text, labels=list(labels))
    return GaugeMetricFamily(name, help_text, value=value)


class EventCollector:
    """The counters and histograms of ``dedupsite.metrics``, as Redis holds them."""

    def __init__(self, up: dict[str, bool]) -> None:
        self.up = up

    def collect(self) -> Iterator[Metric]:
        try:
            raw = {m.name: metrics.read(m) for m in metrics.METRICS.values()}
        except (redis.RedisError, OSError):
            self.up["redis"] = False
            return
        for metric in metrics.METRICS.values():
            labels = list(metric.labels)
            # prometheus_client adds the _total suffix of a counter itself
            if metric.kind == "counter":
                family: Any = CounterMetricFamily(metric.name.removesuffix("_total"),
                                                  metric.help, labels=labels)
                for values, total in metrics.series(metric, raw[metric.name]):
                    family.add_metric(list(values), total)
            else:
                family = HistogramMetricFamily(metric.name, metric.help, labels=labels)
                bounds = [*map(str, metric.buckets), "+Inf"]
                for values, hist in metrics.series(metric, raw[metric.name]):
                    assert isinstance(hist, tuple)
                    cumulative, total, _count = hist
                    family.add_metric(list(values), list(zip(bounds, cumulative, strict=True)),
                                      total)
            yield family


def _live_workers(queue: Any) -> int:
    """Workers registered on ``queue`` whose key still exists: a killed worker stays in
    RQ's registry until a maintenance pass, but its key expires (worker_ttl + 60 s after
    its last heartbeat; dedup_worker's ttl is 60 s, so within two minutes)."""
    keys = sorted(get_keys(queue=queue))
    if not keys:
        return 0
    pipe = queue.connection.pipeline(transaction=False)
    for key in keys:
        pipe.exists(key)
    return sum(bool(alive) for alive in pipe.execute())


class StateCollector:
    """Gauges of the moment: queues, workers, articles waiting, outbox, index, review."""

    def __init__(self, up: dict[str, bool]) -> None:
        self.up = up
        self.started = time.monotonic()

    def collect(self) -> Iterator[Metric]:
        parts: list[tuple[str, Callable[[], Iterator[Metric]]]] = [
            ("redis", self._queues), ("database", self._articles),
            ("database", self._outbox), ("index_redis", self._index),
            ("database", self._review), ("database", self._webhooks),
        ]
        for store, part in parts:
            try:
                yield from list(part())
            except (redis.RedisError, RedisClusterException, OSError) as exc:
                log.warning("metrics: %s unavailable: %s", store, exc)
                self.up["redis" if store == "redis" else store] = False
            except DatabaseError as exc:
                log.warning("metrics: the database is unavailable: %s", exc)
                self.up["database"] = False
        yield from self._stores()

    def _queues(self) -> Iterator[Metric]:
        depth = _gauge("dedupsite_queue_depth", "Jobs waiting in each RQ queue.",
                       labels=("queue",))
        oldest = _gauge("dedupsite_queue_oldest_age_seconds",
                        "Age of the oldest job waiting in each queue (0 when empty).",
                        labels=("queue",))
        failed = _gauge("dedupsite_queue_failed_jobs",
                        "Jobs in each queue's failed registry (out of retries).",
                        labels=("queue",))
        scheduled = _gauge("dedupsite_queue_scheduled_jobs",
                           "Jobs waiting for a retry's back-off or a delayed push.",
                           labels=("queue",))
        workers = _gauge("dedupsite_workers", "RQ workers listening on each queue.",
                         labels=("queue",))
        now = datetime.now(UTC)
        for name in QUEUES:
            queue = redis_store.queue(name)
            depth.add_metric([name], queue.count)
            first = queue.get_jobs(0, 1)
            age = 0.0
            if first and first[0].enqueued_at is not None:
                age = max(0.0, (now - first[0].enqueued_at.replace(tzinfo=UTC)).total_seconds())
            oldest.add_metric([name], age)
            failed.add_metric([name], queue.failed_job_registry.count)
            scheduled.add_metric([name], queue.scheduled_job_registry.count)
            workers.add_metric([name], _live_workers(queue))
        yield from (depth, oldest, failed, scheduled, workers)

    def _articles(self) -> Iterator[Metric]:
        from articles.models import Article, ArticleStatus

        queued = Article.objects.filter(status=ArticleStatus.QUEUED)
        first = queued.order_by("id").values_list("received_at", flat=True).first()
        yield _gauge("dedupsite_articles_queued",
                     "Articles stored and waiting for their docId.", queued.count())
        yield _gauge("dedupsite_articles_oldest_queued_age_seconds",
                     "How long the oldest waiting article has waited (0 when none).",
                     (timezone.now() - first).total_seconds() if first else 0.0)
        yield _gauge("dedupsite_articles_failed",
                     "Articles whose processing gave up (status failed).",
                     Article.objects.filter(status=ArticleStatus.FAILED).count())

    def _outbox(self) -> Iterator[Metric]:
        from articles.representatives import outbox

        lag = outbox.outbox_lag()
        yield _gauge("dedupsite_outbox_pending",
                     "Representative changes not yet written to the store (HBase).",
                     lag["pending"])
        yield _gauge("dedupsite_outbox_oldest_age_seconds",
                     "Age of the oldest pending representative change (0 when none).",
                     lag["oldestSeconds"])

    def _webhooks(self) -> Iterator[Metric]:
        from articles.changes import log as changes
        from articles.models import Webhook, WebhookStatus

        newest = changes.last_cursor()
        hooks = list(Webhook.objects.values_list("status", "delivered"))
        yield _gauge("dedupsite_webhooks_dead",
                     "Webhooks whose deliveries stopped after too many failures.",
                     sum(status == WebhookStatus.DEAD for status, _d in hooks))
        yield _gauge("dedupsite_webhook_lag_changes",
                     "Changes of the log the furthest-behind active webhook has not "
                     "acknowledged (0 when none).",
                     max((newest - d for st, d in hooks if st == WebhookStatus.ACTIVE),
                         default=0))

    def _index(self) -> Iterator[Metric]:
        from articles.index import reindex, window
        from articles.models import Article, ArticleStatus, IndexState

        state = IndexState.load()
        live = reindex.active_generation(state.generation)
        yield _gauge("dedupsite_index_ready",
                     "1 when Redis holds the database's index, 0 when it must be rebuilt "
                     "(batches wait until it is).", 1.0 if live else 0.0)
        yield _gauge("dedupsite_index_rebuilding",
                     "1 while a reindex (a settings change or rebuild_index) runs.",
                     1.0 if state.reindex_status == "running" else 0.0)
        yield _gauge("dedupsite_index_articles",
                     "Processed articles inside the index window (what lookups search).",
                     Article.objects.filter(status=ArticleStatus.DONE,
                                            id__gte=window.floor()).count())
        client = redis_store.index_client()
        info = client.info("memory")
        if "used_memory" not in info:  # a cluster: one answer per node
            used = sum(int(node.get("used_memory", 0)) for node in info.values())
        else:
            used = int(info["used_memory"])
        yield _gauge("dedupsite_index_redis_memory_bytes",
                     "Memory used by the index Redis (all nodes of a cluster); the queue "
                     "Redis when the index shares it.", used)

    def _review(self) -> Iterator[Metric]:
        from articles.editor import review

        yield _gauge("dedupsite_review_queue_size",
                     "Automatic matches waiting for an editor's look (the desk's queue).",
                     review.review_queue(review.rules()).count())

    def _stores(self) -> Iterator[Metric]:
        from articles.representatives import outbox
        from articles.representatives.stores import StoreUnavailable

        if self.up["database"]:
            try:
                from django.db import connection

                with connection.cursor() as cursor:
                    cursor.execute("SELECT 1")
            except DatabaseError:
                self.up["database"] = False
        if self.up["redis"]:
            try:
                redis_store.client().ping()
            except (redis.RedisError, OSError):
                self.up["redis"] = False
        try:
            outbox.store().ping()
        except StoreUnavailable:
            self.up["representatives"] = False
        up = _gauge("dedupsite_up", "1 when a store answers, by store: database, redis "
                    "(queues, locks, counters), index_redis, representatives (HBase or the "
                    "local store).", labels=("store",))
        for store in STORES:
            up.add_metric([store], 1.0 if self.up[store] else 0.0)
        yield up
        yield _gauge("dedupsite_scrape_seconds", "Time this answer took to compute.",
                     time.monotonic() - self.started)


def render() -> bytes:
    """The Prometheus text of this moment."""
    up = dict.fromkeys(STORES, True)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(EventCollector(up))
    registry.register(StateCollector(up))
    return generate_latest(registry)
