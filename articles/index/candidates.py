"""The candidate stores as the Django side opens them: the Redis indexes of the active
generation (:class:`Indexes`) and candidate rows from MySQL (:func:`load_candidates`).

Shared by the write path (:mod:`articles.ingest.assign`) and the read paths
(:mod:`articles.ingest.lookup`). MySQL is the system of record; the Redis indexes are
derived from it and can be rebuilt at any time (``articles.index.reindex``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from articles.index import reindex, window
from articles.lib.bulksql import column, fetch_values, table
from articles.models import Article, ArticleStatus, Doc
from dedupsite import redis_store
from fingerprints.rule import Candidate, EngineConfig, Features
from fingerprints.stores.block_index import RedisBlockIndex
from fingerprints.stores.key_index import RedisKeyIndex
from fingerprints.stores.url_map import RedisUrlMap


class IndexUnavailable(RuntimeError):
    """The Redis indexes are missing or stale and are being rebuilt."""


@dataclass


class Indexes:
    content: RedisBlockIndex
    title: RedisBlockIndex
    pictures: RedisBlockIndex  # picture hashes (Features.pictures)
    keys: RedisKeyIndex
    urls: RedisUrlMap
    generation: str

    floor: int = 0  # the time window (articles/index/window.py): older ids are not found

    @classmethod
    def open(cls, config: EngineConfig, generation: str) -> Indexes:
        client = redis_store.index_client()
        names = reindex.namespaces(generation)
        floor = window.live_floor()
        return cls(
            content=RedisBlockIndex(client, k=config.k, namespace=names["c"], floor=floor),
            title=RedisBlockIndex(client, k=config.title_k, namespace=names["t"], floor=floor),
            pictures=RedisBlockIndex(client, k=config.picture_k, namespace=names["p"],
                                     floor=floor),
            keys=RedisKeyIndex(client, namespace=names["x"], floor=floor),
            urls=RedisUrlMap(client, namespace=names["u"], floor=floor),
            generation=generation, floor=floor,
        )

    def url_owners(self, hashes: Sequence[int], owners: list[int | None]) -> list[int | None]:
        """The URL map's answers (``owners``), completed from MySQL for the URLs it
        does not hold when a window is on (they may have expired from it)."""
        if self.floor:
            missing = [h for h, o in zip(hashes, owners, strict=True) if o is None]
            older = window.owners_beyond_window(missing)
            owners = [o if o is not None else older.get(h) for h, o in
                      zip(hashes, owners, strict=True)]
        return owners


def load_candidates(ids: Iterable[int]) -> list[Candidate]:
    """Candidate members plus the anchor of every candidate doc (no chaining without it),
    in one query: the done members with their doc, and each such doc's anchor with the
    anchor's own doc."""
    ids = sorted({int(i) for i in ids})
    if not ids:
        return []
    a_id, a_doc, a_features = (column(Article, n) for n in ("id", "doc", "features"))
    d_id, d_key, d_anchor = (column(Doc, n) for n in ("id", "doc_id", "anchor"))
    members = f"FROM {table(Article)} a JOIN {table(Doc)} d ON d.{d_id} = a.{a_doc}"
    anchors = (f"JOIN {table(Article)} n ON n.{a_id} = d.{d_anchor} "
               f"JOIN {table(Doc)} e ON e.{d_id} = n.{a_doc}")
    done = (f"WHERE a.{a_id} IN ({', '.join(map(str, ids))}) "
            f"AND a.{column(Article, 'status')} = %s")
    rows = fetch_values(
        f"SELECT a.{a_id}, d.{d_key}, a.{a_features}, d.{d_anchor} {members} {done} "
        f"UNION ALL SELECT n.{a_id}, e.{d_key}, n.{a_features}, e.{d_anchor} "
        f"{members} {anchors} {done}",
        [ArticleStatus.DONE.value, ArticleStatus.DONE.value])
    seen: set[int] = set()
    out = []
    for article_id, doc_key, features, anchor_id in rows:
        if article_id in seen or features is None:
            continue
        seen.add(article_id)
        out.append(Candidate(article_id=article_id, doc_key=doc_key,
                             features=Features.from_bytes(bytes(features)),
                             is_anchor=article_id == anchor_id))
    return out
