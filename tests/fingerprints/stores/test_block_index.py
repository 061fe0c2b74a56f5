"""The block index (fingerprints/stores/block_index.py): items within k bits of a
fingerprint, in memory and in Redis."""

import random

import numpy as np
import pytest

from fingerprints.stores.block_index import (
    MemoryBlockIndex,
    RedisBlockIndex,
    near_pairs_by_block,
    near_sharing_block,
)


@pytest.mark.parametrize("k", [-1, 9, 3.0, True])
def test_it_rejects_k_outside_0_to_8(k: object) -> None:
    with pytest.raises(ValueError, match="k must be"):
        MemoryBlockIndex(k)  # type: ignore[arg-type]


def _flip(fp: int, bits: list[int]) -> int:
    for bit in bits:
        fp ^= 1 << bit
    return fp


def _check_index(index, k: int) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(k)
    base = rng.getrandbits(64)
    near = {i: _flip(base, rng.sample(range(64), i)) for i in range(1, k + 1)}
    far = _flip(base, rng.sample(range(64), k + 1))
    index.add(100, base)
    index.add_many([(100 + i, fp) for i, fp in near.items()] + [(999, far)])
    hits = index.query(base)
    assert hits == [(100, base, 0)] + [(100 + i, near[i], i) for i in sorted(near)]
    index.remove(100, base)
    assert 100 not in [item for item, _, _ in index.query(base)]
    index.clear()
    assert index.query(base) == []


@pytest.mark.parametrize("k", [0, 1, 3, 5, 8])
def test_memory_index_finds_exactly_the_items_within_k(k: int) -> None:
    _check_index(MemoryBlockIndex(k), k)


@pytest.mark.parametrize("k", [0, 3, 8])
def test_redis_index_finds_exactly_the_items_within_k(redis_client, k: int) -> None:  # type: ignore[no-untyped-def]
    _check_index(RedisBlockIndex(redis_client, k, namespace="t"), k)


def test_redis_index_keys_carry_namespace_k_and_block(redis_client) -> None:  # type: ignore[no-untyped-def]
    index = RedisBlockIndex(redis_client, 3, namespace="dd:c")
    index.add(7, 0x0001_0002_0003_0004)
    keys = sorted(k.decode() for k in redis_client.keys("dd:c:*"))
    assert keys == ["dd:c:k3:b0:1", "dd:c:k3:b1:2", "dd:c:k3:b2:3", "dd:c:k3:b3:4", "dd:c:k3:meta"]
    assert redis_client.strlen("dd:c:k3:b0:1") == 12
    assert len(index) == 1
    index.remove(7, 0x0001_0002_0003_0004)
    assert len(index) == 0
    assert redis_client.keys("dd:c:k3:b*") == []


def test_redis_index_remembers_its_generation(redis_client) -> None:  # type: ignore[no-untyped-def]
    index = RedisBlockIndex(redis_client, 3)
    assert index.generation() is None
    index.set_generation("2024-05-01T10:00:00/123")
    assert index.generation() == "2024-05-01T10:00:00/123"


def test_redis_index_rejects_ids_over_32_bits(redis_client) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="32 bits"):
        RedisBlockIndex(redis_client).add(1 << 32, 5)


def test_redis_bulk_load_answers_like_single_adds(redis_client) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(5)
    fps = [rng.getrandbits(64) for _ in range(300)]
    fps += [fp ^ (1 << rng.randrange(64)) for fp in fps[:50]]
    bulk = RedisBlockIndex(redis_client, 3, namespace="bulk")
    assert bulk.bulk_load(list(range(len(fps))), fps) == len(fps)
    single = MemoryBlockIndex(3)
    single.add_many(enumerate(fps))
    assert len(bulk) == len(fps)
    for fp in fps[:80]:
        assert bulk.query(fp) == single.query(fp)
        assert bulk.query(fp, max_distance=12) == single.query(fp, max_distance=12)


@pytest.mark.parametrize("k", [0, 1, 3, 5, 8])
def test_near_sharing_block_finds_what_an_index_lookup_finds(k: int) -> None:
    rng = random.Random(40 + k)
    base = rng.getrandbits(64)
    stored = [_flip(base, rng.sample(range(64), rng.randrange(0, 14))) for _ in range(300)]
    stored += [rng.getrandbits(64) for _ in range(50)]
    index = MemoryBlockIndex(k)
    index.add_many(enumerate(stored))
    queries = [base, *(_flip(base, rng.sample(range(64), 3)) for _ in range(5))]
    for radius in sorted({0, k, k + 2, 12}):
        expected = {i for q in queries for i, _fp, _d in index.query(q, radius)}
        found = near_sharing_block(queries, stored, k, radius)
        assert set(np.flatnonzero(found).tolist()) == expected


@pytest.mark.parametrize("k", [0, 1, 3, 8])
def test_redis_add_many_and_query_probes_agree_with_memory(redis_client, k: int) -> None:
    rng = random.Random(k)
    base = rng.getrandbits(64)
    items = [(i, _flip(base, rng.sample(range(64), rng.randrange(0, 10)))) for i in range(200)]
    redis_index, memory = RedisBlockIndex(redis_client, k, namespace="t:p"), MemoryBlockIndex(k)
    redis_index.add_many(items, batch=64)  # several script calls
    memory.add_many(items)
    assert len(redis_index) == 200
    groups = [[fp, _flip(fp, [1]), _flip(fp, [40])] for _i, fp in items[:20]] + [[]]
    radius = k + 1
    for group, hits in zip(groups, redis_index.query_probes(groups, radius), strict=True):
        # the records of every bucket the group reads, within the radius of any probe
        buckets = {i for fp in group for i, _f, _d in memory.query(fp, 64)}
        expected = {i for i, fp in items if i in buckets
                    and any(bin(fp ^ q).count("1") <= radius for q in group)}
        assert {i for i, _fp, _d in hits} == expected
        assert all(d == bin(group[0] ^ fp).count("1") for _i, fp, d in hits)
    # planned lookups share one pipeline with other commands and give the same hits
    redis_client.set("t:p:other", "x")
    fps = [fp for _i, fp in items[:30]]
    pipe = redis_client.pipeline(transaction=False)
    pipe.get("t:p:other")
    probes, many = redis_index.plan_probes(groups, radius), redis_index.plan_many(fps, radius)
    probes.queue(pipe)
    pipe.get("t:p:other")
    many.queue(pipe)
    replies = iter(pipe.execute())
    assert next(replies) == b"x"
    assert probes.collect(replies) == redis_index.query_probes(groups, radius)
    assert next(replies) == b"x"
    assert many.collect(replies) == redis_index.query_many(fps, radius)
    assert many.collect(iter([[None] * (30 * (k + 1))])) == [[]] * 30  # empty buckets
    assert redis_index.query_many(fps, radius) == [redis_index.query(fp, radius) for fp in fps]


@pytest.mark.parametrize("k", [0, 1, 3, 8])
def test_near_pairs_by_block_agrees_with_near_sharing_block(k: int) -> None:
    rng = random.Random(70 + k)
    base = rng.getrandbits(64)
    fps = [_flip(base, rng.sample(range(64), rng.randrange(0, 12))) for _ in range(120)]
    fps += [rng.getrandbits(64) for _ in range(30)]
    groups = [[fp, _flip(fp, [rng.randrange(64)]), _flip(fp, [rng.randrange(64)])]
              for fp in fps[:40]] + [[]]
    for radius in sorted({0, k, k + 3, 10}):
        found = near_pairs_by_block(groups, fps, k, radius)
        for group, hits in zip(groups, found, strict=True):
            expected = set(np.flatnonzero(near_sharing_block(group, fps, k, radius)).tolist()
                           ) if group else set()
            assert hits == expected


@pytest.mark.parametrize("k", [0, 3, 8])
def test_query_union_is_the_union_of_queries(k: int) -> None:
    rng = random.Random(70 + k)
    base = rng.getrandbits(64)
    stored = [_flip(base, rng.sample(range(64), rng.randrange(0, 16))) for _ in range(400)]
    stored += [rng.getrandbits(64) for _ in range(100)]
    index = MemoryBlockIndex(k)
    index.add_many(enumerate(stored))
    for trial in range(20):
        fp = _flip(base, rng.sample(range(64), trial % 6))
        group = [fp, *(_flip(fp, rng.sample(range(64), 2)) for _ in range(6))]
        for radius in sorted({k, k + 3, 10}):
            expected = {i: f for q in group for i, f, _d in index.query(q, radius)}
            assert index.query_union(group, radius) == expected
    with pytest.raises(ValueError):
        index.query_union([-1])


@pytest.mark.parametrize("k", [0, 3, 8])
def test_memory_query_answers_alike_with_and_without_the_kernel(monkeypatch, k: int) -> None:  # type: ignore[no-untyped-def]
    from fingerprints.stores import block_index

    rng = random.Random(f"query {k}")
    base = rng.getrandbits(64)
    index = MemoryBlockIndex(k)
    for item in range(400):  # near and far items, some sharing blocks with base
        index.add(item, _flip(base, rng.sample(range(64), rng.randrange(0, 20))))
    queries = [base, *(_flip(base, rng.sample(range(64), 2)) for _ in range(20))]
    answers = [[index.query(fp, radius) for fp in queries] for radius in (None, k, 12)]
    assert any(hits for per_radius in answers for hits in per_radius)
    monkeypatch.setattr(block_index, "kernel", None)
    assert answers == [[index.query(fp, radius) for fp in queries] for radius in (None, k, 12)]
    with pytest.raises(ValueError, match="unsigned 64-bit"):
        index.add(1000, 1 << 64)
