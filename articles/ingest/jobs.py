"""RQ jobs. They take primitive ids (nids), are idempotent and enqueued on commit."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.db import close_old_connections, connection
from rq import Retry, get_current_job
from rq.job import Job

from articles.ingest import assign
from dedupsite import metrics, redis_store

log = logging.getLogger(__name__)

RETRY = Retry(max=5, interval=[1, 5, 15, 30, 60])


def process_batch(nids: Sequence[str]) -> int:
    _close_dead_connections()
    try:
        return assign.process_articles(nids)
    except Exception as exc:
        job = get_current_job()
        gave_up = job is None or not job.retries_left
        if gave_up:
            # Out of retries: make the failure visible on each article (API, admin).
            assign.mark_failed(nids, f"{type(exc).__name__}: {exc}")
        metrics.inc("dedupsite_article_failures_total", len(nids),
                    stage="gave_up" if gave_up else "process")
        raise
    finally:
        _close_dead_connections()


def _close_dead_connections() -> None:
    """What Django does around every request, around every job: `dedup_worker` runs jobs
    in one long-lived process, whose connection a MariaDB restart leaves dead (every
    later job would fail on it). Not inside a transaction (tests run jobs in one)."""
    if not connection.in_atomic_block:
        close_old_connections()


def enqueue_processing(nids: Sequence[str]) -> None:
    redis_store.queue("ingest").enqueue(process_batch, list(nids), retry=RETRY)


def pending_nids(running_for_less_than_s: float) -> set[str]:
    """nids that an ingest job still holds: waiting in the queue, waiting for a retry or
    deferred, or running for less than ``running_for_less_than_s`` seconds. A job
    "running" longer than that is taken for one whose worker died (a batch takes
    seconds; RQ notices a dead worker only minutes later): its articles count as not
    held, and the watchdog enqueues them again. A second job for a live batch is
    harmless: a job skips articles already done."""
    nids: set[str] = set()
    for job in redis_store.held_jobs("ingest", f"{__name__}.process_batch",
                                     running_for_less_than_s):
        nids.update(job.args[0])
    return nids


def release_scheduled(names: Sequence[str]) -> int:
    """Move the scheduled jobs of queues ``names`` (delayed pushes, retries waiting for
    their back-off) to the front of their queues, due or not; return how many. A burst
    worker calls it before it exits, so that it leaves nothing behind that only a
    later scheduler would run."""
    moved = 0
    for name in names:
        queue = redis_store.queue(name)
        registry = queue.scheduled_job_registry
        for job in Job.fetch_many(registry.get_job_ids(), connection=queue.connection):
            if job is None:
                continue
            registry.remove(job)
            queue.enqueue_job(job, at_front=True)
            moved += 1
    return moved
