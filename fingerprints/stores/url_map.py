"""The canonical-URL map in Redis: 64-bit URL hash -> the first article with that URL.

Layout: bucket ``{namespace}:{top BUCKET_BITS bits, hex}`` = appended 12-byte records
``<Q url hash><I article id>`` (the block index's record, so its expiry script serves
here too). A lookup reads each distinct bucket once (``MGET``, on a shared pipeline)
and takes, per URL, the smallest id at or above the time window's floor: the first
article with the URL, as MySQL's ``Min(id)`` answers beyond the window.

Why not a Redis hash of URL -> id: a hash field costs ~83 bytes per article at 10M
articles (hash table encoding), a record in a bucket string 12 bytes plus its share of
the bucket key (measured by ``bench/engine.py``). A writer appends a record only for
a URL the map did not answer (the URL's first article); two writers racing on one new
URL hold the same lock stripe (``articles.ingest.assign``), and a duplicate record is
harmless anyway (the smaller id wins). On a Redis Cluster the buckets spread over the
slots like the other indexes' (reads one ``GET`` per bucket, grouped by node).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from fingerprints.stores.redis_records import RecordBuckets, get_many, is_cluster, take_many

BUCKET_BITS = 20
RECORD_DTYPE = np.dtype([("url", "<u8"), ("id", "<u4")])
_RECORD = struct.Struct("<QI")
MAX_ITEM_ID = (1 << 32) - 1
MASK64 = (1 << 64) - 1


def bucket(url_hash: int) -> int:
    return (url_hash & MASK64) >> (64 - BUCKET_BITS)


class PendingUrlLookup:
    """URL lookups queued on a shared pipeline (:meth:`RedisUrlMap.plan`)."""

    def __init__(self, urls: RedisUrlMap, hashes: Sequence[int]) -> None:
        self.urls = urls
        self.hashes = [h & MASK64 for h in hashes]
        self.buckets = sorted({bucket(h) for h in self.hashes if h})
        self.queued = 0

    def queue(self, pipe: Any) -> None:
        self.queued = get_many(pipe, [self.urls.bucket_key(b) for b in self.buckets])

    def collect(self, replies: Iterator[Any]) -> list[int | None]:
        """The first article id of each URL hash, None where the map has none (a zero
        hash, for no URL, never matches)."""
        values = take_many(replies, self.queued)
        records = {b: np.frombuffer(v, dtype=RECORD_DTYPE)
                   for b, v in zip(self.buckets, values, strict=True) if v}
        out: list[int | None] = []
        for h in self.hashes:
            data = records.get(bucket(h)) if h else None
            if data is None:
                out.append(None)
                continue
            ids = data["id"][data["url"] == np.uint64(h)]
            if self.urls.floor:
                ids = ids[ids >= self.urls.floor]
            out.append(int(ids.min()) if len(ids) else None)
        return out


class RedisUrlMap(RecordBuckets):
    """The URL map of one index generation (see the module's docstring)."""

    RECORD_SIZE = RECORD_DTYPE.itemsize
    ID_OFFSET = 8

    def __init__(self, client: Any, namespace: str = "dd:u", *, floor: int = 0) -> None:
        self.client = client
        self.namespace = namespace
        self.floor = floor  # article ids below it are out of the time window
        self.cluster = is_cluster(client)

    def bucket_key(self, number: int) -> str:
        return f"{self.namespace}:{number:05x}"

    def bucket_keys(self, hashes: Iterable[int]) -> list[str]:
        return [self.bucket_key(b) for b in sorted({bucket(h) for h in hashes if h})]

    def add_many(self, items: Iterable[tuple[int, int]], pipe: Any = None) -> None:
        """Append (article id, URL hash) records, zero hashes left out; sent with
        ``pipe`` when given (the caller executes it), else at once."""
        own = pipe is None
        if own:
            pipe = self.client.pipeline(transaction=False)
        for item_id, url_hash in items:
            if not url_hash:
                continue
            if not 0 <= item_id <= MAX_ITEM_ID:
                raise ValueError(f"article id must fit in 32 bits, not {item_id!r}")
            h = url_hash & MASK64
            pipe.append(self.bucket_key(bucket(h)), _RECORD.pack(h, item_id))
        if own:
            pipe.execute()

    def bulk_load(self, item_ids: npt.ArrayLike, hashes: npt.ArrayLike,
                  keys_per_round_trip: int = 2000) -> int:
        """Append many records grouped by bucket (``rebuild_index``), the first article
        of each URL only; returns the records written."""
        ids = np.asarray(item_ids, dtype=np.int64)
        urls = np.asarray(hashes, dtype=np.uint64)
        keep = urls != 0
        ids, urls = ids[keep], urls[keep]
        if not len(ids):
            return 0
        order = np.lexsort((ids, urls))  # by URL, then id: the first of each URL kept
        urls, ids = urls[order], ids[order]
        first = np.r_[True, urls[1:] != urls[:-1]]
        records = np.empty(int(first.sum()), dtype=RECORD_DTYPE)
        records["url"], records["id"] = urls[first], ids[first].astype(np.uint32)
        buckets = records["url"] >> np.uint64(64 - BUCKET_BITS)
        starts = np.flatnonzero(np.r_[True, buckets[1:] != buckets[:-1]])
        ends = np.r_[starts[1:], len(buckets)]
        data = records.tobytes()
        size = RECORD_DTYPE.itemsize
        pipe = self.client.pipeline(transaction=False)
        for n, (lo, hi) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
            pipe.append(self.bucket_key(int(buckets[lo])), data[lo * size : hi * size])
            if (n + 1) % keys_per_round_trip == 0:
                pipe.execute()
        pipe.execute()
        return len(records)

    def plan(self, hashes: Sequence[int]) -> PendingUrlLookup:
        return PendingUrlLookup(self, hashes)

    def lookup(self, hashes: Sequence[int]) -> list[int | None]:
        pending = self.plan(hashes)
        pipe = self.client.pipeline(transaction=False)
        pending.queue(pipe)
        return pending.collect(iter(pipe.execute()))

    def records(self) -> int:
        """How many records the map holds (a SCAN: tests and benches)."""
        total = 0
        for key in self.client.scan_iter(match=f"{self.namespace}:*", count=10_000):
            total += int(self.client.strlen(key)) // RECORD_DTYPE.itemsize
        return total
