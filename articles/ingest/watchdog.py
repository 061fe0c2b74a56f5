"""A worker's watchdog thread: recovery that must not wait for new traffic.

Every WATCHDOG_SECONDS it (1) rebuilds the Redis index if Redis lost it (an index
Redis of its own, or a node of a Redis Cluster, by its markers: articles/index/markers.py),
(2) re-enqueues articles left queued (their job lost with Redis, or never
run), (3) re-triggers delivery of pending representative pushes, (4) takes a step
of the index window's expiry pass and (5) clears a few batches of old bodies, when
the window and body retention are on. Several
workers running it at once is harmless: every step is idempotent; a Redis
lock keeps it to one worker per period.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

log = logging.getLogger(__name__)


def tick() -> dict[str, int]:
    from articles.index import markers, reindex, window
    from articles.ingest.intake import requeue_stale
    from articles.models import OutboxStatus, RepresentativeOutbox
    from articles.representatives import outbox, retention
    from dedupsite import redis_store

    period = settings.WATCHDOG_SECONDS
    client = redis_store.client()
    if not client.set(redis_store.key("watchdog"), 1, nx=True, ex=max(1, int(period * 0.9))):
        return {}
    report = {"rebuilt": 0, "requeued": 0, "pushes": 0, "expired": 0, "bodies_cleared": 0}
    live = reindex.active_generation()
    if live is not None and not markers.present(live):  # an index Redis that lost it
        reindex.forget_generation(live)
    if reindex.active_generation() is None:
        reindex.ensure_index()
        report["rebuilt"] = 1
    report["requeued"] = requeue_stale(older_than_seconds=max(30.0, period))
    # Rows pending longer than a push delay plus a margin: their job is lost or stuck
    # (with the RQ scheduler of a dead worker, which others take over only after
    # minutes); enqueue one at once. A second delivery is harmless (versioned).
    overdue = timezone.now() - timedelta(seconds=5 + settings.PUSH_DELAY_MS / 1000)
    if RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING,
                                           created_at__lt=overdue).exists():
        outbox.enqueue_push(now=True)
        report["pushes"] = 1
    # The index's time window: a step of the expiry pass (articles/index/window.py).
    generation = reindex.active_generation()
    if generation is not None:
        dropped = window.expire(generation, reindex.namespaces(generation),
                                settings.INDEX_EXPIRY_KEYS_PER_TICK)
        report["expired"] = sum(n for name, n in dropped.items() if name != "pass_complete")
    # Body retention, a few small batches a tick (articles/representatives/retention.py).
    report["bodies_cleared"] = retention.clear_old_bodies(batches=4).cleared
    if report["rebuilt"] or report["requeued"] or report["pushes"]:
        log.warning("watchdog: %s", report)
    return report


def run_forever(stop: threading.Event) -> None:
    while not stop.wait(settings.WATCHDOG_SECONDS):
        try:
            tick()
        except Exception:  # keep watching: Redis or MySQL may be down right now
            log.exception("watchdog tick failed")
        finally:
            close_old_connections()


def start() -> threading.Event:
    stop = threading.Event()
    threading.Thread(target=run_forever, args=(stop,), name="dedup-watchdog",
                     daemon=True).start()
    return stop
