"""RQ jobs. They take primitive ids (nids), are idempotent and enqueued on commit."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import django_rq
from django.db import close_old_connections, connection
from rq import Retry, get_current_job

from articles.ingest import assign

log = logging.getLogger(__name__)

RETRY = Retry(max=5, interval=[1, 5, 15, 30, 60])


def process_batch(nids: Sequence[str]) -> int:
    _close_dead_connections()
    try:
        return assign.process_articles(nids)
    except Exception as exc:
        job = get_current_job()
        if job is None or not job.retries_left:
            # Out of retries: make the failure visible on each article (API, admin).
            assign.mark_failed(nids, f"{type(exc).__name__}: {exc}")
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
    django_rq.get_queue("ingest").enqueue(process_batch, list(nids), retry=RETRY)
