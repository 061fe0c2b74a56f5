"""Stable 64-bit ids shared by the online engine, the batch engines and the stores.

Every value here must be identical across processes, machines and Spark: mmh3 with a
fixed seed, never Python's salted ``hash()``.
"""

from __future__ import annotations

from collections.abc import Callable

import mmh3
import numpy as np
import numpy.typing as npt

from fingerprints.rule.canonical import canonical_url

#: Seed of the docId and URL hashes (online, batch and Spark alike).
DOC_ID_SEED = 0x5EED
MASK64 = (1 << 64) - 1
SIGN_BIT = 1 << 63


def to_signed(value: int) -> int:
    """Unsigned 64-bit -> the signed value with the same bits (SQLite, Spark LongType)."""
    return value - (1 << 64) if value >= SIGN_BIT else value


def to_unsigned(value: int) -> int:
    """Signed 64-bit -> the unsigned value with the same bits (inverse of to_signed)."""
    return value + (1 << 64) if value < 0 else value


def url_hash(url: str) -> int:
    """64-bit hash of the canonical URL: the key of the URL step of the cascade."""
    return mmh3.hash64(canonical_url(url).encode("utf-8"), seed=DOC_ID_SEED, signed=False)[0]


def make_doc_id(nid: str, salt: str = "") -> str:
    """The docId founded by article ``nid``: two 64-bit hex words (``salt`` on a clash):
    ``f"{h:032x}"`` of the unsigned 128-bit ``mmh3.hash128`` cut after 16 digits."""
    # the hash's 16 bytes, little-endian, reversed: the hex of the int without making
    # it and formatting it (a batch names thousands of docs)
    digest = mmh3.hash_bytes((nid + salt).encode("utf-8"), DOC_ID_SEED)
    return digest[::-1].hex("-", 8)


def unused_doc_id(nid: str, taken: Callable[[str], bool]) -> str:
    """The docId ``nid`` founds: ``make_doc_id(nid)``, salted ``#1``, ``#2``... while
    ``taken(doc_id)`` (online: a doc holds it; batch: an earlier anchor does)."""
    doc_id, salt = make_doc_id(nid), 0
    while taken(doc_id):
        salt += 1
        doc_id = make_doc_id(nid, f"#{salt}")
    return doc_id


def splitmix64_finalize(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """splitmix64's finalizer over an array (a new array): spreads every input bit over
    all 64 output bits. Used for shingle hashes, token keys and lock stripes."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(30))
        x = x * np.uint64(0xBF58476D1CE4E5B9)
        x = x ^ (x >> np.uint64(27))
        x = x * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))
