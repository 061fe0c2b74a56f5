"""All pairs within Hamming distance k among many fingerprints, in memory (NumPy).

For each of the ``k + 1`` pigeonhole blocks: sort the fingerprints by that block,
then compare every item with the next ones of its run of equal block values — offset
1, 2, ... for the positions whose run is still long enough — so the work is the number
of same-bucket pairs, all vectorized. A pair is reported by the first block it shares,
so no pair comes out twice.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from fingerprints.rule.blocks import block_layout
from fingerprints.rule.simhash import _append, _run_starts


def all_pairs(fps: npt.ArrayLike, k: int = 3) -> npt.NDArray[np.int64]:
    """``(n_pairs, 2)`` array of index pairs ``(i, j)``, ``i < j``, with
    ``hamming(fps[i], fps[j]) <= k``, sorted."""
    values = np.ascontiguousarray(np.asarray(fps, dtype=np.uint64))
    layout = block_layout(k)
    n = len(values)
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64)
    found: list[npt.NDArray[np.int64]] = []
    for block, (shift, width) in enumerate(layout):
        mask = np.uint64((1 << width) - 1)
        keys = (values >> np.uint64(shift)) & mask
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        sorted_fps = values[order]
        # rest[p] = how many later positions share p's block value
        starts = np.flatnonzero(_run_starts(sorted_keys))
        ends = _append(starts[1:], n)
        run_end = np.repeat(ends, ends - starts)
        rest = run_end - np.arange(n) - 1
        active = np.flatnonzero(rest > 0)
        offset = 1
        while len(active):
            other = active + offset
            near = np.bitwise_count(sorted_fps[active] ^ sorted_fps[other]) <= k
            if near.any():
                a, b = active[near], other[near]
                xor = sorted_fps[a] ^ sorted_fps[b]
                first = np.ones(len(a), dtype=np.bool_)
                for earlier_shift, earlier_width in layout[:block]:
                    earlier_mask = np.uint64((1 << earlier_width) - 1)
                    first &= ((xor >> np.uint64(earlier_shift)) & earlier_mask) != 0
                i, j = order[a[first]], order[b[first]]
                found.append(np.stack([np.minimum(i, j), np.maximum(i, j)], axis=1))
            offset += 1
            active = active[rest[active] >= offset]
    if not found:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = np.concatenate(found).astype(np.int64)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
