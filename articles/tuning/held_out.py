"""Which editors' labels a match model fit holds out: whole decisions, one in :data:`HELD_OUT`.

One decision labels many pairs at once (a split cannot-links the article to every member
it leaves, a confirm must-links the first member to each other), and those pairs are one
editor's one judgement, right or wrong together. Held out pair by pair, some of them
would teach the candidate model and the rest vouch for it. So a pair's *group* is the
decision that wrote its label (the latest not undone), and a group is held out, or
folded in cross-validation, whole: by a hash of ``decision|<pk>``, the same in every fit
(the level weights and bounds, the comparison vector) and in the settings preview, so a
decision held out of one is held out of all. A label no decision wrote (a link from
before decisions were kept, an answer on the teaching queue) is grouped by connected
component of those labels: pairs sharing an article never fall on two sides.
"""

from __future__ import annotations

from collections.abc import Iterable

import mmh3

from articles.models import Decision, EditorLink

HELD_OUT = 5  # one decision (or component of labels without one) in this many


def decision_group(decision: int) -> str:
    return f"decision|{decision}"


def component_group(smallest_nid: str) -> str:
    return f"labels|{smallest_nid}"


def group_key(group: str) -> int:
    """A stable number per group: its pairs share it (the folds of a fit take it)."""
    return mmh3.hash(group, signed=False)


def group_held_out(group: str) -> bool:
    return group_key(group) % HELD_OUT == 0


def decision_held_out(decision: int) -> bool:
    """One decision in :data:`HELD_OUT`, by a hash of its id: all its pairs together."""
    return group_held_out(decision_group(decision))


def components(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each nid of ``pairs`` -> the smallest nid of its connected component."""
    parent: dict[str, str] = {}

    def root(nid: str) -> str:
        while parent.setdefault(nid, nid) != nid:
            parent[nid] = parent[parent[nid]]
            nid = parent[nid]
        return nid

    for a, b in pairs:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {nid: root(nid) for nid in list(parent)}


def link_decisions() -> dict[tuple[str, str], int]:
    """The decision that wrote each editors' link as it stands: the latest not undone
    whose before-state lists the pair (a decision records every pair it links there;
    undo puts back the earlier decision's label)."""
    out: dict[tuple[str, str], int] = {}
    for pk, before in (Decision.objects.filter(undone_at__isnull=True).order_by("pk")
                       .values_list("pk", "before")):
        for a, b, _kind in (before or {}).get("links") or ():
            out[EditorLink.ordered(a, b)] = pk
    return out


def link_groups(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The group of each editors' link (ordered nids): its decision, or, for the links
    no decision wrote, their connected component."""
    pairs = list(pairs)
    decided = link_decisions()
    loose = components(p for p in pairs if p not in decided)
    return {p: decision_group(decided[p]) if p in decided else component_group(loose[p[0]])
            for p in pairs}
