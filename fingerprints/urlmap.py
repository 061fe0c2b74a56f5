"""The URL map: canonical-URL hash -> the first article with that URL, in Redis.

On one Redis it is one hash (``{name}``: field = the 8-byte big-endian URL hash), so a
batch's lookups are one ``HMGET``. One hash lives on one node of a Redis Cluster,
though, and the URL map is the largest single structure of the index (83 bytes an
article: docs/scaling.md), so on a cluster it is split into :data:`CLUSTER_SHARDS`
sub-hashes ``{name}:{shard:03x}`` by the top bits of the URL hash (well mixed: mmh3),
which spread over the cluster's slots like the buckets do.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .index import is_cluster

#: sub-hashes of the URL map on a Redis Cluster (a power of two)
CLUSTER_SHARDS = 1024
_SHARD_SHIFT = 64 - (CLUSTER_SHARDS.bit_length() - 1)


def url_field(value: int) -> bytes:
    return value.to_bytes(8, "big")


class PendingUrlLookup:
    """The owners of some URL hashes, read on a shared pipeline (:meth:`RedisUrlMap.plan`):
    one ``HMGET`` per sub-hash touched."""

    def __init__(self, urls: RedisUrlMap, hashes: Sequence[int]) -> None:
        self.urls = urls
        self.hashes = list(hashes)
        self.groups: dict[str, list[int]] = {}  # sub-hash -> positions in `hashes`
        for n, value in enumerate(self.hashes):
            self.groups.setdefault(urls.key_of(value), []).append(n)

    def queue(self, pipe: Any) -> None:
        for key, positions in self.groups.items():
            pipe.hmget(key, [url_field(self.hashes[n]) for n in positions])

    def collect(self, replies: Iterator[Any]) -> list[int | None]:
        owners: list[int | None] = [None] * len(self.hashes)
        for positions in self.groups.values():
            for n, value in zip(positions, next(replies), strict=True):
                owners[n] = int(value) if value is not None else None
        return owners


class RedisUrlMap:
    """URL hash -> article id (the first one indexed: ``HSETNX``)."""

    def __init__(self, client: Any, name: str, *, shards: int | None = None) -> None:
        self.client = client
        self.name = name
        self.shards = shards if shards is not None else (
            CLUSTER_SHARDS if is_cluster(client) else 1)
        if self.shards not in (1, CLUSTER_SHARDS):
            raise ValueError(f"shards must be 1 or {CLUSTER_SHARDS}, not {self.shards!r}")

    def key_of(self, value: int) -> str:
        if self.shards == 1:
            return self.name
        return f"{self.name}:{value >> _SHARD_SHIFT:03x}"

    def keys(self) -> list[str]:
        """Every sub-hash, in the order an expiry pass visits them."""
        if self.shards == 1:
            return [self.name]
        return [f"{self.name}:{shard:03x}" for shard in range(self.shards)]

    def plan(self, hashes: Sequence[int]) -> PendingUrlLookup:
        return PendingUrlLookup(self, hashes)

    def owners(self, hashes: Sequence[int]) -> list[int | None]:
        lookup = self.plan(hashes)
        pipe = self.client.pipeline(transaction=False)
        lookup.queue(pipe)
        return lookup.collect(iter(pipe.execute()))

    def add_many(self, items: Iterable[tuple[int, int]], pipe: Any) -> None:
        """Queue ``HSETNX`` of each (URL hash, article id) on ``pipe`` (the caller runs it)."""
        for value, article_id in items:
            pipe.hsetnx(self.key_of(value), url_field(value), article_id)

    def expire_step(self, cursor: int, floor: int, count: int) -> tuple[int, int]:
        """One step of an expiry pass: ``HSCAN`` about ``count`` fields from ``cursor``
        and delete those whose article is below ``floor``. Sub-hashes are visited in
        turn (the cursor holds ``sub-hash number << 64 | its HSCAN cursor``), several in
        one step while fewer than ``count`` fields were seen. Returns the next cursor
        (0: the pass is complete) and the fields deleted."""
        names = self.keys()
        number, position = divmod(int(cursor), 1 << 64)
        if number >= len(names):
            number, position = 0, 0
        seen = dropped = 0
        while True:
            key = names[number]
            position, fields = self.client.hscan(key, cursor=position, count=count - seen)
            pairs: dict[Any, Any] = fields
            old = [field for field, article in pairs.items() if int(article) < floor]
            if old:
                self.client.hdel(key, *old)
            dropped += len(old)
            seen += len(pairs)
            if int(position) != 0:
                return number << 64 | int(position), dropped
            number += 1
            if number == len(names):
                return 0, dropped
            if seen >= count:
                return number << 64, dropped
