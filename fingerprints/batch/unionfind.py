"""Union-find (disjoint sets) with path halving; the smaller root wins, so the
components do not depend on the order of the unions."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic, TypeVar

K = TypeVar("K", int, str)


class UnionFind(Generic[K]):
    """Disjoint sets over hashable, ordered keys (ints, strings), created on first use."""

    def __init__(self, keys: Iterable[K] = ()) -> None:
        self.parent: dict[K, K] = {key: key for key in keys}

    def find(self, key: K) -> K:
        parent = self.parent
        root = parent.setdefault(key, key)
        while parent[root] != root:
            parent[root] = parent[parent[root]]
            root = parent[root]
        return root

    def union(self, a: K, b: K) -> bool:
        """Join the sets of ``a`` and ``b``; False when they were already one."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        if rb < ra:
            ra, rb = rb, ra
        self.parent[rb] = ra
        return True

    def groups(self) -> list[list[K]]:
        """Every set with its keys in first-seen order, sets ordered by first key seen."""
        members: dict[K, list[K]] = {}
        for key in list(self.parent):
            members.setdefault(self.find(key), []).append(key)
        return list(members.values())
