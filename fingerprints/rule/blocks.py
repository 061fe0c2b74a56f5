"""The pigeonhole block geometry of 64-bit fingerprints.

Split the 64 bits into ``k + 1`` blocks: two fingerprints within Hamming distance
``k`` agree exactly on at least one block (``k`` differing bits cannot touch all
``k + 1`` blocks). The rule needs the geometry (its probes flip bits inside
blocks); the stores (:mod:`fingerprints.stores.block_index`) key buckets by it.
"""

from __future__ import annotations

import functools

import numpy as np
import numpy.typing as npt

MAX_K = 8
MASK64 = (1 << 64) - 1


def check_k(k: int) -> int:
    if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k <= MAX_K:
        raise ValueError(f"k must be an integer from 0 to {MAX_K}, not {k!r}")
    return k


def block_layout(k: int) -> list[tuple[int, int]]:
    """(shift, width) of each of the ``k + 1`` blocks, most significant block first;
    the first ``64 % (k + 1)`` blocks are one bit wider."""
    return list(cached_layout(check_k(k)))


@functools.cache
def cached_layout(k: int) -> tuple[tuple[int, int], ...]:
    blocks = k + 1
    base, extra = divmod(64, blocks)
    layout = []
    top = 64
    for i in range(blocks):
        width = base + (1 if i < extra else 0)
        top -= width
        layout.append((top, width))
    return tuple(layout)


def block_keys(fp: int, k: int) -> list[tuple[int, int]]:
    """(block number, block value) of each of the ``k + 1`` blocks of ``fp``."""
    if not 0 <= fp <= MASK64:
        raise ValueError(f"fingerprint must be an unsigned 64-bit integer, not {fp!r}")
    if not isinstance(k, int) or not 0 <= k <= MAX_K:
        check_k(k)
    return [(i, (fp >> shift) & ((1 << width) - 1))
            for i, (shift, width) in enumerate(cached_layout(k))]


def block_values(fps: npt.ArrayLike, k: int) -> npt.NDArray[np.uint64]:
    """The value of each of the ``k + 1`` blocks of each fingerprint: one row per
    fingerprint, column ``i`` is block ``i`` (vectorized :func:`block_keys`)."""
    values = np.asarray(fps, dtype=np.uint64).reshape(-1)
    columns = [(values >> np.uint64(shift)) & np.uint64((1 << width) - 1)
               for shift, width in cached_layout(check_k(k))]
    return np.stack(columns, axis=1)
