import itertools

import numpy as np

from fingerprints.rule.simhash import hamming
from fingerprints.table.allpairs import all_pairs


def test_all_pairs_matches_brute_force() -> None:
    rng = np.random.default_rng(7)
    fps = rng.integers(0, 2**64 - 1, size=400, dtype=np.uint64, endpoint=True)
    # plant near pairs at distances 0..8 across block borders
    for d in range(9):
        bits = rng.choice(64, size=d, replace=False)
        fps[2 * d + 1] = fps[2 * d] ^ np.uint64(sum(1 << int(b) for b in bits))
    for k in (0, 1, 3, 6, 8):
        expected = [
            (i, j) for i, j in itertools.combinations(range(len(fps)), 2)
            if hamming(int(fps[i]), int(fps[j])) <= k
        ]
        assert [tuple(p) for p in all_pairs(fps, k).tolist()] == expected


def test_all_pairs_of_nothing_is_empty() -> None:
    assert all_pairs(np.zeros(0, dtype=np.uint64), 3).shape == (0, 2)
