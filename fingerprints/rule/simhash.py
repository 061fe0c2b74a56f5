"""64-bit SimHash over weighted features, hashed with mmh3 (fixed seed).

Bit ``i`` of a feature hash votes ``+w`` when set and ``-w`` when clear; bit ``i`` of the
fingerprint is set when the sum is positive. Fingerprints are unsigned 64-bit ints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import mmh3
import numpy as np
import numpy.typing as npt

#: Never change: every stored fingerprint depends on it.
FEATURE_SEED = 0x5EED_D0C5
MASK64 = (1 << 64) - 1


def feature_hash(feature: str) -> int:
    """Unsigned 64-bit mmh3 (x64 128-bit, first word) of the UTF-8 feature."""
    return int(mmh3.hash64(feature, seed=FEATURE_SEED, signed=False)[0])


def hamming(a: int, b: int) -> int:
    """Number of differing bits between two unsigned 64-bit fingerprints."""
    return ((a ^ b) & MASK64).bit_count()


def similarity(a: int, b: int) -> float:
    """``1 - hamming/64``: the seeds' fingerprint similarity."""
    return 1.0 - hamming(a, b) / 64.0


def simhash_arrays(hashes: npt.NDArray[np.uint64], weights: npt.NDArray[np.floating]) -> int:
    """SimHash of features given as parallel arrays of 64-bit hashes and weights."""
    if len(hashes) == 0:
        return 0
    hashes = np.ascontiguousarray(hashes, dtype="<u8")
    bits = np.unpackbits(hashes.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    # sum(w * (2*bit - 1)) = 2 * (w @ bits) - sum(w)
    w = np.asarray(weights, dtype=np.float64)
    votes = 2.0 * (w @ bits) - w.sum()
    packed = np.packbits(votes > 0, bitorder="little")
    return int(packed.view("<u8")[0])


def simhash(features: Mapping[str, float] | Iterable[str]) -> int:
    """SimHash of ``{feature: weight}`` (or of an iterable of features, each weight 1,
    repeated features counting once per occurrence)."""
    if isinstance(features, Mapping):
        items = list(features.items())
    else:
        counts: dict[str, float] = {}
        for f in features:
            counts[f] = counts.get(f, 0.0) + 1.0
        items = list(counts.items())
    if not items:
        return 0
    hashes = np.fromiter((feature_hash(f) for f, _ in items), dtype=np.uint64, count=len(items))
    weights = np.fromiter((w for _, w in items), dtype=np.float64, count=len(items))
    return simhash_arrays(hashes, weights)


# --- small array helpers shared by the vectorized modules (np.r_ is slow per call) ---


def _run_starts(sorted_values: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    """True where a run of equal values starts in a sorted array."""
    starts = np.empty(len(sorted_values), dtype=np.bool_)
    if len(sorted_values):
        starts[0] = True
        np.not_equal(sorted_values[1:], sorted_values[:-1], out=starts[1:])
    return starts


def _append(values: npt.NDArray[Any], last: int) -> npt.NDArray[np.int64]:
    out = np.empty(len(values) + 1, dtype=np.int64)
    out[:-1] = values
    out[-1] = last
    return out


def _prepend(first: int, values: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    out = np.empty(len(values) + 1, dtype=np.int64)
    out[0] = first
    out[1:] = values
    return out
