"""The key index (fingerprints/stores/key_index.py): keys of bodies, in memory and in Redis."""

from __future__ import annotations

import random

from fingerprints.stores.key_index import MemoryKeyIndex, RedisKeyIndex


def test_the_kernel_buckets_and_the_dict_agree() -> None:
    rng = random.Random(5)
    fast, slow = MemoryKeyIndex(), MemoryKeyIndex(compiled=False)
    pool = [rng.getrandbits(32) for _ in range(300)]
    items = [(i, rng.sample(pool, 4)) for i in range(400)]
    groups = [rng.sample(pool, 8) for _ in range(50)]
    for index in (fast, slow):
        for item_id, keys in items:
            index.add(item_id, keys)
    assert [fast.query(g) for g in groups] == [slow.query(g) for g in groups]
    assert any(fast.query(g) for g in groups)
    for index in (fast, slow):
        for item_id, keys in items[::3]:
            index.remove(item_id, keys)
    assert [fast.query(g) for g in groups] == [slow.query(g) for g in groups]
    fast.clear()
    assert fast.query(pool) == set()


def test_redis_and_memory_key_indexes_agree(redis_client) -> None:
    rng = random.Random(3)
    memory, shared = MemoryKeyIndex(), RedisKeyIndex(redis_client, namespace="test:x")
    pool = [rng.getrandbits(32) for _ in range(300)]
    items = [(i, rng.sample(pool, 4)) for i in range(200)]
    for item_id, keys in items[:100]:
        memory.add(item_id, keys)
    shared.add_many(items[:100])
    for item_id, keys in items[100:]:
        memory.add(item_id, keys)
    assert shared.bulk_load(items[100:]) == 400
    groups = [rng.sample(pool, 8) for _ in range(50)]
    assert shared.query_many(groups) == [memory.query(g) for g in groups]
    for item_id, keys in items[::3]:
        memory.remove(item_id, keys)
        shared.remove(item_id, keys)
    assert shared.query_many(groups) == [memory.query(g) for g in groups]
    shared.clear()
    assert shared.query_many(groups) == [set() for _ in groups]
