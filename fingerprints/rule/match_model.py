"""The match model: comparisons of a candidate pair, their levels and match weights.

Verification (:mod:`fingerprints.rule.verification`) compares a candidate pair on a few
*comparisons* — the bodies' overlap, the titles, the numbers and the names in context,
the pictures — and puts each comparison it makes at one *level* (``body: copy``,
``numbers: differ``...). A level has a *match weight* in bits (log2 of a Bayes factor,
as in Fellegi-Sunter and Splink): the model's starting weight (``prior``) plus the
weights of the levels reached is the pair's match weight ``w``, and its match
probability is ``1 / (1 + 2**-w)``. The pair matches when that probability is at least
``EngineConfig.match_threshold`` (the admin's "match threshold"), in every language:
raising the threshold never adds a match, lowering it never removes one.

The weights and the boundaries of the levels (:class:`~fingerprints.rule.bounds.Bounds`)
are data (:class:`MatchModel`, a versioned JSON file such as the shipped
``data/match_model.json``), not code. What the code owns is the *schema*
(:data:`LEVELS`): which comparisons exist and which levels each can reach.
A comparison verification did not make (the guard of a pair whose bodies are too
different to be guarded, the pictures of an article without any) adds nothing.
docs/engine.md, "The match model", has the table of levels and the starting weights.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from fingerprints.rule.bounds import Bounds

# comparison -> its levels, in the order docs/engine.md lists them. A model must give a
# weight to every level (MatchModel.from_dict refuses one that does not).
LEVELS: dict[str, tuple[str, ...]] = {
    # the bodies' overlap on the sketches, as verification classifies the pair
    "body": (
        "copy", "word-copy", "contained", "cjk-contained", "word-contained", "short-copy",
        "short-edit", "cjk-partial", "headline-overlap", "no-body", "different",
        "short-different", "short-template",
    ),
    # the titles (title keys: letters and digits, the site's name cut off)
    # compared where the rule reads them: "same" (one headline: title_only_similarity
    # alike, no other number or name), "conflict" (alike but for another number or
    # name), "other-number" (one frame with another number in it, where a match is
    # guarded), "different"
    "title": ("same", "different", "conflict", "other-number"),
    # numbers in context (the word before a number): made when the bodies are close
    # enough to be guarded; "differ" is the guard's refusal for the pair's body level
    "numbers": ("agree", "none-shared", "some-differ", "differ"),
    "names": ("agree", "none-shared", "some-differ", "differ"),  # names in context, the same way
    # pictures, when both articles have pictures (stock pictures removed)
    "pictures": ("shared", "shared-other-title", "none-shared", "none-shared-short"),
}

STARTING_MODEL = "match_model.json"  # in fingerprints/rule/data/: what a fresh install uses
RULE_MODEL = "rule_model.json"  # the engine-v2 rule as weights: the starting model's prior


@dataclass(frozen=True)
class Weight:
    """One comparison's level on a pair and its match weight (bits)."""

    comparison: str
    level: str
    weight: float


@dataclass(frozen=True)
class Score:
    """A pair's match weight and probability under one model, and how they add up."""

    model: str  # the model's version
    prior: float
    weights: tuple[Weight, ...]

    @property
    def match_weight(self) -> float:
        return self.prior + sum(w.weight for w in self.weights)

    @property
    def probability(self) -> float:
        return probability(self.match_weight)

    def as_dict(self) -> dict[str, Any]:
        """The JSON form the API and the desk read (``matchExplanation``)."""
        return {
            "model": self.model, "prior": self.prior, "matchWeight": self.match_weight,
            "weights": [{"comparison": w.comparison, "level": w.level, "weight": w.weight}
                        for w in self.weights],
        }


def probability(match_weight: float) -> float:
    """``1 / (1 + 2**-w)``, without overflow at large weights."""
    if match_weight >= 0:
        return 1.0 / (1.0 + 2.0 ** -match_weight)
    odds = 2.0 ** match_weight
    return odds / (1.0 + odds)


@dataclass(frozen=True)
class MatchModel:
    """A versioned set of match weights: ``prior`` and, per (comparison, level), a weight
    in bits, and the ``bounds`` where the levels begin. Hashable (it is part of
    :class:`~fingerprints.rule.config.EngineConfig`)."""

    version: str
    prior: float
    weights: tuple[tuple[str, str, float], ...]
    description: str = ""
    bounds: Bounds = Bounds()
    _lookup: Mapping[tuple[str, str], float] = field(
        default_factory=dict, compare=False, hash=False, repr=False)
    # levels -> (score, probability): the rule's walk ends in one of a few hundred level
    # sequences, so each is scored once (a Score is immutable: shared). Not an init
    # field, so that dataclasses.replace gives the new model an empty one.
    _scored: dict[tuple[tuple[str, str], ...], tuple[Score, float]] = field(
        default_factory=dict, init=False, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        lookup = {(c, lvl): float(w) for c, lvl, w in self.weights}
        missing = [f"{c}: {lvl}" for c, levels in LEVELS.items() for lvl in levels
                   if (c, lvl) not in lookup]
        unknown = [f"{c}: {lvl}" for c, lvl in lookup if lvl not in LEVELS.get(c, ())]
        if missing or unknown:
            raise ValueError("the match model must weigh exactly the levels of LEVELS; "
                             f"missing {missing}, unknown {unknown}")
        if not all(isinstance(w, int | float) and abs(w) <= 1000 for _c, _l, w in self.weights):
            raise ValueError("match weights must be numbers of at most 1000 bits")
        object.__setattr__(self, "_lookup", lookup)

    def weight(self, comparison: str, level: str) -> float:
        return self._lookup[(comparison, level)]

    def score(self, levels: Iterable[tuple[str, str]]) -> Score:
        return Score(self.version, self.prior,
                     tuple(Weight(c, lvl, self._lookup[(c, lvl)]) for c, lvl in levels))

    def scored(self, levels: Iterable[tuple[str, str]]) -> tuple[Score, float]:
        """:meth:`score` of ``levels`` and its probability, each distinct sequence of
        levels computed once."""
        key = tuple(levels)
        found = self._scored.get(key)
        if found is None:
            score = self.score(key)
            found = self._scored[key] = (score, score.probability)
        return found

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MatchModel:
        """From the JSON form (:meth:`as_dict`): ``{"version", "prior", "description",
        "comparisons": {comparison: {level: weight}}, "bounds": {name: value}}``; a
        model without ``bounds`` (written before they were part of it) has the
        defaults, the engine-v2 rule's."""
        try:
            comparisons = data["comparisons"]
            weights = tuple((str(c), str(lvl), float(w))
                            for c, levels in comparisons.items() for lvl, w in levels.items())
            return cls(str(data["version"]), float(data["prior"]), weights,
                       str(data.get("description", "")), Bounds.from_dict(data.get("bounds")))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not a match model: {exc}") from exc

    def as_dict(self) -> dict[str, Any]:
        comparisons: dict[str, dict[str, float]] = {c: {} for c in LEVELS}
        for c, lvl, w in self.weights:
            comparisons[c][lvl] = w
        return {"version": self.version, "prior": self.prior,
                "description": self.description, "comparisons": comparisons,
                "bounds": self.bounds.as_dict()}


@lru_cache(maxsize=2)
def _shipped(name: str) -> MatchModel:
    text = resources.files("fingerprints.rule").joinpath("data", name).read_text(
        encoding="utf-8")
    return MatchModel.from_dict(json.loads(text))


def starting_model() -> MatchModel:
    """The model shipped with the project (``fingerprints/rule/data/match_model.json``,
    made by scripts/ship_match_model.py)."""
    return _shipped(STARTING_MODEL)


def rule_model() -> MatchModel:
    """``rule-1``: the engine-v2 rule written as weights by hand (every exit of the rule
    at least one bit on its side of the threshold); the prior the starting model is
    fitted from (``data/rule_model.json``)."""
    return _shipped(RULE_MODEL)
