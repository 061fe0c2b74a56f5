"""Delivery of representatives to the representative store (HBase or local).

Every change writes a RepresentativeOutbox row in the same transaction
(`record_change`); after commit a push job sends the docId's current state with
its version (`push_pending`). While the store is down the rows stay pending and
the job retries with back-off; nothing is lost, and `put_if_newer` keeps an
older state from overwriting a newer one.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from rq import Retry

from articles.index.locks import multi_lock
from articles.models import Doc, OutboxStatus, RepresentativeOutbox
from articles.representatives.stores import (
    RepresentativeStore,
    StoreUnavailable,
    normalize_row,
    store_from_url,
)
from dedupsite import metrics, redis_store

log = logging.getLogger(__name__)

PUSH_RETRY = Retry(max=10, interval=[1, 2, 5, 10, 30, 60, 120, 300, 600, 600])


@functools.cache
def store() -> RepresentativeStore:
    return store_from_url(settings.HBASE_URL, settings.LOCAL_REPRESENTATIVE_STORE)


def record_change(doc: Doc) -> None:
    RepresentativeOutbox.objects.create(doc_id=doc.doc_id, version=doc.rep_version,
                                        shard=RepresentativeOutbox.shard_of(doc.doc_id))
    transaction.on_commit(enqueue_push)


def enqueue_push(*, now: bool = False) -> None:
    """Enqueue one push job per shard slice unless one is already waiting: a job and the
    successors it enqueues deliver every pending row.

    The job clears the flag before it reads the outbox, so a change committed
    after that read always enqueues a new job. `now`: enqueue at once, waiting job or
    not (the watchdog, when rows stay pending: a scheduled job may be stuck with a
    dead worker's RQ scheduler).
    """

    shards = settings.PUSH_JOBS
    _enqueue_shards(range(shards), shards,
                    delay_ms=0 if now else settings.PUSH_DELAY_MS, force=now)


def _enqueue_shard(shard: int, shards: int, delay_ms: int = 0, force: bool = False) -> None:
    _enqueue_shards([shard], shards, delay_ms, force)


def _enqueue_shards(slices: Iterable[int], shards: int, delay_ms: int = 0,
                    force: bool = False) -> None:
    """One waiting push job per shard slice (the flags of all the slices set in one
    round trip). With a delay the job is scheduled (the workers' RQ scheduler enqueues
    it): every change committed meanwhile rides along, so steady traffic costs one push
    job per slice per delay, not one per commit."""

    slices = list(slices)
    pipe = redis_store.client().pipeline(transaction=False)
    for shard in slices:
        pipe.set(redis_store.key("push", "queued", shard, shards), 1, nx=not force, ex=60)
    for shard, flagged in zip(slices, pipe.execute(), strict=True):
        if not flagged:
            continue  # a job for this slice is waiting: it will carry the change
        queue = redis_store.queue("push")
        if delay_ms > 0:
            queue.enqueue_in(timedelta(milliseconds=delay_ms), push_pending, shard, shards,
                             retry=PUSH_RETRY)
        else:
            queue.enqueue(push_pending, shard, shards, retry=PUSH_RETRY)


def row_for(doc: Doc) -> dict[str, Any] | None:
    rep = doc.representative
    if rep is None or doc.size == 0:
        return None
    return {
        "nid": rep.nid, "url": rep.url, "title": rep.title, "content": rep.content,
        "media": rep.media, "publishedAt": rep.published_at, "hotness": rep.hotness,
        "clusterSize": doc.size, "updatedAt": doc.updated_at,
    }


def deliver(doc_id: str, target: RepresentativeStore | None = None) -> None:
    """Send a docId's current state (or its removal) to the store.

    Under a per-docId Redis lock, and reading the state inside it: two push
    workers delivering one docId cannot let the older state land last.
    """

    with multi_lock(redis_store.client(), [redis_store.key("lock", "push", doc_id)],
                    ttl_ms=60_000, wait_s=60):
        _deliver(doc_id, target or store())


def _deliver(doc_id: str, target: RepresentativeStore) -> None:
    doc = Doc.objects.select_related("representative").filter(doc_id=doc_id).first()
    row = row_for(doc) if doc is not None else None
    if row is None:
        target.delete(doc_id)
    else:
        assert doc is not None
        target.put_if_newer(doc_id, row, version=doc.rep_version)


def push_pending(shard: int = 0, shards: int = 1, limit: int = 500, rounds: int = 2) -> int:
    """Deliver the pending outbox rows of one slice of the shards, oldest first, once per
    docId, `limit` rows per round trip, at most `rounds` round trips: when rows remain,
    the job enqueues its successor and ends, so that a worker goes back to the ingest
    queue (which it serves first) between chunks instead of pushing a whole backlog
    while articles wait. Raises if the store is down (the job is retried with back-off;
    rows stay pending)."""

    client = redis_store.client()
    client.delete(redis_store.key("push", "queued", shard, shards))
    mine = [s for s in range(RepresentativeOutbox.SHARDS) if s % shards == shard]
    target = store()
    pushed = 0
    for _round in range(rounds):
        rows = list(
            RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING, shard__in=mine)
            .order_by("id").values_list("id", "doc_id")[:limit]
        )
        if not rows:
            return pushed
        by_doc: dict[str, list[int]] = {}
        for row_id, doc_id in rows:
            by_doc.setdefault(doc_id, []).append(row_id)
        ids = [row_id for row_id, _ in rows]
        locks = [redis_store.key("lock", "push", doc_id) for doc_id in by_doc]
        try:
            # The state is read inside the per-docId locks: whoever writes last writes
            # the newest state, so two deliveries of one docId cannot go backwards.
            with multi_lock(client, locks, ttl_ms=120_000, wait_s=120):
                docs = {d.doc_id: d for d in Doc.objects.select_related("representative")
                        .filter(doc_id__in=list(by_doc))}
                puts, deletes = [], []
                for doc_id in by_doc:
                    doc = docs.get(doc_id)
                    row = row_for(doc) if doc is not None else None
                    if row is None:
                        deletes.append(doc_id)
                    else:
                        assert doc is not None
                        puts.append((doc_id, row, doc.rep_version))
                target.put_many_if_newer(puts)
                if deletes:
                    target.delete_many(deletes)
        except StoreUnavailable as exc:
            RepresentativeOutbox.objects.filter(id__in=ids).update(
                attempts=F("attempts") + 1, last_error=str(exc)[:1000]
            )
            metrics.inc("dedupsite_representative_pushes_total", len(by_doc), outcome="failed")
            raise
        RepresentativeOutbox.objects.filter(id__in=ids).update(
            status=OutboxStatus.SENT, sent_at=timezone.now()
        )
        metrics.inc("dedupsite_representative_pushes_total", len(by_doc), outcome="ok")
        pushed += len(by_doc)
    if RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING, shard__in=mine).exists():
        _enqueue_shard(shard, shards)
    return pushed


def outbox_lag() -> dict[str, Any]:
    pending = RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING)
    oldest = pending.order_by("id").values_list("created_at", flat=True).first()
    return {
        "pending": pending.count(),
        "oldestSeconds": round((timezone.now() - oldest).total_seconds(), 1) if oldest else 0,
    }


def _comparable(row: dict[str, Any]) -> dict[str, Any]:
    clean = normalize_row(row)
    clean.pop("updatedAt", None)
    clean.pop("version", None)
    return clean


def sync(target: RepresentativeStore | None = None, progress: Any = None) -> dict[str, int]:
    """Make the store equal MySQL: add missing rows, rewrite stale ones, delete orphans."""
    target = target or store()
    counts = {"checked": 0, "missing": 0, "stale": 0, "orphaned": 0}
    stored = dict(target.scan())
    docs = (
        Doc.objects.filter(size__gt=0, representative__isnull=False)
        .select_related("representative").order_by("id")
    )
    for doc in docs.iterator(chunk_size=1000):
        counts["checked"] += 1
        want = row_for(doc)
        have = stored.pop(doc.doc_id, None)
        if want is None:
            continue
        if have is None:
            counts["missing"] += 1
        elif _comparable(have) != _comparable(want) or have.get("version") != doc.rep_version:
            counts["stale"] += 1
        else:
            if progress is not None:
                progress.update(1)
            continue
        target.put(doc.doc_id, {**want, "version": doc.rep_version})
        if progress is not None:
            progress.update(1)
    for doc_id in stored:
        target.delete(doc_id)
        counts["orphaned"] += 1
    return counts
