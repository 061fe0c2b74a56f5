"""Multi-probe content lookups: the extra fingerprints a content lookup reads.

Content candidates come from the content block index looked up with the content
fingerprint *and* its multi-probe fingerprints (:func:`content_probes`). How a caller
(online worker, batch engine, Spark) must use them — the same everywhere, so that the
engines agree:

1. ``probes = content_probes(features, config)`` (a list of ints; empty for an empty
   text, ``config.probe_bits == 0`` or features read from a version-1 row).
2. Look up the content index with ``[features.content_fp, *probes]``, every one with
   ``max_distance=config.content_radius`` (``RedisBlockIndex.query_many`` does it in one
   round trip); the content candidates are the union of the hits. The title lookup is
   unchanged.
3. Hand the candidates to :func:`decide` as before — the hits plus, for every doc among
   them, that doc's anchor row. ``decide`` recomputes the probes and accepts a content
   candidate within ``content_radius`` of the fingerprint or of a probe; the
   ``Match.distance`` it reports is the true distance to ``content_fp`` (up to
   ``content_radius + probe_bits``).
4. Index only ``features.content_fp`` (never a probe; remove it the same way).
5. Lock the bucket keys of the probes too (the online engine: ``articles.index.locks.multi_lock``)
   (``index.bucket_keys(p)`` for ``p`` in ``[content_fp, *probes]``, plus the title
   buckets): a pair found through a probe shares the probe's bucket, so locking it
   serializes the two decisions.

There is no second fingerprint index (no ``extra_index_keys``): probing closes the gap
measured in docs/engine.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from itertools import combinations

from fingerprints.rule.blocks import block_layout
from fingerprints.rule.config import EngineConfig
from fingerprints.rule.features import Features
from fingerprints.rule.kernel import kernel
from fingerprints.rule.simhash import hamming


@lru_cache(maxsize=16)
def _block_masks(k: int) -> tuple[int, ...]:
    return tuple(((1 << width) - 1) << shift for shift, width in block_layout(k))


def block_masks(k: int) -> tuple[int, ...]:
    """The bit masks of the ``k + 1`` pigeonhole blocks of a 64-bit fingerprint."""
    return _block_masks(k)


def content_probes(features: Features, config: EngineConfig = EngineConfig()) -> list[int]:
    """Extra fingerprints to look up in the *content* block index besides
    ``features.content_fp`` (possibly none): multi-probe queries.

    A light edit moves a SimHash mostly in its least confident bits — those whose vote
    sum was nearest zero. For each of the ``k + 1`` pigeonhole blocks of the content
    fingerprint, the ``config.probe_bits`` weakest bits that fall in that block are
    flipped, every non-empty subset of them, one block at a time. A stored copy whose
    differing bits in some block are all among that block's flipped ones now shares that
    block exactly with a probe, so the probe's lookup returns it when it is within
    ``config.content_radius`` of the probe. Each probe changes one block only: its
    lookup reads one new bucket (the other ``k`` are the original query's).

    Deterministic (exact integer votes, ties by bit position); empty when probing is off,
    the content is empty, or the features predate weak bits (version 1).
    Caller contract (online and batch alike; docs/engine.md):

    * query the content index with ``features.content_fp`` *and* every probe, each with
      ``max_distance=config.content_radius``; the union of the hits are the content
      candidates (plus, as always, each hit doc's anchor row for :func:`decide`);
    * index only ``features.content_fp`` — probes are never added or removed;
    * lock the buckets of the probes too (``bucket_keys`` of each), so that two
      articles that can find each other through a probe are serialized.
    """
    fp = features.content_fp
    if not fp or not features.weak_bits or config.probe_bits <= 0:
        return []
    return list(_probes(fp, features.weak_bits, config.k, config.probe_bits))


@lru_cache(maxsize=4096)
def _probes(fp: int, weak_bits: bytes, k: int, probe_bits: int) -> tuple[int, ...]:
    """:func:`content_probes`, remembered: a worker computes an article's probes for
    its lookup and again in :func:`decide`."""
    if kernel is not None:
        found: tuple[int, ...] = kernel.probes(fp, weak_bits, _block_of_bit(k), probe_bits)
        return found
    return _probes_py(fp, weak_bits, k, probe_bits)


def _probes_py(fp: int, weak_bits: bytes, k: int, probe_bits: int) -> tuple[int, ...]:
    """:func:`_probes` in Python (the C kernel's ``probes`` gives the same tuple)."""
    block_of = _block_of_bit(k)
    per_block: list[list[int]] = [[] for _ in range(k + 1)]
    for b in weak_bits:  # one pass: each block's first probe_bits weak bits, in order
        bits = per_block[block_of[b]]
        if len(bits) < probe_bits:
            bits.append(1 << b)
    probes: list[int] = []
    for bits in per_block:
        for size in range(1, len(bits) + 1):
            for subset in combinations(bits, size):
                probes.append(fp ^ sum(subset))
    return tuple(probes)


@lru_cache(maxsize=16)
def _block_of_bit(k: int) -> bytes:
    """The pigeonhole block of each of the 64 bit positions."""
    masks = _block_masks(k)
    return bytes(next(i for i, mask in enumerate(masks) if (1 << b) & mask) for b in range(64))


def content_reach(new: Features, other_fp: int, config: EngineConfig,
                  probes: Sequence[int] | None = None) -> int:
    """Smallest Hamming distance from ``other_fp`` to ``new.content_fp`` or to one of
    its probes: a content candidate is one with reach <= ``config.content_radius``."""
    if probes is None:
        probes = content_probes(new, config)
    return min(hamming(p, other_fp) for p in (new.content_fp, *probes))
