"""docId assignment: the url -> title -> content cascade against the Redis indexes.

MySQL is the system of record; the Redis indexes are derived from it and can
be rebuilt at any time (`rebuild_index`). See docs/engine.md for the rule.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import mmh3
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from articles import redis_store, representatives
from articles.locks import multi_lock
from articles.models import Article, ArticleStatus, Doc, IndexState, MatchedBy
from fingerprints.engine import Candidate, Decision, EngineConfig, Features, decide, extract_many
from fingerprints.index import RedisBlockIndex, block_keys
from fingerprints.urls import canonical_url

log = logging.getLogger(__name__)

DOC_ID_SEED = 0x5EED


class IndexUnavailable(RuntimeError):
    """The Redis indexes are missing or stale and are being rebuilt."""


def current_config() -> EngineConfig:
    return EngineConfig()


def url_hash(url: str) -> int:
    return mmh3.hash64(canonical_url(url).encode("utf-8"), seed=DOC_ID_SEED, signed=False)[0]


def make_doc_id(nid: str, salt: str = "") -> str:
    value = mmh3.hash128((nid + salt).encode("utf-8"), seed=DOC_ID_SEED, signed=False)
    return f"{value >> 64:016x}-{value & 0xFFFFFFFFFFFFFFFF:016x}"


@dataclass
class Indexes:
    content: RedisBlockIndex
    title: RedisBlockIndex

    @classmethod
    def open(cls, config: EngineConfig) -> Indexes:
        client = redis_store.client()
        return cls(
            content=RedisBlockIndex(client, k=config.k, namespace=redis_store.key("c")),
            title=RedisBlockIndex(client, k=config.title_k, namespace=redis_store.key("t")),
        )


# --- index generation -------------------------------------------------------


def index_is_current() -> bool:
    state = IndexState.load()
    current = redis_store.client().get(redis_store.key("gen"))
    return bool(state.generation) and current is not None and current.decode() == state.generation


def ensure_index(config: EngineConfig | None = None) -> None:
    """Rebuild the Redis indexes when they do not match the database (e.g. Redis restarted)."""
    if index_is_current():
        return
    client = redis_store.client()
    with multi_lock(client, [redis_store.key("lock", "rebuild")], ttl_ms=600_000, wait_s=600):
        if not index_is_current():
            log.warning("Redis indexes missing or stale: rebuilding from the database")
            rebuild_index(config)


def rebuild_index(
    config: EngineConfig | None = None, progress: Iterable[int] | None = None, chunk: int = 5000
) -> int:
    """Rebuild every Redis structure from MySQL; return the number of articles indexed."""
    config = config or current_config()
    indexes = Indexes.open(config)
    client = redis_store.client()
    client.delete(redis_store.key("gen"))
    indexes.content.clear()
    indexes.title.clear()
    client.delete(redis_store.key("u"))
    done = Article.objects.filter(status=ArticleStatus.DONE, doc__isnull=False)
    total = 0
    last_id = 0
    while True:
        rows = list(
            done.filter(id__gt=last_id)
            .order_by("id")
            .values_list("id", "url_hash", "title_fp", "content_fp")[:chunk]
        )
        if not rows:
            break
        last_id = rows[-1][0]
        indexes.content.add_many((row[0], row[3]) for row in rows if row[3] is not None)
        indexes.title.add_many((row[0], row[2]) for row in rows if row[2])
        urls = {_url_field(row[1]): row[0] for row in rows if row[1] is not None}
        if urls:
            # The oldest article keeps a URL: setting in id order, first writer wins.
            pipe = client.pipeline(transaction=False)
            for field, article_id in urls.items():
                pipe.hsetnx(redis_store.key("u"), field, article_id)
            pipe.execute()
        total += len(rows)
        if progress is not None and hasattr(progress, "update"):
            progress.update(len(rows))
    generation = secrets.token_hex(8)
    IndexState.objects.update_or_create(
        pk=1,
        defaults={"generation": generation, "built_at": timezone.now(), "article_count": total},
    )
    client.set(redis_store.key("gen"), generation)
    return total


def _url_field(value: int) -> bytes:
    return value.to_bytes(8, "big")


# --- assignment -------------------------------------------------------------


def process_articles(nids: Sequence[str]) -> int:
    """Fingerprint and assign every queued article among `nids`; return how many were done."""
    config = current_config()
    articles = list(Article.objects.filter(nid__in=list(nids), status=ArticleStatus.QUEUED))
    if not articles:
        return 0
    Article.objects.filter(pk__in=[a.pk for a in articles]).update(attempts=F("attempts") + 1)
    features = extract_many([(a.title, a.content) for a in articles], config)
    ensure_index(config)
    indexes = Indexes.open(config)
    done = 0
    for article, feats in zip(articles, features, strict=True):
        if assign(article, feats, config, indexes):
            done += 1
    return done


def _lock_keys(article: Article, feats: Features, config: EngineConfig) -> list[str]:
    keys = [redis_store.key("lock", "c", n, v) for n, v in block_keys(feats.content_fp, config.k)]
    if feats.title_fp:
        keys += [
            redis_store.key("lock", "t", n, v)
            for n, v in block_keys(feats.title_fp, config.title_k)
        ]
    if article.url_hash is not None:
        keys.append(redis_store.key("lock", "u", f"{article.url_hash:x}"))
    return keys


def assign(article: Article, feats: Features, config: EngineConfig, indexes: Indexes) -> bool:
    client = redis_store.client()
    if article.url_hash is None:
        article.url_hash = url_hash(article.url)
    with multi_lock(client, _lock_keys(article, feats, config)):
        if Article.objects.filter(pk=article.pk, status=ArticleStatus.DONE).exists():
            return False  # another worker finished it (a retried job)
        if not index_is_current():
            raise IndexUnavailable("Redis indexes changed under a running job; it will retry")
        matched_by, decision = _cascade(article, feats, config, indexes)
        # Index first, then commit: a crash in between leaves an index entry for an
        # article that is not done yet, which lookups ignore and the retry rewrites.
        indexes.content.add(article.pk, feats.content_fp)
        if feats.title_fp:
            indexes.title.add(article.pk, feats.title_fp)
        client.hsetnx(redis_store.key("u"), _url_field(article.url_hash), article.pk)
        _save_assignment(article, feats, matched_by, decision)
    return True


def _cascade(
    article: Article, feats: Features, config: EngineConfig, indexes: Indexes
) -> tuple[str | None, Decision | None]:
    client = redis_store.client()
    known = client.hget(redis_store.key("u"), _url_field(article.url_hash or 0))
    if known is not None and int(known) != article.pk:
        row = (
            Article.objects.filter(pk=int(known), status=ArticleStatus.DONE)
            .select_related("doc")
            .only("id", "doc__doc_id")
            .first()
        )
        if row is not None and row.doc is not None:
            return MatchedBy.URL, Decision(
                doc_key=row.doc.doc_id, article_id=row.pk, matched_by=MatchedBy.URL,
                distance=0, similarity=1.0,
            )
    ids = {item_id for item_id, _fp, _d in indexes.content.query(feats.content_fp)}
    if feats.title_fp:
        ids.update(item_id for item_id, _fp, _d in indexes.title.query(feats.title_fp))
    ids.discard(article.pk)
    if not ids:
        return None, None
    forbidden: frozenset[str] = frozenset()
    if article.doc_id is not None:  # re-processing: honour the editors' cannot-links
        from articles.editing import cannot_link_docs

        forbidden = cannot_link_docs(article.nid)
    decision = decide(feats, load_candidates(ids), config, forbidden_docs=forbidden)
    if decision is None:
        return None, None
    return decision.matched_by, decision


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


def _save_assignment(
    article: Article, feats: Features, matched_by: str | None, decision: Decision | None
) -> None:
    now = timezone.now()
    with transaction.atomic():
        if article.doc_id is not None:
            detach(article)  # a changed body is re-processed: leave the old doc first
        if decision is not None:
            doc = Doc.objects.select_for_update().select_related("representative").get(
                doc_id=decision.doc_key
            )
            doc.size += 1
            doc.last_seen = max(doc.last_seen, now)
        else:
            doc = Doc.objects.create(
                doc_id=_fresh_doc_id(article.nid), size=1, first_seen=now, last_seen=now
            )
        article.doc = doc
        article.status = ArticleStatus.DONE
        article.failure_reason = ""
        article.matched_by = matched_by
        article.matched_article_id = decision.article_id if decision else None
        article.distance = decision.distance if decision else None
        article.similarity = decision.similarity if decision else None
        article.title_fp = feats.title_fp or None
        article.content_fp = feats.content_fp
        article.features = feats.to_bytes()
        article.processed_at = now
        article.save(
            update_fields=[
                "doc", "status", "failure_reason", "matched_by", "matched_article", "distance",
                "similarity", "title_fp", "content_fp", "features", "processed_at", "url_hash",
            ]
        )
        if decision is None:
            doc.anchor = article
        representatives.on_join(doc, article)


def detach(article: Article) -> None:
    """Take an article out of its doc (MySQL and Redis); the doc re-elects. In a transaction."""
    doc = Doc.objects.select_for_update().get(pk=article.doc_id)
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
    if old is not None:
        config = current_config()
        indexes = Indexes.open(config)
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
    ensure_index(config)
    indexes = Indexes.open(config)
    matches: dict[str, dict] = {}
    if url:
        known = redis_store.client().hget(redis_store.key("u"), _url_field(url_hash(url)))
        row = (
            Article.objects.filter(pk=int(known), doc__isnull=False)
            .values_list("nid", "doc__doc_id").first() if known is not None else None
        )
        if row is not None:
            matches[row[1]] = {"docId": row[1], "nid": row[0], "matchedBy": "url",
                               "distance": 0, "similarity": 1.0, "verified": True}
    hits = {item_id: ("content", dist) for item_id, _fp, dist in indexes.content.query(
        feats.content_fp)}
    if feats.title_fp:
        for item_id, _fp, dist in indexes.title.query(feats.title_fp):
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
