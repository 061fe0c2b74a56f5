"""docId assignment, the write path: a batch of queued articles decided under one lock
with :func:`fingerprints.rule.cascade` against the Redis indexes and the batch itself,
then saved in one transaction and indexed.

MySQL is the system of record; the Redis indexes are derived from it and can be rebuilt
at any time (``articles.index.reindex.rebuild_index``). The read paths over the same
stores are in :mod:`articles.ingest.lookup`; docs/engine.md has the rule.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from articles.changes import log as changes
from articles.images.hashes import read_pictures, stock_pictures
from articles.index import markers, reindex
from articles.index.candidates import Indexes, IndexUnavailable, load_candidates
from articles.index.locks import StaleValue, multi_lock
from articles.ingest import boilerplate
from articles.lib.bulksql import (
    column,
    fetch_models,
    insert_rows,
    placeholders,
    prep,
    select_list,
    table,
    update_rows,
)
from articles.models import ApiKey, Article, ArticleStatus, Doc, DocStatus, EditorLink
from articles.representatives import election
from articles.tuning.boilerplate import active_boilerplate
from articles.tuning.state import active_config, active_state, active_version
from dedupsite import metrics, redis_store
from fingerprints.rule import (
    Candidate,
    EngineConfig,
    Features,
    Match,
    cascade,
    content_probes,
    extract_many,
)
from fingerprints.rule.blocks import block_values
from fingerprints.rule.ids import make_doc_id, splitmix64_finalize, url_hash
from fingerprints.rule.keys import query_keys, stored_keys
from fingerprints.rule.picture_evidence import without_stock
from fingerprints.stores.block_index import near_pairs_by_block

# The batch's locks live this long unless renewed; the holder renews them every third
# of it, so a killed worker blocks the batches after it for at most this long.
BATCH_LOCK_TTL_MS = 10_000
# A batch at least this big writes its features before taking the lock (one more
# statement, a shorter critical section); a smaller one writes everything at once.
PREWRITE_MIN = 8
_MATCH_FIELDS = ("doc", "matched_by", "matched_article", "distance", "similarity",
                 "match_probability", "match_explanation")
_FEATURE_FIELDS = ("title_fp", "content_fp", "features", "url_hash")


def process_articles(nids: Sequence[str], *, count_attempt: bool = True) -> int:
    """Fingerprint and assign every queued article among `nids`; return how many were done.

    `count_attempt=False` when called inside the request that stored them (the
    attempt counter records queue jobs, which may die and be retried).

    The whole batch is decided under one lock on the stripes of its index buckets,
    with one candidate load, one transaction and one index write: round trips
    per batch, not per article.
    """
    return len(assign(nids, count_attempt=count_attempt))


def assign(nids: Sequence[str] | Sequence[Article], *, count_attempt: bool = True
           ) -> list[Article]:
    """:func:`process_articles`, returning the articles it assigned, each with its doc
    and the doc's representative as committed (for an answer without reading them back).

    ``nids`` may instead be the queued Article objects the caller has just inserted
    (with their ids): they are not read again. A job that finished them in the
    meantime is still noticed under the lock."""
    started = time.perf_counter()
    config, live = _active_index()
    articles = _queued(nids)
    if not articles:
        return []
    if count_attempt:
        Article.objects.filter(pk__in=[a.pk for a in articles]).update(
            attempts=F("attempts") + 1)
    known = active_boilerplate()
    features = _extract(articles, config, known)
    prewritten = _prewrite(articles)
    indexes = Indexes.open(config, live)
    probes = [content_probes(f, config) for f in features]
    keys = _lock_keys(list(zip(articles, features, strict=True)), probes, config)
    # The generation is checked in the acquiring script (StaleValue): a switch sets the
    # gate, waits for the batches holding locks, then moves the generation, so it cannot
    # slip in between the check and the locks.
    with _batch_lock(keys, indexes):
        todo, todo_probes = _not_finished(articles, features, probes)
        if not todo:
            return []
        vacated = _leave_old_docs(todo)
        matches, first_urls, stock = _match_batch(todo, todo_probes, config, indexes)
        # Index first, then commit: a crash in between leaves index entries for
        # articles that are not done, which lookups ignore and the retry rewrites.
        _write_index(todo, first_urls, stock, indexes)
        _save_batch(todo, matches, active_version(), features_written=prewritten,
                    vacated=vacated)
    # Outside the lock and after the commit: each new story's clauses are counted once.
    # An article whose body is not about its title counts as a story of its own even
    # when it joined a doc: near-identical redirect pages and disclaimers join each other
    # and would never be counted otherwise.
    boilerplate.learn([a for (a, f), d in zip(todo, matches, strict=True)
                       if d is None or f.off_title], config, known)
    _count_processed(matches, time.perf_counter() - started)
    return [a for a, _f in todo]


def _active_index() -> tuple[EngineConfig, str]:
    """The active configuration and the generation of the index that is live now."""
    generation, config = active_state()
    live = reindex.ensure_index(generation)
    if live != generation:  # a reused state older than an index switch (or a rebuild)
        generation, config = active_state(max_age_ms=0)
        live = reindex.ensure_index(generation)
    return config, live


def _queued(nids: Sequence[str] | Sequence[Article]) -> list[Article]:
    """The queued articles of ``nids`` in arrival order, or the caller's own just-inserted
    Article objects (the API's inline path), which are not read again."""
    if nids and all(isinstance(n, Article) and n.pk for n in nids):
        return sorted((a for a in nids if isinstance(a, Article)), key=lambda a: a.pk)
    return list(Article.objects.filter(nid__in=[str(n) for n in nids],
                                       status=ArticleStatus.QUEUED).order_by("id"))


def _extract(articles: list[Article], config: EngineConfig, known: frozenset[int]
             ) -> list[Features]:
    """Each article's features (with the pictures already read for one decided before),
    set on its row's fields, not saved."""
    features = extract_many([(a.title, a.content) for a in articles], config,
                            boilerplate=known)
    features = _with_pictures(articles, features)
    for article, feats in zip(articles, features, strict=True):
        if article.url_hash is None:
            article.url_hash = url_hash(article.url)
        article.title_fp = feats.title_fp or None
        article.content_fp = feats.content_fp
        article.features = feats.to_bytes()
    return features


def _prewrite(articles: list[Article]) -> bool:
    """Write the bulky columns before the lock (while queued, nobody reads them), so the
    locked UPDATE only names the doc and the match; whether it did. Not for a small batch,
    nor when an article is processed again: detach() reads its old fingerprints from the
    row to leave the index."""
    if len(articles) < PREWRITE_MIN or any(a.doc_pk is not None for a in articles):
        return False
    update_rows(Article, _FEATURE_FIELDS, [(a.pk, _feature_values(a)) for a in articles],
                only_if={"status": ArticleStatus.QUEUED.value})
    return True


def _not_finished(articles: list[Article], features: list[Features],
                  probes: list[list[int]]
                  ) -> tuple[list[tuple[Article, Features]], list[list[int]]]:
    """The batch without the articles another worker finished meanwhile (a retried job,
    the watchdog), read under the batch's locks: (article, features) and their probes."""
    finished = set(Article.objects.filter(pk__in=[a.pk for a in articles],
                                          status=ArticleStatus.DONE)
                   .values_list("pk", flat=True))
    kept = [n for n, a in enumerate(articles) if a.pk not in finished]
    return [(articles[n], features[n]) for n in kept], [probes[n] for n in kept]


def _leave_old_docs(todo: list[tuple[Article, Features]]) -> dict[int, int]:
    """A changed body (or one whose pictures were read) is processed again: the article
    leaves its old doc first, under the batch's locks, so that two jobs for one batch
    cannot both take it out of its doc. Returns article -> the doc it left."""
    vacated: dict[int, int] = {}
    for article, _f in todo:
        if article.doc_pk is not None:
            vacated[article.pk] = article.doc_pk
            with transaction.atomic(), changes.cause("redecide"):
                detach(article)
    return vacated


def _write_index(todo: list[tuple[Article, Features]], first_urls: list[bool],
                 stock: frozenset[int], indexes: Indexes) -> None:
    """The batch's index entries (content, title, pictures but stock ones, the URLs first
    seen, the keys); with an index Redis of its own, its markers are read after the
    writes on each node: one missing means that node restarted empty, maybe before this
    batch's lookups, and the batch fails (IndexUnavailable) to be retried."""
    indexes.content.add_many((a.pk, f.content_fp) for a, f in todo)
    indexes.title.add_many((a.pk, f.title_fp) for a, f in todo if f.title_fp)
    indexes.pictures.add_many((a.pk, p) for a, f in todo for p in f.pictures
                              if p not in stock)
    pipe = indexes.content.client.pipeline(transaction=False)
    indexes.urls.add_many(((a.pk, a.url_hash or 0) for (a, _f), first in
                           zip(todo, first_urls, strict=True) if first), pipe)
    indexes.keys.add_many(((a.pk, stored_keys(f.keys)) for a, f in todo), pipe)
    checks = markers.queue_check(pipe, indexes.generation)
    replies = pipe.execute()
    if checks and not markers.all_present(iter(replies[-checks:]), checks):
        reindex.forget_generation(indexes.generation)
        raise IndexUnavailable("the index Redis lost the index; it is rebuilt, the "
                               "batch will retry")


def _with_pictures(articles: list[Article], features: list[Features]) -> list[Features]:
    """``features`` with the pictures read for each article decided before (a new
    article's pictures are fetched after its first decision: articles/images/)."""
    again = [a.pk for a in articles if a.doc_pk is not None]
    if not again:
        return features
    shown = read_pictures(again)
    return [replace(f, pictures=shown[a.pk]) if a.pk in shown else f
            for a, f in zip(articles, features, strict=True)]


def _count_processed(matches: Sequence[Match | None], seconds: float) -> None:
    reasons = Counter(m.matched_by if m is not None else "new" for m in matches)
    with metrics.record() as m:
        for reason, n in reasons.items():
            m.inc("dedupsite_articles_processed_total", n, reason=reason)
        m.observe("dedupsite_processing_seconds", seconds, scope="batch")
        m.observe("dedupsite_processing_seconds", seconds / len(matches), len(matches),
                  scope="article")


@contextlib.contextmanager
def _batch_lock(keys: list[str], indexes: Indexes) -> Iterator[None]:
    try:
        lock = multi_lock(redis_store.client(), keys, ttl_ms=BATCH_LOCK_TTL_MS, wait_s=300,
                          gate=reindex.gate_key(), renew=True,
                          expect=(reindex.generation_key(), indexes.generation))
        lock.__enter__()
    except StaleValue:
        raise IndexUnavailable("the index was switched under a running job; it will retry"
                               ) from None
    with contextlib.ExitStack() as stack:
        stack.push(lock)  # entered above: the stack only releases it
        yield


def _lock_keys(todo: Sequence[tuple[Article, Features]], probes: Sequence[list[int]],
               config: EngineConfig) -> list[str]:
    """The lock stripes of every index bucket the batch reads or writes.

    Each bucket (content or title block, or URL hash) maps to one of
    ``INDEX_LOCK_STRIPES`` stripes; two articles that share a bucket share its stripe,
    so near-duplicates are serialised as with one lock per bucket, while a batch locks
    at most that many keys (a batch of 200 articles reads ~6,000 buckets).
    The buckets of the probes count too: two articles that can find each other
    through a probe share that probe's bucket.
    """
    content = [fp for (_a, f), p in zip(todo, probes, strict=True) for fp in (f.content_fp, *p)]
    parts = [_bucket_ids(content, config.k, 0),
             _bucket_ids([f.title_fp for _a, f in todo if f.title_fp], config.title_k, 1)]
    urls = [a.url_hash for a, _f in todo if a.url_hash is not None]
    parts.append(np.asarray(urls, dtype=np.uint64) ^ np.uint64(2 << 56))
    # the key index: two articles that find each other there share one of their keys
    keys = [key for _a, f in todo for key in query_keys(f.keys)]
    parts.append(np.asarray(keys, dtype=np.uint64) ^ np.uint64(3 << 56))
    pictures = [p for _a, f in todo for p in f.pictures]
    if pictures:  # two articles that find each other by a picture share its bucket
        parts.append(_bucket_ids(pictures, config.picture_k, 4))
    mixed = splitmix64_finalize(np.concatenate(parts))
    stripes = np.unique(mixed % np.uint64(settings.INDEX_LOCK_STRIPES))
    prefix = redis_store.key("lock", "s")
    return [f"{prefix}:{s}" for s in stripes.tolist()]


def _bucket_ids(fps: Sequence[int], k: int, kind: int) -> npt.NDArray[np.uint64]:
    """A 64-bit id per (kind, block number, block value) of each fingerprint. Two
    buckets may share an id when blocks are wider than 48 bits (k < 2): that only
    serialises a little more."""
    blocks = block_values(fps, k)
    tags = np.array([kind << 56 | number << 48 for number in range(k + 1)], dtype=np.uint64)
    result: npt.NDArray[np.uint64] = (blocks ^ tags).ravel()
    return result


@dataclass
class _Found:
    """What the index answered for each article of a batch, in one round trip."""

    in_map: list[int | None]  # the URL map's owner of each article's URL
    url_owners: list[int | None]  # the same, completed from MySQL beyond the window
    hits: list[set[int]]  # the ids the content, title, key and picture lookups found


def _match_batch(
    todo: list[tuple[Article, Features]], probes: list[list[int]], config: EngineConfig,
    indexes: Indexes,
) -> tuple[list[Match | None], list[bool], frozenset[int]]:
    """Match each article in order against the index and the batch's earlier articles
    (:func:`fingerprints.rule.cascade`, the one rule every engine calls).
    Also says which articles are the first with their URL (the URL map records them),
    and which of the pictures involved are stock (:mod:`articles.images.hashes`).

    Three steps: look up (:func:`_look_up`), read the candidates' rows and set stock
    pictures aside (:func:`_stored_candidates`), decide in arrival order
    (:func:`_decide_in_order`)."""
    pictured, stock = _pictures_to_look_up(todo, config)
    found = _look_up(todo, probes, pictured, config, indexes)
    stored, todo, stock = _stored_candidates(todo, found, bool(pictured), stock, config)
    matches, first_urls = _decide_in_order(todo, probes, found, stored, config)
    return matches, first_urls, stock


def _look_up(todo: list[tuple[Article, Features]], probes: list[list[int]],
             pictured: list[tuple[int, int]], config: EngineConfig, indexes: Indexes
             ) -> _Found:
    """The URL hashes, the content buckets (with the probes), the title buckets, the keys
    and the pictures of the whole batch: one round trip (on a cluster, one per node,
    sent together)."""
    pipe = indexes.content.client.pipeline(transaction=False)
    url_lookup = indexes.urls.plan([a.url_hash or 0 for a, _ in todo])
    url_lookup.queue(pipe)
    content_lookup = indexes.content.plan_probes(
        [[f.content_fp, *p] for (_a, f), p in zip(todo, probes, strict=True)],
        config.content_radius)
    titled = [(n, f.title_fp) for n, (_a, f) in enumerate(todo) if f.title_fp]
    title_lookup = indexes.title.plan_many([fp for _n, fp in titled], config.title_radius)
    key_lookup = indexes.keys.plan([query_keys(f.keys) for _a, f in todo])
    picture_lookup = (indexes.pictures.plan_many([p for _n, p in pictured],
                                                 config.picture_bits) if pictured else None)
    content_lookup.queue(pipe)
    title_lookup.queue(pipe)
    key_lookup.queue(pipe)
    if picture_lookup is not None:
        picture_lookup.queue(pipe)
    replies = iter(pipe.execute())
    in_map = url_lookup.collect(replies)
    url_owners = indexes.url_owners([a.url_hash or 0 for a, _ in todo], list(in_map))
    content_hits = content_lookup.collect(replies)
    title_hits = dict(zip([n for n, _fp in titled], title_lookup.collect(replies),
                          strict=True))
    key_hits = key_lookup.collect(replies)
    picture_hits: dict[int, set[int]] = {}
    if picture_lookup is not None:
        for (n, _p), near in zip(pictured, picture_lookup.collect(replies), strict=True):
            picture_hits.setdefault(n, set()).update(i for i, _fp, _d in near)
    hits: list[set[int]] = []
    for n, (article, feats) in enumerate(todo):
        ids = {i for i, _fp, _d in content_hits[n]} if feats.content_fp else set()
        ids.update(i for i, _fp, _d in title_hits.get(n, ()))
        ids.update(key_hits[n])
        ids.update(picture_hits.get(n, ()))
        ids.discard(article.pk)
        hits.append(ids)
    return _Found(list(in_map), url_owners, hits)


def _stored_candidates(todo: list[tuple[Article, Features]], found: _Found, pictured: bool,
                       stock: frozenset[int], config: EngineConfig,
                       ) -> tuple[list[Candidate], list[tuple[Article, Features]],
                                  frozenset[int]]:
    """The rows of every article the lookups found or that owns a URL (with each doc's
    anchor), and the batch and those rows without the stock pictures among them (which
    are returned too): a stock picture is no evidence for or against a match."""
    known_urls = {v for v in found.url_owners if v is not None}
    stored = load_candidates(set().union(*found.hits) | known_urls)
    if pictured or stock:
        theirs = {p for c in stored for p in c.features.pictures} - stock
        stock |= stock_pictures(theirs, [a.pk for a, _f in todo], config.boilerplate_min_docs)
        stored = [replace(c, features=without_stock(c.features, stock)) for c in stored]
        todo = [(a, without_stock(f, stock)) for a, f in todo]
    return stored, todo, stock


def _decide_in_order(todo: list[tuple[Article, Features]], probes: list[list[int]],
                     found: _Found, stored: list[Candidate], config: EngineConfig,
                     ) -> tuple[list[Match | None], list[bool]]:
    """Each article's match (or None: it founds a doc), in arrival order; the batch's
    earlier articles are candidates for later ones, found as an index lookup of each
    probe would find them (NumPy over the batch). Also whether each article is the first
    with its URL (the URL map records it)."""
    by_id = {c.article_id: c for c in stored}
    near_content = near_pairs_by_block(
        [[f.content_fp, *p] for (_a, f), p in zip(todo, probes, strict=True)],
        [f.content_fp for _a, f in todo], config.k, config.content_radius)
    near_title = near_pairs_by_block(
        [[f.title_fp] if f.title_fp else [] for _a, f in todo],
        [f.title_fp for _a, f in todo], config.title_k, config.title_radius)
    local: dict[int, Candidate] = {}
    local_urls: dict[int, int] = {}
    batch_keys: dict[int, list[int]] = {}  # stored key -> positions in the batch so far
    # the anchor of each doc among the candidates (decide() needs it: no chaining)
    anchors: dict[str, list[Candidate]] = {}
    for c in stored:
        if c.is_anchor:
            anchors.setdefault(c.doc_key, []).append(c)
    matches: list[Match | None] = []
    first_urls: list[bool] = []
    may_take_url = _url_trust(todo, {v for v in found.url_owners if v is not None})
    for n, ((article, feats), ids, url_hit) in enumerate(zip(todo, found.hits,
                                                             found.url_owners, strict=True)):
        # recorded when the map has not got the URL (new, or known only to MySQL
        # beyond the window: then later articles find it in Redis again)
        first_urls.append(bool(article.url_hash) and found.in_map[n] is None
                          and (article.url_hash or 0) not in local_urls)
        url_owner = url_hit if url_hit is not None else local_urls.get(article.url_hash or 0)
        owner = by_id.get(url_owner) or local.get(url_owner) if url_owner else None
        ids = set(ids)
        ids.update(todo[j][0].pk for j in near_content[n] if j < n)
        ids.update(todo[j][0].pk for j in near_title[n] if j < n and todo[j][1].title_fp)
        ids.update(todo[j][0].pk for key in query_keys(feats.keys)
                   for j in batch_keys.get(key, ()))
        if owner is not None and url_owner != article.pk and not may_take_url(article,
                                                                               owner):
            # another crawler's URL: its article is a candidate like any other, verified
            ids.add(owner.article_id)
            owner = None
        hits = [by_id[i] if i in by_id else local[i] for i in ids if i in by_id or i in local]
        match = cascade(
            feats, url_owner=owner if owner is not None and url_owner != article.pk else None,
            hits=hits, anchors_of=lambda key: anchors.get(key, ()), config=config,
            forbidden_docs=_forbidden(article) if hits else frozenset())
        matches.append(match)
        doc_key = match.doc_key if match else _new_doc_key(article)
        local[article.pk] = Candidate(article.pk, doc_key, feats, is_anchor=match is None)
        if match is None:
            anchors.setdefault(doc_key, []).append(local[article.pk])
        local_urls.setdefault(article.url_hash or 0, article.pk)
        # what the key index will hold for it: found by later articles of the batch
        for key in stored_keys(feats.keys):
            batch_keys.setdefault(key, []).append(n)
    return matches, first_urls


def _pictures_to_look_up(todo: list[tuple[Article, Features]], config: EngineConfig
                        ) -> tuple[list[tuple[int, int]], frozenset[int]]:
    """The (position, picture) pairs of the batch to look up, and the batch's stock
    pictures: no evidence, and not looked up (an article decided again once its pictures
    were read)."""
    pictured = [(n, p) for n, (_a, f) in enumerate(todo) for p in f.pictures]
    if not pictured:
        return [], frozenset()
    stock = stock_pictures([p for _n, p in pictured], [a.pk for a, _f in todo],
                           config.boilerplate_min_docs)
    return [(n, p) for n, p in pictured if p not in stock], stock


def _url_trust(todo: Sequence[tuple[Article, Features]], stored_owners: Iterable[int]
               ) -> Callable[[Article, Candidate], bool]:
    """May ``article`` join ``owner``'s doc by URL alone? Only when both came with the
    same API key, either came with none (a command), or the article's key may change
    other keys' articles (the admin's *may change others*). Otherwise another crawler
    could post its own text under a known URL, join the story unverified and, with a
    higher hotness, have its text pushed as the story's representative."""
    keys: dict[int, int | None] = {}
    trusted: set[int] = set()
    loaded = False

    def load() -> None:  # at the first URL match of the batch, not for every batch
        keys.update(Article.objects.filter(pk__in=list(stored_owners))
                    .values_list("id", "api_key_id"))
        keys.update((a.pk, a.api_key_id) for a, _f in todo)
        trusted.update(ApiKey.objects.filter(
            pk__in={a.api_key_id for a, _f in todo if a.api_key_id is not None},
            may_change_others=True).values_list("pk", flat=True))

    def may_take(article: Article, owner: Candidate) -> bool:
        nonlocal loaded
        if article.api_key_id is None:
            return True
        if not loaded:
            load()
            loaded = True
        theirs = keys.get(owner.article_id)
        return theirs is None or article.api_key_id == theirs or article.api_key_id in trusted

    return may_take


def _new_doc_key(article: Article) -> str:
    return f"new:{article.pk}"


def _forbidden(article: Article) -> frozenset[str]:
    if not article.pinned and not article.matched_by:
        return frozenset()
    return EditorLink.objects.cannot_link_docs(article.nid)


_DOC_FIELDS = tuple(f.name for f in Doc._meta.concrete_fields)
# a representative as the doc's answer and the election need it: not its text
_REP_FIELDS = tuple(f.name for f in Article._meta.concrete_fields
                    if f.name not in ("content", "features"))


def _locked_docs(doc_ids: Iterable[str]) -> dict[str, Doc]:
    """The docs named, locked (FOR UPDATE) with their representative, in one query."""
    keys = sorted(set(doc_ids))
    if not keys:
        return {}
    sql = (f"SELECT {select_list('d', Doc, _DOC_FIELDS)}, "
           f"{select_list('r', Article, _REP_FIELDS)} "
           f"FROM {table(Doc)} d LEFT JOIN {table(Article)} r "
           f"ON r.{column(Article, 'id')} = d.{column(Doc, 'representative')} "
           f"WHERE d.{column(Doc, 'doc_id')} IN ({placeholders(len(keys))})")
    if connection.features.has_select_for_update:
        sql += " FOR UPDATE"
    out: dict[str, Doc] = {}
    for doc, rep in fetch_models(sql, keys, [(Doc, "d", _DOC_FIELDS),
                                             (Article, "r", _REP_FIELDS)]):
        assert isinstance(doc, Doc)
        if rep is not None:
            doc.representative = rep  # type: ignore[assignment]
        out[doc.doc_id] = doc
    return out


def _save_batch(todo: list[tuple[Article, Features]], matches: list[Match | None],
                settings_version: int | None, *, features_written: bool = False,
                vacated: dict[int, int] | None = None) -> None:
    """One transaction: new docs, joins, articles, representatives and outbox rows.

    ``vacated``: article -> the doc it left to be decided again. An article that founds
    a doc again while the doc it left is empty takes that doc back: an article alone
    in its docId keeps the docId when it is decided again on its own."""
    now = timezone.now()
    with transaction.atomic():
        anchors = [a for (a, _f), m in zip(todo, matches, strict=True) if m is None]
        back = _empty_docs_back(anchors, vacated or {})
        anchors = [a for a in anchors if _new_doc_key(a) not in back]
        wanted = [make_doc_id(a.nid) for a in anchors]
        taken = set(Doc.objects.filter(doc_id__in=wanted).values_list("doc_id", flat=True)
                    ) if wanted else set()
        new_docs = {}
        for article in anchors:
            doc_id = make_doc_id(article.nid)
            if doc_id in taken:
                doc_id = Doc.objects.fresh_doc_id(article.nid)
            new_docs[_new_doc_key(article)] = Doc(
                doc_id=doc_id, anchor=article, representative=article, size=0,
                first_seen=now, last_seen=now, created_at=now, updated_at=now,
            )
        stamp = prep(Doc, "first_seen", now)
        last_id = insert_rows(Doc, ("doc_id", "status", "anchor", "representative",
                          "representative_pinned", "rep_version", "size", "first_seen",
                          "last_seen", "created_at", "updated_at"),
                    [(d.doc_id, DocStatus.AUTO.value, d.anchor_id, d.representative_id,
                      False, 0, 0, stamp, stamp, stamp, stamp) for d in new_docs.values()])
        existing_keys = {m.doc_key for m in matches if m is not None} - set(new_docs)
        existing = _locked_docs(existing_keys)
        if len(new_docs) == 1 and last_id:
            next(iter(new_docs.values())).pk = last_id
        elif new_docs:
            ids = dict(Doc.objects.filter(doc_id__in=[d.doc_id for d in new_docs.values()])
                       .values_list("doc_id", "id"))
            for doc in new_docs.values():
                doc.pk = ids[doc.doc_id]
        docs = {**existing, **new_docs, **back}
        joined: dict[str, list[Article]] = {}
        for (article, _feats), match in zip(todo, matches, strict=True):
            key = match.doc_key if match else _new_doc_key(article)
            doc = docs[key]
            article.doc = doc
            article.status = ArticleStatus.DONE
            article.failure_reason = ""
            article.matched_by = match.matched_by if match else None
            article.matched_article_id = match.article_id if match else None
            article.distance = match.distance if match else None
            article.similarity = match.similarity if match else None
            article.match_probability, article.match_explanation = _explained(match)
            article.processed_at = now
            article.settings_version = settings_version
            joined.setdefault(key, []).append(article)
        _update_articles([a for a, _f in todo], now, settings_version,
                         with_features=not features_written)
        elected = election.on_batch_join(docs, joined, now)
        # last: the change log's cursors are taken once every row lock is held
        changes.record(_membership_changes(todo, vacated or {}) + elected)


def _membership_changes(todo: list[tuple[Article, Features]], vacated: dict[int, int]
                        ) -> list[changes.Pending]:
    """The batch's changes of docId: every new article (reason ``ingest``), and every
    article decided again (``redecide``) whose docId is not the one it left."""
    left = dict(Doc.objects.filter(pk__in=set(vacated.values())).values_list("pk", "doc_id")
                ) if vacated else {}
    found = []
    for article, _f in todo:
        assert article.doc is not None
        previous = left.get(vacated[article.pk], "") if article.pk in vacated else ""
        if article.doc.doc_id != previous:
            found.append(changes.membership(article.nid, article.doc.doc_id, previous,
                                            article.api_key_id,
                                            "redecide" if article.pk in vacated else "ingest"))
    return found


def _empty_docs_back(anchors: list[Article], vacated: dict[int, int]) -> dict[str, Doc]:
    """The docs the ``anchors`` left that are empty now, locked, each given back to its
    article as its anchor (keyed like a new doc: :func:`_new_doc_key`)."""
    left = {vacated[a.pk]: a for a in anchors if a.pk in vacated}
    if not left:
        return {}
    back: dict[str, Doc] = {}
    for doc in Doc.objects.select_for_update().filter(pk__in=list(left), size=0):
        article = left[doc.pk]
        doc.anchor, doc.representative = article, article
        doc.save(update_fields=["anchor", "representative", "updated_at"])
        back[_new_doc_key(article)] = doc
    return back


def _explained(match: Match | None) -> tuple[float | None, dict[str, Any] | None]:
    """(match probability, explanation) of the engine's answer: the model's score; a
    canonical-URL match is a hard rule (probability 1); a new docId has neither."""
    if match is None:
        return None, None
    if match.score is None:
        return 1.0, {"rule": match.matched_by}
    return match.score.probability, match.score.as_dict()


def _feature_values(a: Article) -> tuple[Any, ...]:
    return (prep(Article, "title_fp", a.title_fp), prep(Article, "content_fp", a.content_fp),
            a.features, prep(Article, "url_hash", a.url_hash))


def _update_articles(articles: list[Article], now: Any, settings_version: int | None, *,
                     with_features: bool = True) -> None:
    """One UPDATE for the batch (articles/lib/bulksql.py): per-row fields by CASE, the
    rest the same for every row."""
    names = _MATCH_FIELDS + (_FEATURE_FIELDS if with_features else ())
    rows = [(a.pk, (a.doc_pk, a.matched_by, a.matched_article_id, a.distance, a.similarity,
                    a.match_probability,
                    prep(Article, "match_explanation", a.match_explanation))
             + (_feature_values(a) if with_features else ()))
            for a in articles]
    update_rows(Article, names, rows, constants={
        "status": ArticleStatus.DONE.value, "failure_reason": "",
        "processed_at": prep(Article, "processed_at", now),
        "settings_version": settings_version,
    })


def detach(article: Article) -> None:
    """Take an article out of its doc (MySQL and Redis); the doc re-elects. In a transaction.

    The article's doc is read again under a row lock: if another job already took it
    out, nothing changes.
    """
    found = Article.objects.filter(pk=article.pk).lock_with_doc()
    if found is None or found[0].doc_pk is None:
        article.doc = None
        return
    doc = found[1][found[0].doc_pk]
    doc.lose_member(article.pk)
    doc.save(update_fields=["size", "anchor", "updated_at"])
    Article.objects.filter(pk=article.pk).update(doc=None)
    article.doc = None
    old = Article.objects.filter(pk=article.pk).values_list("title_fp", "content_fp",
                                                           "features").first()
    generation = reindex.active_generation()
    if old is not None and generation is not None:
        config = active_config()
        indexes = Indexes.open(config, generation)
        if old[1] is not None:
            indexes.content.remove(article.pk, old[1])
        if old[0]:
            indexes.title.remove(article.pk, old[0])
        if old[2]:
            stored = Features.from_bytes(bytes(old[2]))
            indexes.keys.remove(article.pk, stored_keys(stored.keys))
            for picture in stored.pictures:
                indexes.pictures.remove(article.pk, picture)
    election.refresh(doc)


def mark_failed(nids: Sequence[str], reason: str) -> None:
    Article.objects.filter(nid__in=list(nids), status=ArticleStatus.QUEUED).update(
        status=ArticleStatus.FAILED, failure_reason=reason[:2000]
    )
