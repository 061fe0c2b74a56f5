from __future__ import annotations

import random

from fingerprints.batch.unionfind import UnionFind


def test_it_joins_sets_transitively_and_reports_new_joins() -> None:
    sets: UnionFind[int] = UnionFind(range(6))
    assert sets.union(0, 1) is True
    assert sets.union(1, 2) is True
    assert sets.union(0, 2) is False  # already one set
    sets.union(4, 5)
    assert sets.find(2) == sets.find(0) != sets.find(4)
    assert sorted(map(sorted, sets.groups())) == [[0, 1, 2], [3], [4, 5]]


def test_the_smallest_key_is_the_root_whatever_the_order_of_unions() -> None:
    pairs = [(5, 3), (3, 9), (9, 1), (7, 8)]
    for seed in range(5):
        random.Random(seed).shuffle(pairs)
        sets: UnionFind[int] = UnionFind()
        for a, b in pairs:
            sets.union(a, b)
        assert {sets.find(k) for k in (1, 3, 5, 9)} == {1}
        assert sets.find(8) == 7


def test_keys_are_created_on_first_use_and_groups_keep_first_seen_order() -> None:
    sets: UnionFind[str] = UnionFind()
    sets.union("b", "a")
    sets.union("c", "d")
    sets.union("d", "b")
    assert sets.find("zzz") == "zzz"
    assert sets.groups() == [["b", "a", "c", "d"], ["zzz"]]
