"""Representative election and delivery to the representative store (HBase or local).

Election: the member with the highest hotness × media weight; ties go to the
earliest (received_at, then id). An editor's choice (Doc.representative_pinned)
wins until it is undone or that member leaves the doc.

Delivery: every change writes a RepresentativeOutbox row in the same
transaction (`record_change`); after commit a push job sends the docId's
current state with its version (`push_pending`). While the store is down the
rows stay pending and the job retries with back-off; nothing is lost, and
`put_if_newer` keeps an older state from overwriting a newer one.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from typing import Any

import django_rq
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from rq import Retry

from articles.bulksql import insert_rows, prep, update_rows
from articles.models import (
    Article,
    ArticleStatus,
    Doc,
    MediaWeight,
    OutboxStatus,
    RepresentativeOutbox,
)
from articles.repstore import RepresentativeStore, StoreUnavailable, store_from_url

log = logging.getLogger(__name__)

PUSH_RETRY = Retry(max=10, interval=[1, 2, 5, 10, 30, 60, 120, 300, 600, 600])


@functools.cache
def store() -> RepresentativeStore:
    return store_from_url(settings.HBASE_URL, settings.LOCAL_REPRESENTATIVE_STORE)


_weights: dict[str, Any] = {"at": -1e9, "values": {}}
WEIGHTS_TTL = 30.0  # seconds an admin's media-weight change may take to reach a process


def media_weights(medias: Iterable[str]) -> dict[str, float]:
    """Admin media weights (default 1), re-read at most every WEIGHTS_TTL seconds."""
    import time

    now = time.monotonic()
    if now - _weights["at"] > WEIGHTS_TTL:
        _weights["values"] = dict(MediaWeight.objects.values_list("media", "weight"))
        _weights["at"] = now
    return {m: _weights["values"][m] for m in medias if m in _weights["values"]}


def clear_weights_cache() -> None:
    _weights["at"] = -1e9


def score(article: Article, weights: dict[str, float]) -> tuple[float, float, int]:
    """Sort key: higher is better. Ties go to the earliest article."""
    weighted = article.hotness * weights.get(article.media, 1.0)
    return (weighted, -article.received_at.timestamp(), -article.pk)


def elect(doc: Doc) -> Article | None:
    members = list(
        Article.objects.filter(doc=doc, status=ArticleStatus.DONE).only(
            "id", "nid", "hotness", "media", "received_at"
        )
    )
    if not members:
        return None
    if doc.representative_pinned and any(m.pk == doc.representative_id for m in members):
        return next(m for m in members if m.pk == doc.representative_id)
    weights = media_weights(m.media for m in members)
    return max(members, key=lambda m: score(m, weights))


def refresh(doc: Doc) -> None:
    """Re-elect and record the change for delivery. Call inside a transaction, doc locked."""
    best = elect(doc)
    if best is None:
        doc.representative_pinned = False
    doc.representative = best
    doc.rep_version = F("rep_version") + 1
    doc.save(update_fields=["representative", "representative_pinned", "rep_version",
                            "updated_at"])
    doc.refresh_from_db(fields=["rep_version"])
    record_change(doc)


def on_batch_join(docs: dict[str, Doc], joined: dict[str, list[Article]], now: Any) -> None:
    """Members joined (or founded) these docs in one batch: update sizes and elect.

    `docs` are locked (or new) rows; in the caller's transaction.
    """
    medias = {a.media for members in joined.values() for a in members}
    medias |= {d.representative.media for d in docs.values()
               if d.representative_id and d.representative is not None}
    weights = media_weights(medias)
    outbox = []
    updates = []
    for key, members in joined.items():
        doc = docs[key]
        contenders = list(members)
        rep = doc.representative if doc.size else None
        if rep is not None:
            contenders.append(rep)
        if doc.representative_pinned and rep is not None:
            best = rep
        else:
            best = max(contenders, key=lambda m: score(m, weights))
        updates.append((doc.pk, (len(members), best.pk, 1)))
        outbox.append((doc.doc_id, doc.rep_version + 1, RepresentativeOutbox.shard_of(doc.doc_id)))
        # the committed state, in memory too (the API answers from these objects)
        doc.size += len(members)
        doc.representative = best
        doc.rep_version += 1
    stamp = prep(Doc, "last_seen", now)
    update_rows(Doc, ("size", "representative", "rep_version"), updates,
                increments=("size", "rep_version"),
                constants={"last_seen": stamp, "updated_at": stamp})
    insert_rows(RepresentativeOutbox, ("doc_id", "version", "shard", "status", "attempts",
                                       "last_error", "created_at"),
                [(*row, OutboxStatus.PENDING.value, 0, "", stamp) for row in outbox])
    if outbox:
        transaction.on_commit(enqueue_push)


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
    from datetime import timedelta

    from articles import redis_store

    slices = list(slices)
    pipe = redis_store.client().pipeline(transaction=False)
    for shard in slices:
        pipe.set(redis_store.key("push", "queued", shard, shards), 1, nx=not force, ex=60)
    for shard, flagged in zip(slices, pipe.execute(), strict=True):
        if not flagged:
            continue  # a job for this slice is waiting: it will carry the change
        queue = django_rq.get_queue("push")
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
    from articles import redis_store
    from articles.locks import multi_lock

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
    from articles import redis_store
    from articles.locks import multi_lock

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
            raise
        RepresentativeOutbox.objects.filter(id__in=ids).update(
            status=OutboxStatus.SENT, sent_at=timezone.now()
        )
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
    from articles.repstore import normalize_row

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
