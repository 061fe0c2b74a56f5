"""Whose decisions a fitted match model learnt from, and whether one editor could have
poisoned it. The editors' decisions are the labels of the fit (articles/tuning/matcher.py);
one editor merging unrelated stories and splitting true copies can teach the model the
opposite of the product's definition, and a held-out set drawn from the same decisions
would vouch for it. So every fitted version's report also says, per editor: how many of
the decisions fitted on are theirs (and their share), how many held out, and how often
the active model and this version agree with them (at the match threshold). A version is
**flagged** when more than :data:`DOMINANT_SHARE` of its fitted decisions are one
editor's, or when its held-out decisions are all one editor's; the report then gives the
held-out figures without that editor's decisions too (the decisions neither that editor
nor the fit made). Flagged versions are shown as such in the admin and never activated
by ``train_matcher --activate``: a person decides."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

from articles.models import EditorLink, LinkKind
from fingerprints.rule import EngineConfig
from fingerprints.rule.match_model import MatchModel
from fingerprints.rule.match_training import (
    Example,
    PairOfFeatures,
    levels_of,
    precision_recall,
    scores,
)


class Labelled(Protocol):
    """An editor's decision as matcher.editor_pairs reads it."""

    @property
    def nids(self) -> tuple[str, str]: ...
    @property
    def example(self) -> Example: ...
    @property
    def pair(self) -> PairOfFeatures: ...

#: a version more than this share of whose fitted decisions are one editor's is flagged
DOMINANT_SHARE = 0.6
UNKNOWN = "—"  # a decision whose editor was deleted, or made by a command


def editors_of(pairs: Sequence[Labelled]) -> list[str]:
    """The username of the editor who made each pair's decision (the latest one)."""
    made = {(kind, a, b): name or UNKNOWN for kind, a, b, name in EditorLink.objects
            .order_by("pk").values_list("kind", "nid_a", "nid_b", "created_by__username")}
    out = []
    for pair in pairs:
        kind = LinkKind.MUST if pair.example.match else LinkKind.CANNOT
        a, b = pair.nids
        out.append(made.get((kind, a, b)) or made.get((kind, b, a)) or UNKNOWN)
    return out


def audit(fitted: Sequence[Labelled], held: Sequence[Labelled], current: MatchModel,
          proposed: MatchModel, config: EngineConfig) -> dict[str, Any]:
    """The report's ``editors`` (a row per editor), ``flags`` (why it is flagged, empty
    when it is not) and ``withoutEditor`` (the held-out figures without the flagged
    editor's decisions, at the match threshold; None when not flagged)."""
    threshold = config.match_threshold
    proposed_config = config if proposed.bounds == current.bounds else replace(
        config, model=proposed)
    fitted_by, held_by = editors_of(fitted), editors_of(held)

    def agreement(model: MatchModel, cfg: EngineConfig, pairs: list[Labelled]) -> float | None:
        if not pairs:
            return None
        examples = [p.example if cfg is config else
                    Example(levels_of(p.pair.a, p.pair.b, cfg), p.pair.match) for p in pairs]
        return sum((p >= threshold) == m for p, m in scores(model, examples)) / len(pairs)

    counted, held_counted = Counter(fitted_by), Counter(held_by)
    rows: list[dict[str, Any]] = []
    for editor in sorted({*counted, *held_counted}):
        theirs = [p for p, who in zip([*fitted, *held], [*fitted_by, *held_by], strict=True)
                  if who == editor]
        rows.append({"editor": editor, "fitted": counted[editor],
                     "share": counted[editor] / len(fitted) if fitted else 0.0,
                     "heldOut": held_counted[editor],
                     "current": agreement(current, config, theirs),
                     "proposed": agreement(proposed, proposed_config, theirs)})
    flags, suspect = [], None
    top = max(rows, key=lambda row: row["share"], default=None)
    if top is not None and top["share"] > DOMINANT_SHARE:
        suspect = top["editor"]
        flags.append(f"{top['share']:.0%} of the decisions fitted on are {suspect}'s "
                     f"(more than {DOMINANT_SHARE:.0%})")
    if held and len(held_counted) == 1:
        suspect = suspect or held_by[0]
        flags.append(f"every held-out decision is {held_by[0]}'s")
    without = None
    if suspect is not None:
        others = [p for p, who in zip(held, held_by, strict=True) if who != suspect]
        now = [p.example for p in others]
        then = now if proposed_config is config else [
            Example(levels_of(p.pair.a, p.pair.b, proposed_config), p.pair.match)
            for p in others]
        without = {"editor": suspect, "pairs": len(others),
                   "current": precision_recall(scores(current, now), threshold),
                   "proposed": precision_recall(scores(proposed, then), threshold)}
    return {"editors": rows, "flags": flags, "withoutEditor": without}


def label_shares(fitted_by: Sequence[str], held_by: Sequence[str]
                 ) -> tuple[list[dict[str, Any]], list[str]]:
    """Whose labels a vector version learnt from (one editor's name per label fitted on
    and per label held out): a row per editor (labels fitted on, their share, held out)
    and the flags (empty when none): more than :data:`DOMINANT_SHARE` of the labels
    fitted on are one editor's."""
    counted, held_counted = Counter(fitted_by), Counter(held_by)
    rows: list[dict[str, Any]] = [{"editor": editor, "fitted": counted[editor],
             "share": counted[editor] / len(fitted_by) if fitted_by else 0.0,
             "heldOut": held_counted[editor], "current": None, "proposed": None}
            for editor in sorted({*counted, *held_counted})]
    flags: list[str] = []
    top = max(rows, key=lambda row: float(row["share"]), default=None)
    if top is not None and top["share"] > DOMINANT_SHARE:
        flags.append(f"{top['share']:.0%} of the labels fitted on are {top['editor']}'s "
                     f"(more than {DOMINANT_SHARE:.0%})")
    return rows, flags
