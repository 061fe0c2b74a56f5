"""The delivery job: feeds the Redis Stream and every webhook that is due from the change
log, in cursor order.

One job waits at a time: :func:`enqueue_delivery` sets a flag in Redis and enqueues only
when it was not set; the job clears the flag before it reads the log, so a change
committed after that read always enqueues another job. The logging transactions call it
on commit (``articles.changes.log.record``), the watchdog every tick (retries that came
due, a job lost with Redis). Delivery is at least once: a receiver dedupes by cursor.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import redis
from django.conf import settings
from django.utils import timezone

from articles.downstream import stream, webhooks
from articles.models import Webhook, WebhookStatus
from dedupsite import redis_store

log = logging.getLogger(__name__)

#: the job stops after this long and enqueues its successor (other queued jobs go first)
JOB_SECONDS = 20.0


def _flag() -> str:
    return redis_store.key("changes", "waiting")


def enqueue_delivery() -> None:
    """One waiting delivery job, when anything downstream is configured."""
    if not (settings.CHANGES_STREAM or webhooks.any_active()):
        return
    if redis_store.client().set(_flag(), 1, nx=True, ex=600):
        redis_store.queue("default").enqueue(deliver, job_timeout=120)


def on_changes_committed(**_kwargs: Any) -> None:
    """A transaction logged changes: a delivery job, unless one waits. Redis being down
    loses nothing (the watchdog enqueues it again once Redis is back)."""
    try:
        enqueue_delivery()
    except redis.RedisError as exc:
        log.warning("change delivery not enqueued (the watchdog will): %s", exc)


def deliver() -> dict[str, int]:
    """RQ job: the stream, then each webhook that is due, until they are up to date or
    :data:`JOB_SECONDS` have passed (then a successor is enqueued)."""
    redis_store.client().delete(_flag())
    started = time.monotonic()
    report = {"stream": stream.feed(deadline=started + JOB_SECONDS), "webhooks": 0}
    now = timezone.now()
    due = Webhook.objects.filter(status=WebhookStatus.ACTIVE).exclude(
        next_attempt_at__gt=now).order_by("pk")
    more = report["stream"] < 0
    for hook in due:
        if time.monotonic() > started + JOB_SECONDS:
            more = True
            break
        sent, behind = webhooks.catch_up(hook, deadline=started + JOB_SECONDS)
        report["webhooks"] += sent
        more |= behind
    if more:
        enqueue_delivery()
    return report
