"""Presence markers: how a worker notices that the index Redis lost the index.

On one Redis shared with the queues, a restart that empties the index also empties
``{p}:gen``, and the mismatch with ``IndexState.generation`` triggers the rebuild
(reindex.py). When the indexes live elsewhere (``INDEX_REDIS_URL``), the index Redis
— or one node of a Redis Cluster — can come back empty while ``{p}:gen`` on the queue
Redis still names the generation. So a build first writes markers on the index
Redis: one key on a plain Redis; on a cluster one key in *every* hash slot (16,384 keys
of a few bytes, hash-tagged), so each node holds the markers of its slots and they
move with their slots when the cluster is resharded.

A batch reads one marker per primary (one of its slots) in the pipeline that writes
its index entries, so the read follows the writes on each node; the watchdog checks
the same each tick. A missing marker means that node lost its data: the generation
pointer is dropped (only if it still names that generation), and the usual path
rebuilds the index from MySQL before any docId is handed out (the batch that noticed
fails and is retried: ``reindex.forget_generation``).
"""

from __future__ import annotations

import functools
from typing import Any

from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

from dedupsite import redis_store
from fingerprints.stores.redis_records import is_cluster


@functools.cache
def slot_tags() -> tuple[str, ...]:
    """A short hash tag for each of the cluster's slots: ``{tag}`` puts a key in it."""
    tags: list[str | None] = [None] * REDIS_CLUSTER_HASH_SLOTS
    missing = REDIS_CLUSTER_HASH_SLOTS
    number = 0
    while missing:
        tag = format(number, "x")
        slot = key_slot(tag.encode())
        if tags[slot] is None:
            tags[slot] = tag
            missing -= 1
        number += 1
    return tuple(tag for tag in tags if tag is not None)


def prefix(generation: str) -> str:
    return redis_store.key("live", generation)


def marker_key(generation: str, slot: int | None = None) -> str:
    """The marker of ``generation`` (in ``slot`` on a cluster)."""
    if slot is None:
        return prefix(generation)
    return f"{prefix(generation)}:{{{slot_tags()[slot]}}}"


def write(generation: str) -> None:
    """Mark the index Redis as holding ``generation`` (before its build fills it)."""
    if not redis_store.index_is_separate():
        return
    client = redis_store.index_client()
    if not is_cluster(client):
        client.set(marker_key(generation), 1)
        return
    pipe = client.pipeline(transaction=False)
    for slot in range(REDIS_CLUSTER_HASH_SLOTS):
        pipe.set(marker_key(generation, slot), 1)
    pipe.execute()


_sampled: list[tuple[str, int]] = []  # (primary's name, one of its slots), per process


def _one_slot_per_primary(client: Any) -> list[tuple[str, int]]:
    """A slot of each primary, from the client's slot map (re-read when it changed)."""
    global _sampled
    slots = client.nodes_manager.slots_cache
    names = {node.name for node in client.get_primaries()}
    if ({name for name, _slot in _sampled} != names
            or any(slots.get(slot, [None])[0] is None or slots[slot][0].name != name
                   for name, slot in _sampled)):
        first: dict[str, int] = {}
        for slot in range(REDIS_CLUSTER_HASH_SLOTS):
            owners = slots.get(slot)
            if owners:
                first.setdefault(owners[0].name, slot)
        _sampled = sorted(first.items())
    return _sampled


def queue_check(pipe: Any, generation: str) -> int:
    """Queue the marker reads on ``pipe`` (an index-Redis pipeline); returns how many
    replies :func:`all_present` must take."""
    if not redis_store.index_is_separate():
        return 0
    client = redis_store.index_client()
    if not is_cluster(client):
        pipe.get(marker_key(generation))
        return 1
    sample = _one_slot_per_primary(client)
    for _name, slot in sample:
        pipe.get(marker_key(generation, slot))
    return len(sample)


def all_present(replies: Any, queued: int) -> bool:
    """Take the :func:`queue_check` replies from the iterator ``replies``."""
    values = [next(replies) for _ in range(queued)]  # every one taken, even after a miss
    return all(value is not None for value in values)


def present(generation: str) -> bool:
    """Does the index Redis still hold ``generation`` on every node?"""
    pipe = redis_store.index_client().pipeline(transaction=False)
    queued = queue_check(pipe, generation)
    return all_present(iter(pipe.execute()), queued) if queued else True

