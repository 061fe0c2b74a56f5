"""The one place that changes articles and docs (MySQL, Redis, representatives)."""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import mmh3
from django.db import IntegrityError, connection, transaction

from articles.changes import log as changes
from articles.ingest.assign import url_hash
from articles.ingest.jobs import enqueue_processing, pending_nids
from articles.ingest.results import load_articles
from articles.lib.bulksql import insert_objects
from articles.models import ApiKey, Article, ArticleStatus, AuditEntry
from dedupsite import metrics


@dataclass(frozen=True)
class ArticleInput:
    nid: str
    url: str
    content: str
    title: str = ""
    category: str = ""
    media: str = ""
    image_count: int = 0
    hotness: float = 0.0
    published_at: datetime | None = None
    images: tuple[str, ...] = ()

    def payload_hash(self) -> str:
        fields: list[Any] = [self.url, self.title, self.content, self.category, self.media,
                             self.image_count]
        if self.images:  # (absent: the hash articles had before pictures existed)
            fields.append(list(self.images))
        body = json.dumps(fields, ensure_ascii=False)
        return f"{mmh3.hash128(body.encode('utf-8'), signed=False):032x}"

    def model_fields(self) -> dict[str, Any]:
        return {
            "url": self.url, "url_hash": url_hash(self.url), "title": self.title,
            "content": self.content, "content_length": len(self.content),
            "category": self.category, "media": self.media,
            "image_count": self.image_count, "hotness": self.hotness,
            "published_at": self.published_at, "payload_hash": self.payload_hash(),
        }


@dataclass
class Accepted:
    """What one call did with its nids (a nid posted twice in one call counts once)."""

    new: int = 0  # stored for the first time, queued
    changed: int = 0  # url, title or content changed: stored and queued again
    updated: int = 0  # only other fields (category, media, ...) changed: row updated
    unchanged: int = 0  # the same as stored (still queued ones are queued again)
    pinned: int = 0  # changed, but an editor pinned the article: left as it is
    #: nids first posted with another API key, which this key may not change: untouched
    refused: list[str] = field(default_factory=list)

    @property
    def queued(self) -> int:
        return self.new + self.changed


class NotOwner(PermissionError):
    """The article was first posted with another API key, which this key may not change."""


def _may_change(key: ApiKey | None, article: Article) -> bool:
    return (key is None or key.may_change_others or article.api_key_id is None
            or article.api_key_id == key.pk)


def accept_articles(items: Sequence[ArticleInput], *, enqueue: bool = True,
                    accepted: Accepted | None = None, key: ApiKey | None = None
                    ) -> list[Article]:
    """Store new articles (queued) and enqueue them on commit; known nids are idempotent.

    A nid posted again with the same text changes nothing. A changed url, title or
    content (what can change the docId) is stored and re-queued unless an editor
    pinned the article; a change of other fields only (category, media, image count,
    publication time) updates the row without processing it again. ``accepted``, when
    given, receives the counts. ``key``: the crawler's API key, recorded on new articles;
    a known article first posted with another key is left untouched (its nid in
    ``accepted.refused``) unless the key may change others' articles. None (a command)
    may change any.
    """
    accepted = accepted if accepted is not None else Accepted()
    for attempt in range(3):
        before = dataclasses.replace(accepted, refused=list(accepted.refused))
        try:
            stored = _accept(items, enqueue, accepted, key)
        except IntegrityError:
            # Another request inserted one of these nids at the same moment: now it is known.
            if attempt == 2:
                raise
            continue
        counted = functools.partial(_count_received, before, accepted)
        transaction.on_commit(counted)
        pictures = {item.nid: item.images for item in items
                    if item.nid not in accepted.refused}
        if any(pictures.values()):  # (a re-post without pictures keeps the stored ones)
            transaction.on_commit(functools.partial(_attach_pictures, pictures))
        return stored
    raise AssertionError("unreachable")


def _attach_pictures(pictures: dict[str, tuple[str, ...]]) -> None:
    from articles.images.jobs import attach

    attach(pictures)


def _count_received(before: Accepted, after: Accepted) -> None:
    with metrics.record() as m:
        for kind in ("new", "changed", "updated", "unchanged", "pinned"):
            m.inc("dedupsite_articles_received_total",
                  getattr(after, kind) - getattr(before, kind), kind=kind)
        m.inc("dedupsite_articles_received_total",
              len(after.refused) - len(before.refused), kind="refused")


#: Fields a re-post may change without processing the article again.
_SIDE_FIELDS = ("category", "media", "image_count", "published_at")


def _accept(items: Sequence[ArticleInput], enqueue: bool, accepted: Accepted,
            key: ApiKey | None) -> list[Article]:
    latest = {item.nid: item for item in items}  # a nid twice in one batch: the last wins
    if not connection.in_atomic_block:
        fresh = _insert_new(latest, enqueue, key)
        if fresh is not None:
            accepted.new += len(fresh)
            return [fresh[item.nid] for item in items]
    with transaction.atomic():
        # their docs first, then the articles: the one lock order a merge keeps
        locked, docs = Article.objects.filter(nid__in=list(latest)).lock_with_docs()
        existing = {a.nid: a for a in locked}
        to_create = [
            Article(nid=nid, status=ArticleStatus.QUEUED, api_key=key, **item.model_fields())
            for nid, item in latest.items()
            if nid not in existing
        ]
        insert_objects(Article, to_create)
        accepted.new += len(to_create)
        requeue = []
        for nid, article in existing.items():
            item = latest[nid]
            if not _may_change(key, article):
                accepted.refused.append(nid)
                continue
            text_changed = (article.url, article.title, article.content) != (
                item.url, item.title, item.content)
            same = article.payload_hash == item.payload_hash()
            if same or (article.pinned and text_changed):
                accepted.unchanged += same
                accepted.pinned += not same
                if article.status == ArticleStatus.QUEUED:
                    # Posted again while still queued: perhaps its job was lost with the
                    # queue (the first post got a 503). Enqueue again; a job skips done ones.
                    requeue.append(nid)
                continue
            for name, value in item.model_fields().items():
                setattr(article, name, value)
            if not text_changed:
                # nothing that decides the docId: the row only, the docId stays
                accepted.updated += 1
                article.save(update_fields=[*_SIDE_FIELDS, "payload_hash"])
                continue
            accepted.changed += 1
            AuditEntry.objects.create(
                action="body_changed", nid=nid,
                doc_id=docs[article.doc_pk].doc_id if article.doc_pk else "",
                data={"from": article.payload_hash, "to": item.payload_hash()},
                api_key=key, actor_label=f"api:{key.name}" if key is not None else "",
            )
            article.status = ArticleStatus.QUEUED
            article.body_cleared_at = None  # a new text is kept like any new body
            article.save(update_fields=[*item.model_fields(), "status", "body_cleared_at"])
            requeue.append(nid)
        queued = [a.nid for a in to_create] + requeue
        if queued and enqueue:
            transaction.on_commit(lambda: enqueue_processing(queued))
    # New rows are returned as built (queued, no doc); known ones are read back
    # without their text (the caller needs their status and doc, not the body).
    by_nid: dict[str, Article] = {a.nid: a for a in to_create}
    by_nid.update((a.nid, a) for a in load_articles([n for n in latest if n not in by_nid]))
    return [by_nid[item.nid] for item in items]


def _insert_new(latest: dict[str, ArticleInput], enqueue: bool, key: ApiKey | None
                ) -> dict[str, Article] | None:
    """The common case, every nid new: one INSERT in autocommit, no transaction to open
    and no rows to lock. None when a nid is already known (the statement then wrote
    nothing) and the caller must take the transactional path."""
    fresh = [Article(nid=nid, status=ArticleStatus.QUEUED, api_key=key, **item.model_fields())
             for nid, item in latest.items()]
    try:
        insert_objects(Article, fresh)
    except IntegrityError:
        return None
    if enqueue:
        enqueue_processing([a.nid for a in fresh])
    return {a.nid: a for a in fresh}


def update_hotness(nid: str, hotness: float, actor_label: str = "",
                   key: ApiKey | None = None) -> Article | None:
    """Set an article's hotness and re-elect its doc's representative. Raises
    :class:`NotOwner` when ``key`` may not change the article (another key posted it)."""
    from articles.representatives import election

    with transaction.atomic():
        found = Article.objects.filter(nid=nid).lock_with_doc()
        if found is None:
            return None
        article, docs = found
        if not _may_change(key, article):
            raise NotOwner(nid)
        old = article.hotness
        Article.objects.filter(pk=article.pk).update(hotness=hotness)
        if article.doc_pk is not None:
            doc = docs[article.doc_pk]
            with changes.cause("hotness", f"key:{key.name}" if key is not None else ""):
                election.refresh(doc)
            AuditEntry.objects.create(
                actor_label=actor_label, action="hotness", doc_id=doc.doc_id, nid=nid,
                data={"from": old, "to": hotness}, api_key=key,
            )
    return load_result(nid)


def load_result(nid: str) -> Article | None:
    rows = load_articles([nid])
    return rows[0] if rows else None


def requeue_stale(older_than_seconds: float = 60.0, batch: int = 500) -> int:
    """Enqueue again every article still queued after `older_than_seconds` whose job is
    gone (no ingest job holds it: :func:`~articles.ingest.jobs.pending_nids`; a job
    running longer than `older_than_seconds` is taken for a dead worker's).

    Articles are in MySQL before their job is queued; if Redis lost the queue
    (a restart without persistence) or a job vanished, this is how they get
    processed. A backlog that is merely waiting for a worker is left alone, so the
    queue does not grow by the backlog on every watchdog tick. (Enqueueing an article
    twice would still be harmless: a job skips done ones.)
    """
    from datetime import timedelta

    from django.utils import timezone


    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    stale = list(
        Article.objects.filter(status=ArticleStatus.QUEUED, received_at__lt=cutoff)
        .order_by("id").values_list("nid", flat=True)[:100_000]
    )
    held = pending_nids(running_for_less_than_s=older_than_seconds) if stale else set()
    nids = [nid for nid in stale if nid not in held]
    for start in range(0, len(nids), batch):
        enqueue_processing(nids[start:start + batch])
    return len(nids)
