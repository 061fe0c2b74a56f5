"""A worker's watchdog thread: recovery that must not wait for new traffic.

Every WATCHDOG_SECONDS it (1) rebuilds the Redis index if Redis lost it (an index
Redis of its own, or a node of a Redis Cluster, by its markers: articles/index/markers.py),
(2) re-enqueues articles left queued (their job lost with Redis, or never
run), (3) re-triggers delivery of pending representative pushes, (4) takes a step
of the index window's expiry pass, (5) clears a few batches of old bodies, when
the window and body retention are on, and (6) records the review queue's size every
QUEUE_SAMPLE_SECONDS (QueueSample: /stats/ draws the queue over time from them), (7)
queues again the bulk decisions whose job was lost (BULK_STALE_SECONDS), (8) drops
the change log's rows older than the admin's ``change_log_days``, and (9) queues again,
once, the pictures whose job was lost, then fails them (articles/images/jobs.py:
``recover_lost``), and (10) queues a scheduled retraining of the match model when the
admin turned it on and enough new labels exist (:func:`schedule_retraining`). Several
workers running it at once is harmless: every step is idempotent; a Redis
lock keeps it to one worker per period.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from dedupsite import metrics

log = logging.getLogger(__name__)


#: the steps that recover something lost (counted in dedupsite_watchdog_recoveries_total)
RECOVERIES = ("rebuilt", "requeued", "pushes", "bulk_resumed", "pictures")


def tick() -> dict[str, int]:
    from articles.changes import log as changes
    from articles.downstream.delivery import enqueue_delivery
    from articles.images import jobs as pictures
    from articles.index import markers, reindex, window
    from articles.ingest.intake import requeue_stale
    from articles.models import EngineSettings, OutboxStatus, RepresentativeOutbox
    from articles.representatives import outbox, retention
    from dedupsite import redis_store

    period = settings.WATCHDOG_SECONDS
    client = redis_store.client()
    if not client.set(redis_store.key("watchdog"), 1, nx=True, ex=max(1, int(period * 0.9))):
        return {}
    report = {"rebuilt": 0, "requeued": 0, "pushes": 0, "expired": 0, "bodies_cleared": 0,
              "queue_sampled": 0, "bulk_resumed": 0, "pictures": 0}
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
    # The change log's retention (articles/changes/log.py), the admin's days.
    days = EngineSettings.objects.filter(pk=1).values_list("change_log_days", flat=True).first()
    report["changes_dropped"] = changes.expire(
        days if days is not None else EngineSettings._meta.get_field("change_log_days").default)
    # Downstream deliveries that came due (back-offs), or whose job was lost with Redis.
    enqueue_delivery()
    report["queue_sampled"] = int(sample_queue())
    report["bulk_resumed"] = resume_bulk_actions()
    report["pictures"] = pictures.recover_lost()
    report["retraining"] = int(schedule_retraining())
    if any(report[kind] for kind in RECOVERIES):
        log.warning("watchdog: %s", report)
    with metrics.record() as m:
        for kind in RECOVERIES:
            m.inc("dedupsite_watchdog_recoveries_total", report[kind], kind=kind)
        m.inc("dedupsite_watchdog_ticks_total")
    return report


#: Queue samples older than this are deleted as new ones are written.
QUEUE_SAMPLES_KEPT = timedelta(days=14)


def sample_queue() -> bool:
    """Record the review queue's size when the last sample is QUEUE_SAMPLE_SECONDS old
    (one count a period; the watchdog's lock keeps it to one worker); True when it did."""
    from articles.models import Article, EngineSettings, QueueSample

    period = settings.QUEUE_SAMPLE_SECONDS
    if period <= 0:
        return False
    now = timezone.now()
    if QueueSample.objects.filter(taken_at__gt=now - timedelta(seconds=period)).exists():
        return False
    size = Article.objects.review_queue(EngineSettings.review_rules()).count()
    QueueSample.objects.create(taken_at=now, size=size)
    QueueSample.objects.filter(taken_at__lt=now - QUEUE_SAMPLES_KEPT).delete()
    return True


#: The job of a bulk action (named by its path: the editor's room is above this one).
BULK_JOB = "articles.editor.bulk.run"


def resume_bulk_actions(now: datetime | None = None) -> int:
    """Queue again the bulk actions whose job is lost: queued or running with no
    progress for BULK_STALE_SECONDS (a worker died mid-job, or the enqueue never reached
    Redis). The job resumes after the last cluster it recorded; a job of the old worker
    still alive stops at its next progress UPDATE (articles/editor/bulk.py)."""
    from articles.models import BulkAction, BulkStatus
    from dedupsite import redis_store

    now = now or timezone.now()
    stale = {"status__in": [BulkStatus.QUEUED, BulkStatus.RUNNING],
             "heartbeat_at__lt": now - timedelta(seconds=settings.BULK_STALE_SECONDS)}
    resumed = 0
    for pk in BulkAction.objects.filter(**stale).values_list("pk", flat=True)[:50]:
        if BulkAction.objects.filter(pk=pk, **stale).update(status=BulkStatus.QUEUED,
                                                            heartbeat_at=now):
            redis_store.queue("default").enqueue(BULK_JOB, pk, job_timeout=3600)
            resumed += 1
    return resumed


def schedule_retraining() -> bool:
    """Queue :func:`retrain` when the admin's ``retrain_automatically`` is on and
    ``retrain_min_labels`` new labels exist (articles/tuning/retraining.py), at most once
    in ``retraining.RETRY_SECONDS`` (a Redis key); True when it queued one."""
    from articles.tuning import retraining
    from dedupsite import redis_store

    if not retraining.due():
        return False
    if not redis_store.client().set(redis_store.key("retraining"), 1, nx=True,
                                    ex=retraining.RETRY_SECONDS):
        return False
    redis_store.queue("default").enqueue(retrain, job_timeout=6 * 3600)
    return True


def retrain() -> str | None:
    """RQ job: fit a candidate on schedule (retraining.retrain) and activate it when
    allowed (``retrain_activate``, not flagged, not worse); the version's name, or None
    when there were not enough labels of each kind."""
    from articles.index.reindex import apply_settings
    from articles.tuning import matcher, retraining

    try:
        version, activate = retraining.retrain()
    except matcher.NotEnoughLabels as exc:
        log.info("scheduled retraining: %s", exc)
        return None
    if activate:
        apply_settings(matcher.activate(version))
        log.warning("scheduled retraining activated %s", version.version)
    return version.version


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
