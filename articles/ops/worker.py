"""RQ workers that time their jobs into ``dedupsite_job_wait_seconds`` (enqueue to
start) and ``dedupsite_job_run_seconds`` (by queue and outcome). ``dedup_worker`` runs
:class:`MeteredWorker` (no fork per job); django-rq's plain ``rqworker`` runs
:class:`MeteredForkWorker` (settings.RQ's WORKER_CLASS): the timings are written to
Redis from the work horse itself, so a fork that exits loses nothing."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from rq.job import Job
from rq.queue import Queue
from rq.worker import SimpleWorker, Worker

from dedupsite import metrics


class _Metered:
    def perform_job(self, job: Job, queue: Queue, *args: Any, **kwargs: Any) -> bool:
        started = time.monotonic()
        wait = None
        if job.enqueued_at is not None:
            wait = (datetime.now(UTC) - job.enqueued_at.replace(tzinfo=UTC)).total_seconds()
        ok = False
        try:
            ok = bool(super().perform_job(job, queue, *args, **kwargs))  # type: ignore[misc]
            return ok
        finally:
            with metrics.record() as m:
                if wait is not None:
                    m.observe("dedupsite_job_wait_seconds", max(0.0, wait), queue=queue.name)
                m.observe("dedupsite_job_run_seconds", time.monotonic() - started,
                          queue=queue.name, outcome="ok" if ok else "failed")


class MeteredWorker(_Metered, SimpleWorker):
    pass


class MeteredForkWorker(_Metered, Worker):
    pass
