"""Pigeonhole block index over 64-bit fingerprints.

Split the 64 bits into ``k + 1`` blocks: two fingerprints within Hamming distance
``k`` agree exactly on at least one block (``k`` differing bits cannot touch all
``k + 1`` blocks). Each block value, keyed with its block number, names a bucket; a
query reads its ``k + 1`` buckets and keeps the items within distance ``k``.

Two implementations behind one protocol: :class:`MemoryBlockIndex` (tests, batch
work) and :class:`RedisBlockIndex` (the online index shared by every worker), on one
Redis or on a Redis Cluster (redis-py's ``RedisCluster``: buckets spread over its slots).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from fingerprints.rule.blocks import (
    MASK64,
    block_keys,
    block_layout,
    block_values,
    cached_layout,
    check_k,
)
from fingerprints.rule.kernel import kernel
from fingerprints.rule.simhash import _append, _run_starts
from fingerprints.stores.redis_records import (
    expire_records,
    get_many,
    is_cluster,
    scan_step,
    take_many,
    unlink_matching,
)


def near_sharing_block(queries: npt.ArrayLike, fps: npt.ArrayLike, k: int, radius: int
                       ) -> npt.NDArray[np.bool_]:
    """For each of ``fps``: is it within ``radius`` of one of ``queries`` with which it
    shares a block — exactly what a block-index lookup of each query returns."""
    q = np.asarray(queries, dtype=np.uint64).reshape(-1, 1)
    other = np.asarray(fps, dtype=np.uint64).reshape(1, -1)
    x = q ^ other
    near = np.bitwise_count(x) <= radius
    if radius > k:  # within k, a shared block is certain (pigeonhole)
        shared = np.zeros(x.shape, dtype=np.bool_)
        for shift, width in cached_layout(k):
            shared |= (x & np.uint64(((1 << width) - 1) << shift)) == 0
        near &= shared
    result: npt.NDArray[np.bool_] = near.any(axis=0)
    return result


def near_pairs_by_block(queries: Sequence[Sequence[int]], fps: npt.ArrayLike, k: int,
                        radius: int) -> list[set[int]]:
    """For each query group i: the positions j in ``fps`` that some fingerprint of the
    group shares a block with and is within ``radius`` of — what
    :func:`near_sharing_block` answers for each group, found for all groups at once by
    joining their block values with those of ``fps`` (sorted arrays, no pair loop)."""
    sizes = [len(group) for group in queries]
    flat = np.fromiter(chain.from_iterable(queries), dtype=np.uint64, count=sum(sizes))
    owner = np.repeat(np.arange(len(queries)), sizes)
    stored = np.asarray(fps, dtype=np.uint64).reshape(-1)
    found: list[set[int]] = [set() for _ in queries]
    if len(flat) == 0 or len(stored) == 0:
        return found
    q_blocks, s_blocks = block_values(flat, k), block_values(stored, k)
    for number in range(k + 1):
        order = np.argsort(s_blocks[:, number], kind="stable")
        keys = s_blocks[order, number]
        lo = np.searchsorted(keys, q_blocks[:, number], side="left")
        hi = np.searchsorted(keys, q_blocks[:, number], side="right")
        counts = hi - lo
        if not counts.any():
            continue
        query_at = np.repeat(np.arange(len(flat)), counts)
        # positions lo..hi-1 of each query, flattened
        starts = np.repeat(lo - np.cumsum(counts) + counts, counts)
        stored_at = order[starts + np.arange(counts.sum())]
        near = np.bitwise_count(flat[query_at] ^ stored[stored_at]) <= radius
        for i, j in zip(owner[query_at[near]].tolist(), stored_at[near].tolist(), strict=True):
            found[i].add(j)
    return found


@runtime_checkable
class BlockIndex(Protocol):
    k: int

    def add(self, item_id: int, fp: int) -> None: ...
    def add_many(self, items: Iterable[tuple[int, int]]) -> None: ...
    def remove(self, item_id: int, fp: int) -> None: ...
    def query(self, fp: int, max_distance: int | None = None) -> list[tuple[int, int, int]]: ...
    def clear(self) -> None: ...
    def __len__(self) -> int: ...


def _radius(k: int, max_distance: int | None) -> int:
    if max_distance is None:
        return k
    if not 0 <= max_distance <= 64:
        raise ValueError(f"max_distance must be from 0 to 64, not {max_distance!r}")
    return max_distance


def _finish(found: dict[int, int], fp: int, k: int) -> list[tuple[int, int, int]]:
    hits = []
    for item_id, other in found.items():
        distance = ((fp ^ other) & MASK64).bit_count()
        if distance <= k:
            hits.append((item_id, other, distance))
    if len(hits) > 1:  # most lookups find none or one
        hits.sort(key=_nearest_first)
    return hits


def _nearest_first(hit: tuple[int, int, int]) -> tuple[int, int]:
    return hit[2], hit[0]


def _query_union(fps: Sequence[int], layout: Sequence[tuple[int, int]],
                 buckets_of: Sequence[dict[int, dict[int, int]]], radius: int
                 ) -> dict[int, int]:
    """:meth:`MemoryBlockIndex.query_union`'s loop over dict buckets (the C kernel's
    ``BlockTable.query_union`` computes the same dict, in the same order)."""
    blocks = [(shift, (1 << width) - 1, buckets)
              for (shift, width), buckets in zip(layout, buckets_of, strict=True)]
    found: dict[int, int] = {}
    for given in fps:
        fp = given.__index__() if hasattr(given, "__index__") else -1  # ints, NumPy ints
        if not 0 <= fp <= MASK64:
            raise ValueError(f"fingerprint must be an unsigned 64-bit integer, not {given!r}")
        for shift, mask, buckets in blocks:
            bucket = buckets.get((fp >> shift) & mask)
            if bucket:
                for item, other in bucket.items():
                    if item not in found and (fp ^ other).bit_count() <= radius:
                        found[item] = other
    return found


class MemoryBlockIndex:
    """Dict-of-buckets index in process memory. Not shared between processes. The
    buckets are the C kernel's (``kernel.BlockTable``: arrays of integers, no Python int
    per stored fingerprint) when it is built, else dicts; ``compiled`` forces one or
    the other (``True`` requires the kernel). Both give the same items in the same
    order."""

    def __init__(self, k: int = 3, *, compiled: bool | None = None) -> None:
        self.k = check_k(k)
        if compiled is None:
            compiled = kernel is not None
        elif compiled and kernel is None:
            raise RuntimeError("the C kernel fingerprints.rule._kernel is not built")
        self._layout = block_layout(k)
        self._table = kernel.BlockTable(self._layout) if compiled and kernel else None
        self._buckets: list[dict[int, dict[int, int]]] = [{} for _ in self._layout]
        # (shift, mask, buckets) of each block: what add reads per fingerprint
        self._blocks = [(shift, (1 << width) - 1, buckets)
                        for (shift, width), buckets in zip(self._layout, self._buckets,
                                                           strict=True)]
        self._items: dict[int, int] = {}

    def add(self, item_id: int, fp: int) -> None:
        old = self._items.get(item_id)
        if old is not None:
            if old == fp:
                return
            self.remove(item_id, old)
        if not 0 <= fp <= MASK64:
            raise ValueError(f"fingerprint must be an unsigned 64-bit integer, not {fp!r}")
        if self._table is not None:
            self._table.add(item_id, fp)
        else:
            for shift, mask, buckets in self._blocks:
                value = (fp >> shift) & mask
                bucket = buckets.get(value)
                if bucket is None:
                    buckets[value] = {item_id: fp}
                else:
                    bucket[item_id] = fp
        self._items[item_id] = fp

    def add_many(self, items: Iterable[tuple[int, int]]) -> None:
        for item_id, fp in items:
            self.add(item_id, fp)

    def remove(self, item_id: int, fp: int) -> None:
        if self._items.get(item_id) != fp:
            return
        if self._table is not None:
            self._table.remove(item_id, fp)
        else:
            for (_, value), buckets in zip(block_keys(fp, self.k), self._buckets,
                                           strict=True):
                bucket = buckets.get(value)
                if bucket is not None:
                    bucket.pop(item_id, None)
                    if not bucket:
                        del buckets[value]
        del self._items[item_id]

    def query(self, fp: int, max_distance: int | None = None) -> list[tuple[int, int, int]]:
        """Items within ``k`` of ``fp`` (all of them: the pigeonhole guarantee), or within
        ``max_distance`` > k among the items that share a block with ``fp`` (some of
        them: found at no extra cost, since their buckets are read anyway)."""
        radius = _radius(self.k, max_distance)
        if self._table is not None:  # the items of fp's buckets within the radius, in C
            return _finish(self._table.query_union((fp,), radius), fp, radius)
        found: dict[int, int] = {}
        for (_, value), buckets in zip(block_keys(fp, self.k), self._buckets, strict=True):
            bucket = buckets.get(value)
            if bucket:
                found.update(bucket)
        return _finish(found, fp, radius)

    def query_union(self, fps: Sequence[int], max_distance: int | None = None
                    ) -> dict[int, int]:
        """``{item: fp}`` of the union of :meth:`query` over ``fps`` (a fingerprint and
        its probes): an item counts when it is within the radius of a fingerprint whose
        bucket holds it. One call instead of one :meth:`query` per probe."""
        radius = _radius(self.k, max_distance)
        if self._table is not None:
            found: dict[int, int] = self._table.query_union(fps, radius)
            return found
        return _query_union(fps, self._layout, self._buckets, radius)

    def clear(self) -> None:
        if self._table is not None:
            self._table.clear()
        for buckets in self._buckets:
            buckets.clear()
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


class PendingLookup:
    """Bucket reads planned by :meth:`RedisBlockIndex.plan_many` or
    :meth:`~RedisBlockIndex.plan_probes`: :meth:`queue` adds their MGETs to a pipeline
    (with other commands, so several lookups share one round trip), :meth:`collect`
    takes their replies, in order, from the iterator over the pipeline's results."""

    def __init__(self, keys: list[str],
                 finish: Callable[[list[bytes | None]], list[list[tuple[int, int, int]]]]
                 ) -> None:
        self.keys, self.finish = keys, finish
        self.commands = 0

    def queue(self, pipe: Any) -> None:
        self.commands = get_many(pipe, self.keys)

    def collect(self, replies: Iterator[Any]) -> list[list[tuple[int, int, int]]]:
        return self.finish(take_many(replies, self.commands))


# Redis layout, for namespace "dd:c" and k=3:
#   dd:c:k3:b{block}:{value hex}  string of 12-byte records <Q fp><I id> appended (APPEND)
#   dd:c:k3:meta                  hash: count, generation
_RECORD = struct.Struct("<QI")
_RECORD_DTYPE = np.dtype([("fp", "<u8"), ("id", "<u4")])
MAX_ITEM_ID = (1 << 32) - 1

# APPEND ARGV[i] to KEYS[i] for each bucket key; KEYS[n] is the meta hash, whose count
# grows by ARGV[n].
_APPEND_LUA = """
for i = 1, #KEYS - 1 do
  redis.call('APPEND', KEYS[i], ARGV[i])
end
redis.call('HINCRBY', KEYS[#KEYS], 'count', ARGV[#KEYS])
return #KEYS - 1
"""

# Remove every record equal to ARGV[1] from each bucket KEYS[1..n-1] (KEYS[n] is the
# meta hash; with ARGV[2] = '0' there is none: a cluster, whose scripts name one slot);
# records are 12-byte aligned, so only aligned matches count. Returns how many buckets
# changed.
_REMOVE_LUA = """
local record = ARGV[1]
local size = string.len(record)
local changed = 0
local last = #KEYS
if ARGV[2] == '0' then last = #KEYS + 1 end
local meta = KEYS[last]
for i = 1, last - 1 do
  local key = KEYS[i]
  local data = redis.call('GET', key)
  if data then
    local parts = {}
    local removed = false
    for pos = 1, string.len(data), size do
      local chunk = string.sub(data, pos, pos + size - 1)
      if chunk == record then removed = true else parts[#parts + 1] = chunk end
    end
    if removed then
      changed = changed + 1
      if #parts == 0 then redis.call('DEL', key)
      else redis.call('SET', key, table.concat(parts)) end
    end
  end
end
if changed > 0 and meta then redis.call('HINCRBY', meta, 'count', -1) end
return changed
"""


class RedisBlockIndex:
    """The block index in Redis, shared by all workers.

    Each bucket is one string key whose value is the concatenation of 12-byte
    records (fingerprint as little-endian uint64, item id as uint32): ``APPEND`` adds,
    one ``MGET`` of the ``k + 1`` bucket keys answers a query, and a Lua script removes
    atomically. Item ids must fit in 32 bits. ``len()`` reads a counter kept in the meta
    hash: approximate (adding an item twice counts it twice; ``rebuild`` resets it).
    The client is only used when a method is called: nothing connects at import time.

    On a Redis Cluster the buckets spread over its slots (no hash tags) and every
    multi-key call becomes per-key commands in a pipeline grouped by node: adds are
    then not atomic across buckets, which nothing needs, since the writers of a bucket
    hold its lock stripe (``articles/ingest/assign.py``) and each ``APPEND`` and each
    script still changes its one bucket atomically.
    """

    def __init__(self, client: Any, k: int = 3, namespace: str = "dd:c", *,
                 floor: int = 0) -> None:
        self.k = check_k(k)
        self.client = client
        # Item ids below the floor are out of the time window: never returned, and
        # dropped from the buckets by :meth:`expire_step`.
        self.floor = floor
        self.namespace = namespace
        self.prefix = f"{namespace}:k{k}"
        self.meta_key = f"{self.prefix}:meta"
        self._remove_script: Any = None
        self._append_script: Any = None
        self.cluster = is_cluster(client)

    def bucket_key(self, number: int, value: int) -> str:
        return f"{self.prefix}:b{number}:{value:x}"

    def bucket_keys(self, fp: int) -> list[str]:
        """The ``k + 1`` bucket keys a query for ``fp`` reads (and an add writes)."""
        return [self.bucket_key(n, v) for n, v in block_keys(fp, self.k)]

    _keys = bucket_keys

    @staticmethod
    def _record(item_id: int, fp: int) -> bytes:
        if not 0 <= item_id <= MAX_ITEM_ID:
            raise ValueError(f"item id must fit in 32 bits, not {item_id!r}")
        return _RECORD.pack(fp, item_id)

    def add(self, item_id: int, fp: int) -> None:
        self.add_many([(item_id, fp)])

    def add_many(self, items: Iterable[tuple[int, int]], batch: int = 2_000) -> None:
        """Append records: one script call per ``batch`` items (keys computed in NumPy),
        so a batch of articles costs one round trip and one command to parse."""
        if self._append_script is None and not self.cluster:
            self._append_script = self.client.register_script(_APPEND_LUA)
        pending: list[tuple[int, int]] = []
        for item in items:
            pending.append(item)
            if len(pending) >= batch:
                self._append(pending)
                pending = []
        if pending:
            self._append(pending)

    def _append(self, items: list[tuple[int, int]]) -> None:
        records = [self._record(item_id, fp) for item_id, fp in items]
        blocks = block_values([fp for _i, fp in items], self.k).tolist()
        keys = [self.bucket_key(number, v) for row in blocks for number, v in enumerate(row)]
        args = [record for record in records for _ in range(self.k + 1)]
        if self.cluster:  # one APPEND a bucket, each sent to its node
            pipe = self.client.pipeline(transaction=False)
            for key, record in zip(keys, args, strict=True):
                pipe.append(key, record)
            pipe.hincrby(self.meta_key, "count", len(items))
            pipe.execute()
            return
        self._append_script(keys=[*keys, self.meta_key], args=[*args, len(items)])

    def bulk_load(
        self, item_ids: npt.ArrayLike, fps: npt.ArrayLike, *, keys_per_round_trip: int = 2000
    ) -> int:
        """Append many items at once (``rebuild_index``): records are grouped by bucket
        in NumPy and each bucket gets one ``APPEND``, pipelined. Returns the item count.
        Zero fingerprints (empty texts) should be left out by the caller."""
        ids = np.asarray(item_ids, dtype=np.int64)
        values = np.asarray(fps, dtype=np.uint64)
        if len(ids) != len(values):
            raise ValueError("item_ids and fps must have the same length")
        if len(ids) == 0:
            return 0
        if ids.min() < 0 or ids.max() > MAX_ITEM_ID:
            raise ValueError("item ids must fit in 32 bits")
        records = np.empty(len(ids), dtype=_RECORD_DTYPE)
        records["fp"] = values
        records["id"] = ids.astype(np.uint32)
        pipe = self.client.pipeline(transaction=False)
        pending = 0
        for number, (shift, width) in enumerate(block_layout(self.k)):
            block = (values >> np.uint64(shift)) & np.uint64((1 << width) - 1)
            order = np.argsort(block, kind="stable")
            block_sorted = block[order]
            data = records[order].tobytes()
            starts = np.flatnonzero(_run_starts(block_sorted))
            ends = _append(starts[1:], len(block_sorted))
            size = _RECORD_DTYPE.itemsize
            for value, lo, hi in zip(block_sorted[starts].tolist(), starts.tolist(),
                                     ends.tolist(), strict=True):
                pipe.append(self.bucket_key(number, value), data[lo * size : hi * size])
                pending += 1
                if pending >= keys_per_round_trip:
                    pipe.execute()
                    pending = 0
        pipe.hincrby(self.meta_key, "count", len(ids))
        pipe.execute()
        return len(ids)

    def remove(self, item_id: int, fp: int) -> None:
        if self._remove_script is None:
            self._remove_script = self.client.register_script(_REMOVE_LUA)
        record = self._record(item_id, fp)
        if self.cluster:  # a script per bucket (one slot each), then the count
            changed = sum(int(self._remove_script(keys=[key], args=[record, "0"]))
                          for key in self._keys(fp))
            if changed:
                self.client.hincrby(self.meta_key, "count", -1)
            return
        self._remove_script(keys=[*self._keys(fp), self.meta_key], args=[record, "1"])

    def query(self, fp: int, max_distance: int | None = None) -> list[tuple[int, int, int]]:
        """One ``MGET`` of the ``k + 1`` buckets; see :meth:`MemoryBlockIndex.query`."""
        radius = _radius(self.k, max_distance)
        keys = self._keys(fp)
        values = self.client.mget_nonatomic(keys) if self.cluster else self.client.mget(keys)
        return self._hits(values, fp, radius)

    def query_many(self, fps: Sequence[int], max_distance: int | None = None
                   ) -> list[list[tuple[int, int, int]]]:
        """:meth:`query` for many fingerprints in one round trip."""
        return self._run(self.plan_many(fps, max_distance))

    def query_probes(self, groups: Sequence[Sequence[int]], max_distance: int | None = None
                     ) -> list[list[tuple[int, int, int]]]:
        """Multi-probe lookups for many articles in one pass.

        Each group is an article's fingerprint followed by its probes
        (engine.content_probes). A group's hits are the items within the radius of
        *any* of its fingerprints in the buckets those fingerprints read; every
        distinct bucket of the batch is fetched once. Distances are to the group's
        first fingerprint.
        """
        return self._run(self.plan_probes(groups, max_distance))

    def _run(self, plan: PendingLookup) -> list[list[tuple[int, int, int]]]:
        pipe = self.client.pipeline(transaction=False)
        plan.queue(pipe)
        return plan.collect(iter(pipe.execute()))

    def plan_many(self, fps: Sequence[int], max_distance: int | None = None) -> PendingLookup:
        """:meth:`query_many` as a :class:`PendingLookup`, to share a pipeline."""
        radius = _radius(self.k, max_distance)
        width = self.k + 1
        keys = [key for fp in fps for key in self._keys(fp)]

        def finish(values: list[bytes | None]) -> list[list[tuple[int, int, int]]]:
            return [self._hits(values[i * width:(i + 1) * width], fp, radius)
                    for i, fp in enumerate(fps)]

        return PendingLookup(keys, finish)

    def plan_probes(self, groups: Sequence[Sequence[int]], max_distance: int | None = None
                    ) -> PendingLookup:
        """:meth:`query_probes` as a :class:`PendingLookup`, to share a pipeline."""
        radius = _radius(self.k, max_distance)
        sizes = [len(group) for group in groups]
        flat = np.fromiter(chain.from_iterable(groups), dtype=np.uint64, count=sum(sizes))
        blocks = block_values(flat, self.k)
        # distinct buckets of the batch, block by block; inverse[i, b] is the position
        # in `keys` of fingerprint i's bucket in block b
        keys: list[str] = []
        inverse = np.empty(blocks.shape, dtype=np.int64)
        for number in range(self.k + 1):
            distinct, where = np.unique(blocks[:, number], return_inverse=True)
            inverse[:, number] = where + len(keys)
            keys += [self.bucket_key(number, v) for v in distinct.tolist()]

        def finish(replies: list[bytes | None]) -> list[list[tuple[int, int, int]]]:
            values = [value or b"" for value in replies]
            bounds = np.cumsum([0, *sizes]).tolist()
            results: list[list[tuple[int, int, int]]] = []
            for group, lo, hi in zip(groups, bounds, bounds[1:], strict=False):
                data = b"".join([values[i] for i in np.unique(inverse[lo:hi]).tolist()])
                if not data or not group:
                    results.append([])
                    continue
                records = np.frombuffer(data, dtype=_RECORD_DTYPE)
                fps = records["fp"]
                probes = np.asarray(group, dtype=np.uint64).reshape(-1, 1)
                near = (np.bitwise_count(fps[None, :] ^ probes) <= radius).any(axis=0)
                if self.floor:
                    near &= records["id"] >= self.floor
                found = {int(i): int(f)
                         for i, f in zip(records["id"][near], fps[near], strict=True)}
                hits = [(i, f, ((group[0] ^ f) & MASK64).bit_count()) for i, f in found.items()]
                hits.sort(key=lambda hit: (hit[2], hit[0]))
                results.append(hits)
            return results

        return PendingLookup(keys, finish)

    def _hits(self, values: list[bytes | None], fp: int, radius: int
              ) -> list[tuple[int, int, int]]:
        data = b"".join(v for v in values if v)
        if not data:
            return []
        records = np.frombuffer(data, dtype=_RECORD_DTYPE)
        fps = records["fp"]
        distances = np.bitwise_count(fps ^ np.uint64(fp))
        near = distances <= radius
        if self.floor:
            near &= records["id"] >= self.floor
        found = {int(i): int(f) for i, f in zip(records["id"][near], fps[near], strict=True)}
        return _finish(found, fp, radius)

    def expire_step(self, cursor: int, floor: int, count: int = 1000) -> tuple[int, int]:
        """Drop the records of items below ``floor`` from about ``count`` buckets from
        ``cursor`` on (:func:`scan_step`: on a cluster, node by node); the meta count
        follows. Returns the next cursor (0: the pass is complete) and records dropped."""
        cursor, found = scan_step(self.client, cursor, f"{self.prefix}:b*", count)
        return cursor, sum(self.expire_keys(keys, floor, node) for node, keys in found)

    def expire_keys(self, keys: Sequence[Any], floor: int, node: Any = None) -> int:
        """Drop the records below ``floor`` from these bucket keys; records dropped.
        ``node``: on a cluster, the node holding the keys (:func:`scan_step`)."""
        dropped = expire_records(node if node is not None else self.client, keys, floor,
                                 _RECORD_DTYPE.itemsize, 8, one_key_per_call=self.cluster)
        if dropped:
            self.client.hincrby(self.meta_key, "expired_records", dropped)
        return dropped

    def clear(self) -> None:
        """Delete every key of this namespace and k (SCAN, so it does not block Redis)."""
        unlink_matching(self.client, f"{self.prefix}:*")

    def __len__(self) -> int:
        count, expired = self.client.hmget(self.meta_key, ["count", "expired_records"])
        return int(count or 0) - int(expired or 0) // (self.k + 1)

    # --- staleness -----------------------------------------------------------------
    def generation(self) -> str | None:
        """The generation string stored by the last (re)build, or None when the index
        is empty or was lost (Redis restarted without persistence)."""
        value = self.client.hget(self.meta_key, "generation")
        return value.decode() if isinstance(value, bytes) else value

    def set_generation(self, generation: str) -> None:
        self.client.hset(self.meta_key, "generation", generation)

