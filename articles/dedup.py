"""docId assignment: the url -> title -> content cascade against the Redis indexes.

MySQL is the system of record; the Redis indexes are derived from it and can
be rebuilt at any time (`rebuild_index`). See docs/engine.md for the rule.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import mmh3
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from articles import redis_store, reindex, representatives
from articles.locks import multi_lock
from articles.models import Article, ArticleStatus, Doc, MatchedBy
from articles.tuning import active_config, active_version
from fingerprints.engine import (
    Candidate,
    Decision,
    EngineConfig,
    Features,
    content_probes,
    decide,
    extract_many,
)
from fingerprints.index import MemoryBlockIndex, RedisBlockIndex, block_keys
from fingerprints.urls import canonical_url

log = logging.getLogger(__name__)

DOC_ID_SEED = 0x5EED
_url_field = reindex.url_field


class IndexUnavailable(RuntimeError):
    """The Redis indexes are missing or stale and are being rebuilt."""


def current_config() -> EngineConfig:
    return active_config()


def url_hash(url: str) -> int:
    return mmh3.hash64(canonical_url(url).encode("utf-8"), seed=DOC_ID_SEED, signed=False)[0]


def make_doc_id(nid: str, salt: str = "") -> str:
    value = mmh3.hash128((nid + salt).encode("utf-8"), seed=DOC_ID_SEED, signed=False)
    return f"{value >> 64:016x}-{value & 0xFFFFFFFFFFFFFFFF:016x}"


@dataclass
class Indexes:
    content: RedisBlockIndex
    title: RedisBlockIndex
    urls: str
    generation: str

    @classmethod
    def open(cls, config: EngineConfig, generation: str) -> Indexes:
        client = redis_store.client()
        names = reindex.namespaces(generation)
        return cls(
            content=RedisBlockIndex(client, k=config.k, namespace=names["c"]),
            title=RedisBlockIndex(client, k=config.title_k, namespace=names["t"]),
            urls=names["u"], generation=generation,
        )

    def is_active(self) -> bool:
        return reindex.active_generation() == self.generation


def rebuild_index(progress: Any = None) -> int:
    """Rebuild every Redis structure from MySQL (a new generation, then the switch)."""
    client = redis_store.client()
    with multi_lock(client, [redis_store.key("lock", "rebuild")], ttl_ms=3_600_000, wait_s=3600):
        return reindex.build(progress=progress.update if progress is not None else None)


# --- assignment -------------------------------------------------------------


def process_articles(nids: Sequence[str], *, count_attempt: bool = True) -> int:
    """Fingerprint and assign every queued article among `nids`; return how many were done.

    `count_attempt=False` when called inside the request that stored them (the
    attempt counter records queue jobs, which may die and be retried).

    The whole batch is decided under one lock on the union of its index buckets,
    with one candidate load, one transaction and one index write: round trips
    per batch, not per article.
    """
    config = current_config()
    articles = list(
        Article.objects.filter(nid__in=list(nids), status=ArticleStatus.QUEUED).order_by("id")
    )
    if not articles:
        return 0
    if count_attempt:
        Article.objects.filter(pk__in=[a.pk for a in articles]).update(
            attempts=F("attempts") + 1)
    features = extract_many([(a.title, a.content) for a in articles], config)
    for article in articles:
        if article.url_hash is None:
            article.url_hash = url_hash(article.url)
    indexes = Indexes.open(config, reindex.ensure_index())
    keys = [key for a, f in zip(articles, features, strict=True)
            for key in _lock_keys(a, f, config)]
    with multi_lock(redis_store.client(), keys, ttl_ms=120_000, wait_s=300,
                    gate=reindex.gate_key()):
        if not indexes.is_active():
            raise IndexUnavailable("the index was switched under a running job; it will retry")
        finished = set(
            Article.objects.filter(pk__in=[a.pk for a in articles], status=ArticleStatus.DONE)
            .values_list("id", flat=True)
        )  # done by another worker (a retried job)
        todo = [(a, f) for a, f in zip(articles, features, strict=True) if a.pk not in finished]
        if not todo:
            return 0
        # A changed body is processed again: the article leaves its old doc first —
        # here, under the batch's locks, so that two jobs for one batch (a retry, the
        # watchdog) cannot both take it out of its doc.
        for article, _f in todo:
            if article.doc_id is not None:
                with transaction.atomic():
                    detach(article)
        decisions = _decide_batch(todo, config, indexes)
        # Index first, then commit: a crash in between leaves index entries for
        # articles that are not done, which lookups ignore and the retry rewrites.
        indexes.content.add_many((a.pk, f.content_fp) for a, f in todo)
        indexes.title.add_many((a.pk, f.title_fp) for a, f in todo if f.title_fp)
        pipe = redis_store.client().pipeline(transaction=False)
        for article, _f in todo:
            pipe.hsetnx(indexes.urls, _url_field(article.url_hash or 0), article.pk)
        pipe.execute()
        _save_batch(todo, decisions, active_version())
    return len(todo)


def _lock_keys(article: Article, feats: Features, config: EngineConfig) -> list[str]:
    # The buckets of the probes too: two articles that can find each other through a
    # probe share that probe's bucket, so they are serialised like any other pair.
    content = redis_store.key("lock", "c")
    keys = list({f"{content}:{n}:{v}"
                 for fp in [feats.content_fp, *content_probes(feats, config)]
                 for n, v in block_keys(fp, config.k)})
    if feats.title_fp:
        title = redis_store.key("lock", "t")
        keys += [f"{title}:{n}:{v}" for n, v in block_keys(feats.title_fp, config.title_k)]
    if article.url_hash is not None:
        keys.append(redis_store.key("lock", "u", f"{article.url_hash:x}"))
    return keys


def _decide_batch(
    todo: list[tuple[Article, Features]], config: EngineConfig, indexes: Indexes
) -> list[Decision | None]:
    """Decide each article in order against the index and the batch's earlier articles."""
    client = redis_store.client()
    url_hits = client.hmget(indexes.urls, [_url_field(a.url_hash or 0) for a, _ in todo])
    probes = [content_probes(f, config) for _a, f in todo]
    content_hits = indexes.content.query_probes(
        [[f.content_fp, *p] for (_a, f), p in zip(todo, probes, strict=True)],
        config.content_radius)
    titled = [(n, f.title_fp) for n, (_a, f) in enumerate(todo) if f.title_fp]
    title_hits = dict(zip([n for n, _fp in titled], indexes.title.query_many(
        [fp for _n, fp in titled], config.title_radius), strict=True))
    hits: list[set[int]] = []
    for n, (article, feats) in enumerate(todo):
        ids = {i for i, _fp, _d in content_hits[n]} if feats.content_fp else set()
        ids.update(i for i, _fp, _d in title_hits.get(n, ()))
        ids.discard(article.pk)
        hits.append(ids)
    known_urls = {int(v) for v in url_hits if v is not None}
    stored = load_candidates(set().union(*hits) | known_urls)
    by_id = {c.article_id: c for c in stored}
    # The batch itself: articles decided earlier in it are candidates for later ones.
    local_content = MemoryBlockIndex(config.k)
    local_title = MemoryBlockIndex(config.title_k)
    local: dict[int, Candidate] = {}
    local_urls: dict[int, int] = {}
    decisions: list[Decision | None] = []
    for n, ((article, feats), ids, url_hit) in enumerate(zip(todo, hits, url_hits,
                                                             strict=True)):
        decision = None
        url_owner = int(url_hit) if url_hit is not None else local_urls.get(article.url_hash or 0)
        owner = by_id.get(url_owner) or local.get(url_owner) if url_owner else None
        if owner is not None and url_owner != article.pk:
            decision = Decision(doc_key=owner.doc_key, article_id=owner.article_id,
                                matched_by=MatchedBy.URL, distance=0, similarity=1.0)
        if decision is None:
            ids = set(ids)
            for probe in [feats.content_fp, *probes[n]]:
                ids.update(i for i, _f, _d in local_content.query(probe, config.content_radius))
            if feats.title_fp:
                ids.update(i for i, _f, _d in local_title.query(feats.title_fp,
                                                                  config.title_radius))
            candidates = [by_id[i] if i in by_id else local[i] for i in ids
                          if i in by_id or i in local]
            docs = {c.doc_key for c in candidates}
            candidates += [c for c in list(by_id.values()) + list(local.values())
                           if c.is_anchor and c.doc_key in docs and c.article_id not in ids]
            if candidates:
                forbidden = _forbidden(article)
                decision = decide(feats, candidates, config, forbidden_docs=forbidden)
        decisions.append(decision)
        doc_key = decision.doc_key if decision else _new_doc_key(article)
        local[article.pk] = Candidate(article.pk, doc_key, feats, is_anchor=decision is None)
        local_content.add(article.pk, feats.content_fp)
        if feats.title_fp:
            local_title.add(article.pk, feats.title_fp)
        local_urls.setdefault(article.url_hash or 0, article.pk)
    return decisions


def _new_doc_key(article: Article) -> str:
    return f"new:{article.pk}"


def _forbidden(article: Article) -> frozenset[str]:
    if not article.pinned and not article.matched_by:
        return frozenset()
    from articles.editing import cannot_link_docs

    return cannot_link_docs(article.nid)


def load_candidates(ids: Iterable[int]) -> list[Candidate]:
    """Candidate members plus the anchor of every candidate doc (no chaining without it)."""
    rows = list(
        Article.objects.filter(pk__in=list(ids), status=ArticleStatus.DONE, doc__isnull=False)
        .values_list("id", "doc__doc_id", "features", "doc__anchor_id")
    )
    anchor_ids = {row[3] for row in rows if row[3] is not None} - {row[0] for row in rows}
    if anchor_ids:
        rows += list(
            Article.objects.filter(pk__in=anchor_ids, doc__isnull=False).values_list(
                "id", "doc__doc_id", "features", "doc__anchor_id"
            )
        )
    return [
        Candidate(
            article_id=row[0],
            doc_key=row[1],
            features=Features.from_bytes(bytes(row[2])),
            is_anchor=row[0] == row[3],
        )
        for row in rows
        if row[2] is not None
    ]


def _save_batch(todo: list[tuple[Article, Features]], decisions: list[Decision | None],
                settings_version: int | None) -> None:
    """One transaction: new docs, joins, articles, representatives and outbox rows."""
    now = timezone.now()
    with transaction.atomic():
        founders = [a for (a, _f), d in zip(todo, decisions, strict=True) if d is None]
        taken = set(
            Doc.objects.filter(doc_id__in=[make_doc_id(a.nid) for a in founders])
            .values_list("doc_id", flat=True)
        )
        new_docs = {}
        for article in founders:
            doc_id = make_doc_id(article.nid)
            if doc_id in taken:
                doc_id = _fresh_doc_id(article.nid)
            new_docs[_new_doc_key(article)] = Doc(
                doc_id=doc_id, anchor=article, representative=article, size=0,
                first_seen=now, last_seen=now,
            )
        Doc.objects.bulk_create(list(new_docs.values()))
        existing_keys = {d.doc_key for d in decisions if d is not None} - set(new_docs)
        existing = {
            doc.doc_id: doc
            for doc in Doc.objects.select_for_update().select_related("representative")
            .filter(doc_id__in=existing_keys)
        }
        if len(new_docs) and any(doc.pk is None for doc in new_docs.values()):
            # Backends that do not return ids from bulk_create (MySQL): read them back.
            ids = dict(Doc.objects.filter(doc_id__in=[d.doc_id for d in new_docs.values()])
                       .values_list("doc_id", "id"))
            for doc in new_docs.values():
                doc.pk = ids[doc.doc_id]
        docs = {**existing, **new_docs}
        joined: dict[str, list[Article]] = {}
        for (article, feats), decision in zip(todo, decisions, strict=True):
            key = decision.doc_key if decision else _new_doc_key(article)
            doc = docs[key]
            article.doc = doc
            article.status = ArticleStatus.DONE
            article.failure_reason = ""
            article.matched_by = decision.matched_by if decision else None
            article.matched_article_id = decision.article_id if decision else None
            article.distance = decision.distance if decision else None
            article.similarity = decision.similarity if decision else None
            article.title_fp = feats.title_fp or None
            article.content_fp = feats.content_fp
            article.features = feats.to_bytes()
            article.processed_at = now
            article.settings_version = settings_version
            joined.setdefault(key, []).append(article)
        _update_articles([a for a, _f in todo])
        representatives.on_batch_join(docs, joined, now)


_SAVED_FIELDS = ("doc", "status", "failure_reason", "matched_by", "matched_article", "distance",
                 "similarity", "title_fp", "content_fp", "features", "processed_at", "url_hash",
                 "settings_version")


def _update_articles(articles: list[Article]) -> None:
    """One UPDATE per row through executemany (Django's bulk_update builds CASE
    expressions that cost ~20 ms a row here; this path is the ingest hot loop)."""
    fields = [Article._meta.get_field(name) for name in _SAVED_FIELDS]
    table = connection.ops.quote_name(Article._meta.db_table)
    assignments = ", ".join(f"{connection.ops.quote_name(f.column)} = %s" for f in fields)
    rows = [
        [f.get_db_prep_save(getattr(a, f.attname), connection) for f in fields] + [a.pk]
        for a in articles
    ]
    with connection.cursor() as cursor:
        # One UPDATE by primary key per row: it locks exactly the rows it changes.
        # (A single UPDATE ... JOIN of a derived table was tried: fewer round trips,
        # but it can take wider locks and deadlock concurrent batches.)
        cursor.executemany(f"UPDATE {table} SET {assignments} WHERE id = %s", rows)


def detach(article: Article) -> None:
    """Take an article out of its doc (MySQL and Redis); the doc re-elects. In a transaction.

    The article's doc is read again under a row lock: if another job already took it
    out, nothing changes.
    """
    current = (Article.objects.select_for_update().filter(pk=article.pk)
               .values_list("doc_id", flat=True).first())
    if current is None:
        article.doc = None
        return
    doc = Doc.objects.select_for_update().get(pk=current)
    doc.size = max(doc.size - 1, 0)
    if doc.anchor_id == article.pk:
        doc.anchor = (
            Article.objects.filter(doc=doc, status=ArticleStatus.DONE).exclude(pk=article.pk)
            .order_by("received_at", "id").first()
        )
    doc.save(update_fields=["size", "anchor", "updated_at"])
    Article.objects.filter(pk=article.pk).update(doc=None)
    article.doc = None
    old = Article.objects.filter(pk=article.pk).values_list("title_fp", "content_fp").first()
    generation = reindex.active_generation()
    if old is not None and generation is not None:
        config = current_config()
        indexes = Indexes.open(config, generation)
        if old[1] is not None:
            indexes.content.remove(article.pk, old[1])
        if old[0]:
            indexes.title.remove(article.pk, old[0])
    representatives.refresh(doc)


def _fresh_doc_id(nid: str) -> str:
    doc_id = make_doc_id(nid)
    salt = 0
    while Doc.objects.filter(doc_id=doc_id).exists():
        salt += 1
        doc_id = make_doc_id(nid, f"#{salt}")
    return doc_id


def mark_failed(nids: Sequence[str], reason: str) -> None:
    Article.objects.filter(nid__in=list(nids), status=ArticleStatus.QUEUED).update(
        status=ArticleStatus.FAILED, failure_reason=reason[:2000]
    )


# --- dry run ------------------------------------------------------------------


def find_similar(title: str, content: str, url: str | None = None, limit: int = 10) -> dict:
    """The docIds nearest to an article, without storing anything (POST /api/v1/similar)."""
    from fingerprints.verify import verify

    config = current_config()
    feats = extract_many([(title, content)], config)[0]
    indexes = Indexes.open(config, reindex.ensure_index())
    matches: dict[str, dict] = {}
    if url:
        known = redis_store.client().hget(indexes.urls, _url_field(url_hash(url)))
        row = (
            Article.objects.filter(pk=int(known), doc__isnull=False)
            .values_list("nid", "doc__doc_id").first() if known is not None else None
        )
        if row is not None:
            matches[row[1]] = {"docId": row[1], "nid": row[0], "matchedBy": "url",
                               "distance": 0, "similarity": 1.0, "verified": True}
    content = indexes.content.query_probes(
        [[feats.content_fp, *content_probes(feats, config)]], config.content_radius)[0]
    hits = {item_id: ("content", dist) for item_id, _fp, dist in content}
    if feats.title_fp:
        for item_id, _fp, dist in indexes.title.query(feats.title_fp, config.title_radius):
            hits.setdefault(item_id, ("title", dist))
    nids = dict(Article.objects.filter(pk__in=list(hits)).values_list("id", "nid"))
    for cand in load_candidates(hits):
        if cand.article_id not in hits:
            continue  # an anchor loaded for context, not an index hit
        rule, dist = hits[cand.article_id]
        check = verify(feats, cand.features, config)
        entry = {"docId": cand.doc_key, "nid": nids.get(cand.article_id, ""),
                 "matchedBy": rule, "distance": dist,
                 "similarity": round(max(check.similarity, check.containment), 4),
                 "verified": check.ok}
        best = matches.get(cand.doc_key)
        if best is None or (entry["verified"], -entry["distance"]) > (
                best["verified"], -best["distance"]):
            matches[cand.doc_key] = entry
    decision = decide(feats, load_candidates(hits), config)
    ordered = sorted(matches.values(), key=lambda m: (not m["verified"], m["distance"]))
    would_join = next((m["docId"] for m in ordered if m["matchedBy"] == "url"), None)
    return {"docId": would_join or (decision.doc_key if decision else None),
            "matches": ordered[:limit]}
