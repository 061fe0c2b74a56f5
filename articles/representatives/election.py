"""Representative election: which member of a docId is delivered as its representative.

The member with the highest hotness × media weight wins; ties go to the earliest
(received_at, then id). An editor's choice (Doc.representative_pinned) wins until
it is undone or that member leaves the doc. Members whose body was cleared by body
retention (:mod:`articles.representatives.retention`) are passed over. Every change
is recorded for delivery in the same transaction (:mod:`articles.representatives.outbox`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cachetools import TTLCache
from django.db import transaction
from django.db.models import F

from articles.lib.bulksql import insert_rows, prep, update_rows
from articles.models import (
    Article,
    ArticleStatus,
    Doc,
    MediaWeight,
    OutboxStatus,
    RepresentativeOutbox,
)
from articles.representatives.outbox import enqueue_push, record_change

#: seconds an admin's media-weight change may take to reach a process
WEIGHTS_TTL = 30.0
_weights: TTLCache[str, dict[str, float]] = TTLCache(maxsize=1, ttl=WEIGHTS_TTL)


def media_weights(medias: Iterable[str]) -> dict[str, float]:
    """Admin media weights (default 1), re-read at most every WEIGHTS_TTL seconds."""
    values = _weights.get("all")
    if values is None:
        values = _weights["all"] = dict(MediaWeight.objects.values_list("media", "weight"))
    return {m: values[m] for m in medias if m in values}


def clear_weights_cache() -> None:
    _weights.clear()


def score(article: Article, weights: dict[str, float]) -> tuple[float, float, int]:
    """Sort key: higher is better. Ties go to the earliest article."""
    weighted = article.hotness * weights.get(article.media, 1.0)
    return (weighted, -article.received_at.timestamp(), -article.pk)


def elect(doc: Doc) -> Article | None:
    members = list(
        Article.objects.filter(doc=doc, status=ArticleStatus.DONE).only(
            "id", "nid", "hotness", "media", "received_at", "body_cleared_at"
        )
    )
    if not members:
        return None
    if doc.representative_pinned and any(m.pk == doc.representative_id for m in members):
        return next(m for m in members if m.pk == doc.representative_id)
    # A member whose body retention cleared has no text to deliver: it is elected only
    # when no member has its body (retention never clears the current
    # representative, so a doc normally has one).
    kept = [m for m in members if m.body_cleared_at is None] or members
    weights = media_weights(m.media for m in kept)
    return max(kept, key=lambda m: score(m, weights))


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
