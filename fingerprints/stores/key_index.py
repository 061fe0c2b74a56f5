"""The key index: exact-match keys (:mod:`fingerprints.rule.keys`) -> article ids.

Each stored key takes 8 bytes (``<I key><I item id>``) in a bucket named by the
key's top :data:`BUCKET_BITS` bits. In memory (:class:`MemoryKeyIndex`) or on
Redis (:class:`RedisKeyIndex`), one Redis or a Redis Cluster.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from fingerprints.rule.kernel import kernel
from fingerprints.stores.redis_records import RecordBuckets, get_many, is_cluster, take_many

BUCKET_BITS = 20
_WHOLE_KEY = ((0, 64),)  # MemoryKeyIndex's one block: the key itself


class MemoryKeyIndex:
    """key -> item ids, in memory (batch runs, benchmarks, tests): the C kernel's
    buckets (``kernel.BlockTable`` with one block, the whole key: a lookup at distance
    0 is an exact match) when it is built, else a dict; ``compiled`` forces one or the
    other. Both find the same items."""

    def __init__(self, *, compiled: bool | None = None) -> None:
        if compiled is None:
            compiled = kernel is not None
        elif compiled and kernel is None:
            raise RuntimeError("the C kernel fingerprints.rule._kernel is not built")
        self._table = kernel.BlockTable(_WHOLE_KEY) if compiled and kernel else None
        self._items: dict[int, list[int]] = {}

    def add(self, item_id: int, keys: Iterable[int]) -> None:
        if self._table is not None:
            add = self._table.add
            for key in keys:
                add(item_id, key)
            return
        items = self._items
        for key in keys:
            found = items.get(key)
            if found is None:
                items[key] = [item_id]
            else:
                found.append(item_id)

    def remove(self, item_id: int, keys: Iterable[int]) -> None:
        if self._table is not None:
            for key in keys:
                self._table.remove(item_id, key)
            return
        for key in keys:
            items = self._items.get(key)
            if items and item_id in items:
                items.remove(item_id)

    def query(self, keys: Iterable[int]) -> set[int]:
        if self._table is not None:
            return set(self._table.query_union(keys, 0))
        items = self._items
        found: set[int] = set()
        for key in items.keys() & keys:  # most keys are in no article: matched in C
            found.update(items[key])
        return found

    def clear(self) -> None:
        if self._table is not None:
            self._table.clear()
        self._items.clear()


_RECORD = struct.Struct("<II")
RECORD_DTYPE = np.dtype([("key", "<u4"), ("id", "<u4")])
_DTYPE = RECORD_DTYPE
MAX_ITEM_ID = (1 << 32) - 1

# Remove the 8-byte record ARGV[1] from each bucket KEYS[i] (aligned matches only).
_REMOVE_LUA = """
local record = ARGV[1]
local changed = 0
for i = 1, #KEYS do
  local data = redis.call('GET', KEYS[i])
  if data then
    local parts, removed = {}, false
    for pos = 1, string.len(data), 8 do
      local chunk = string.sub(data, pos, pos + 7)
      if chunk == record then removed = true else parts[#parts + 1] = chunk end
    end
    if removed then
      changed = changed + 1
      if #parts == 0 then redis.call('DEL', KEYS[i])
      else redis.call('SET', KEYS[i], table.concat(parts)) end
    end
  end
end
return changed
"""


class PendingKeyLookup:
    """Key lookups of several articles as one ``MGET`` queued on a shared pipeline
    (:meth:`RedisKeyIndex.plan`)."""

    def __init__(self, index: RedisKeyIndex, groups: Sequence[Sequence[int]]) -> None:
        self.index = index
        self.groups = [list(g) for g in groups]
        buckets = sorted({index.bucket(k) for g in self.groups for k in g})
        self.buckets = buckets
        self.queued = 0

    def queue(self, pipe: Any) -> None:
        self.queued = get_many(pipe, [self.index.bucket_key(b) for b in self.buckets])

    def collect(self, replies: Any) -> list[set[int]]:
        values = take_many(replies, self.queued)
        records: dict[int, npt.NDArray[Any]] = {}
        for bucket, value in zip(self.buckets, values, strict=True):
            if value:
                records[bucket] = np.frombuffer(value, dtype=_DTYPE)
        out: list[set[int]] = []
        for group in self.groups:
            found: set[int] = set()
            for key in group:
                data = records.get(self.index.bucket(key))
                if data is not None:
                    wanted = data["key"] == key
                    if self.index.floor:
                        wanted &= data["id"] >= self.index.floor
                    found.update(data["id"][wanted].tolist())
            out.append(found)
        return out


class RedisKeyIndex(RecordBuckets):
    """The key index in Redis, shared by every worker: bucket
    ``{namespace}:{top bits hex}`` = appended 8-byte records ``<I key><I item id>``.
    Every command names one bucket, so it runs on a Redis Cluster as it is (pipelines
    grouped by node; expiry node by node)."""

    RECORD_SIZE = RECORD_DTYPE.itemsize
    ID_OFFSET = 4

    def __init__(self, client: Any, namespace: str = "dd:x", *, floor: int = 0) -> None:
        self.client = client
        self.namespace = namespace
        self.floor = floor  # item ids below it are out of the time window: not returned
        self._remove_script: Any = None
        self.cluster = is_cluster(client)

    @staticmethod
    def bucket(key: int) -> int:
        return key >> (32 - BUCKET_BITS)

    def bucket_key(self, bucket: int) -> str:
        return f"{self.namespace}:{bucket:05x}"

    def bucket_keys(self, keys: Iterable[int]) -> list[str]:
        return [self.bucket_key(b) for b in sorted({self.bucket(k) for k in keys})]

    def add_many(self, items: Iterable[tuple[int, Sequence[int]]], pipe: Any = None) -> None:
        """Index each (item id, stored keys); one pipelined APPEND per record, sent
        with ``pipe`` when given (the caller executes it), else at once."""
        own = pipe is None
        if own:
            pipe = self.client.pipeline(transaction=False)
        for item_id, keys in items:
            if not 0 <= item_id <= MAX_ITEM_ID:
                raise ValueError(f"item id must fit in 32 bits, not {item_id!r}")
            for key in keys:
                pipe.append(self.bucket_key(self.bucket(key)), _RECORD.pack(key, item_id))
        if own:
            pipe.execute()

    def remove(self, item_id: int, keys: Sequence[int]) -> None:
        if self._remove_script is None:
            self._remove_script = self.client.register_script(_REMOVE_LUA)
        for key in keys:
            self._remove_script(keys=[self.bucket_key(self.bucket(key))],
                                args=[_RECORD.pack(key, item_id)])

    def plan(self, groups: Sequence[Sequence[int]]) -> PendingKeyLookup:
        return PendingKeyLookup(self, groups)

    def query_many(self, groups: Sequence[Sequence[int]]) -> list[set[int]]:
        lookup = self.plan(groups)
        pipe = self.client.pipeline(transaction=False)
        lookup.queue(pipe)
        return lookup.collect(iter(pipe.execute()))

    def bulk_load(self, items: Iterable[tuple[int, Sequence[int]]],
                  keys_per_round_trip: int = 2000) -> int:
        """Append many items grouped by bucket (``rebuild_index``); returns records."""
        pairs = [(key, item_id) for item_id, keys in items for key in keys]
        if not pairs:
            return 0
        return self.load_records(np.array(pairs, dtype=_DTYPE), keys_per_round_trip)

    def load_records(self, records: npt.NDArray[Any], keys_per_round_trip: int = 2000) -> int:
        """:meth:`bulk_load` from a record array of :data:`RECORD_DTYPE` (``key``, ``id``)."""
        buckets = records["key"] >> np.uint32(32 - BUCKET_BITS)
        order = np.argsort(buckets, kind="stable")
        records, buckets = records[order], buckets[order]
        starts = np.flatnonzero(np.r_[True, buckets[1:] != buckets[:-1]])
        ends = np.r_[starts[1:], len(buckets)]
        data = records.tobytes()
        pipe = self.client.pipeline(transaction=False)
        for n, (lo, hi) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
            pipe.append(self.bucket_key(int(buckets[lo])), data[lo * 8 : hi * 8])
            if (n + 1) % keys_per_round_trip == 0:
                pipe.execute()
        pipe.execute()
        return len(records)
