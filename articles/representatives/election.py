"""Representative election: which member of a docId is delivered as its representative.

The member with the highest hotness × media weight wins among the members whose text
is complete enough: at least half as long as the cluster's longest (a truncated
repost posted hotter is elected only by an editor); ties go to the earliest
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

from articles.changes import log as changes
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


#: A member shorter than this share of its cluster's longest body is not elected by
#: hotness (docs/hbase.md).
COMPLETE_SHARE = 0.5


def complete(members: list[Article]) -> list[Article]:
    """The members whose body is at least COMPLETE_SHARE of the longest one's."""
    longest = max(m.content_length for m in members)
    return [m for m in members if m.content_length >= COMPLETE_SHARE * longest]


def score(article: Article, weights: dict[str, float]) -> tuple[float, float, int]:
    """Sort key: higher is better. Ties go to the earliest article."""
    weighted = article.hotness * weights.get(article.media, 1.0)
    return (weighted, -article.received_at.timestamp(), -article.pk)


def elect(doc: Doc) -> Article | None:
    members = list(
        Article.objects.filter(doc=doc, status=ArticleStatus.DONE).only(
            "id", "nid", "hotness", "media", "received_at", "body_cleared_at", "content_length",
            "api_key",
        )
    )
    if not members:
        return None
    if doc.representative_pinned and any(m.pk == doc.representative_id for m in members):
        return next(m for m in members if m.pk == doc.representative_id)
    # A member whose body retention cleared has no text to deliver: it is elected only
    # when no member has its body (retention never clears the current
    # representative, so a doc normally has one).
    kept = complete([m for m in members if m.body_cleared_at is None] or members)
    weights = media_weights(m.media for m in kept)
    return max(kept, key=lambda m: score(m, weights))


def _surely_complete(best: Article, rep: Article, joined: list[Article]) -> bool:
    """Is ``best`` complete enough among every member, without reading the others? The
    current representative was complete among them (the longest of them is at most
    twice its length), so a winner at least as long as it, and at least half as long
    as the longest newcomer, is."""
    longest_new = max(m.content_length for m in joined)
    return (best.content_length >= rep.content_length
            and best.content_length >= COMPLETE_SHARE * longest_new)


def refresh(doc: Doc, *, logged: bool = True) -> None:
    """Re-elect and record the change for delivery, and in the change log when the
    representative is another article (``logged=False``: the caller logs its decision's
    changes as a whole). Call inside a transaction, doc locked, after the transaction's
    other row locks (articles/changes/log.py)."""
    previous = doc.representative_id
    best = elect(doc)
    if best is None:
        doc.representative_pinned = False
    doc.representative = best
    doc.rep_version = F("rep_version") + 1
    doc.save(update_fields=["representative", "representative_pinned", "rep_version",
                            "updated_at"])
    doc.refresh_from_db(fields=["rep_version"])
    record_change(doc)
    if logged and best is not None and best.pk != previous:
        changes.record([changes.representative(doc.doc_id, best.nid, best.api_key_id)])


def on_batch_join(docs: dict[str, Doc], joined: dict[str, list[Article]], now: Any
                  ) -> list[changes.Pending]:
    """Members joined (or founded) these docs in one batch: update sizes and elect.

    `docs` are locked (or new) rows; in the caller's transaction. Returns the changes of
    representative for the change log (the caller logs them with its own).
    """
    elected: list[changes.Pending] = []
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
            best = max(complete(contenders), key=lambda m: score(m, weights))
            if rep is not None and not _surely_complete(best, rep, members):
                # the members not in this batch may be longer: elect among all of them
                best = elect(doc) or best
        updates.append((doc.pk, (len(members), best.pk, 1)))
        if rep is None or best.pk != rep.pk:
            elected.append(changes.representative(doc.doc_id, best.nid, best.api_key_id))
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
    return elected
