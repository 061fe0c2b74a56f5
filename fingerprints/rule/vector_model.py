"""The learned match model on the comparison vector (engine v4).

A candidate pair's :class:`~fingerprints.rule.comparison.ComparisonVector` holds one
continuous measure per comparison. The model puts each measure at a *level* by its cut
points (``cuts``: level ``k`` is "at least ``cuts[k-1]``, below ``cuts[k]``") and adds,
in bits as the rule's match model does:

* the comparison's ``present`` weight when the measure exists (a missing measure —
  no number on one side, no pictures — adds nothing: Splink's null level), and
* one ``step`` per cut the measure reaches (the *cumulative* coding: level ``k`` adds
  ``steps[0] + ... + steps[k-1]``).

Each comparison declares the direction it may push (``direction``: +1 more of it never
lowers the match weight, -1 never raises it, 0 free); a step against the direction is
refused (:meth:`VectorModel.from_dict`) and never fitted (sign-constrained fit in
:mod:`fingerprints.rule.vector_training`). So more containment never lowers a pair's
probability and more conflicting names never raises it.

Scoring is exact: every weight is a whole number of centibits (1/100 bit) and a pair's
match weight is their integer sum, so online, batch and Spark compute the same number;
the decision at a threshold is an integer comparison with the model's cut for that
threshold (:meth:`VectorModel.cut`). The probability shown is calibrated: Platt's
``scale * w + offset`` (bits) fitted on grouped folds, then ``1 / (1 + 2**-x)``.

The model is data: versioned JSON (``kind: "vector"``), the shipped one in
``data/vector_model.json`` (scripts: bench/vector_model.py ``--write``).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from importlib import resources
from itertools import accumulate
from typing import Any

from fingerprints.rule.comparison import COMPARISONS, ComparisonVector
from fingerprints.rule.match_model import probability

KIND = "vector"
SHIPPED = "vector_model.json"  # in fingerprints/rule/data/
CENTIBITS = 100  # weights are whole numbers of 1/100 bit


@dataclass(frozen=True)
class Spec:
    """One comparison of the model: its declared direction, its cut points and weights
    (bits)."""

    name: str
    direction: int  # +1, -1 or 0
    cuts: tuple[float, ...]
    present: float = 0.0
    steps: tuple[float, ...] = ()
    # the regime it applies in (VectorModel.regime_of: the smaller body's size and, in
    # a model with script regimes, whether both bodies are CJK), or -1 in every one: a
    # title says another thing beside two long bodies than alone
    regime: int = -1
    # the definition's weight, not the labels': every fit keeps ``present`` and ``steps``
    # as they are (vector_training._parameters), whatever its labels say
    fixed: bool = False

    @property
    def key(self) -> str:
        """``name`` or ``name@regime``: the spec's name in the JSON and the explanation."""
        return self.name if self.regime < 0 else f"{self.name}@{self.regime}"

    def level(self, value: float | None) -> int | None:
        """The level of ``value``: how many cuts it reaches; None when missing."""
        if value is None:
            return None
        return bisect_right(self.cuts, value)

    def label(self, level: int | None) -> str:
        if level is None:
            return "missing"
        if level == 0:
            return f"< {self.cuts[0]:g}"
        if level == len(self.cuts):
            return f">= {self.cuts[-1]:g}"
        return f"{self.cuts[level - 1]:g}-{self.cuts[level]:g}"


# The schema a model starts from (bench/vector_model.py fits the shipped model on it).
# Shares are cut finely where the rule's bounds lie; counts at the guards' counts.
SHARES = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
SIMILARITY = (0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
CONFLICT_SHARES = (0.01, 0.1, 0.2, 0.3, 0.5)
DEFAULT_SCHEMA: tuple[tuple[str, int, tuple[float, ...]], ...] = (
    ("jaccard", 1, SHARES),
    ("containment", 1, SHARES),
    ("containment_of_longer", 1, SHARES),
    ("length_ratio", 0, (0.1, 0.25, 0.5, 0.75, 0.9)),
    ("smaller_shingles", 0, (1, 10, 30, 60, 120, 300)),
    ("long_containment", 1, (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)),
    ("keys", 1, (0.05, 0.2, 0.4, 0.6, 0.8)),
    ("title", 1, SIMILARITY),
    ("title_conflict", -1, (0.5, 0.7, 0.8, 0.9)),
    ("title_number_conflict", -1, (0.5, 0.7, 0.8, 0.9)),
    ("short_text", 1, (0.5, 0.7, 0.8, 0.9, 0.95)),
    ("short_conflict", -1, (0.5, 0.7, 0.8, 0.9)),
    ("numbers_agree", 1, (0.1, 0.25, 0.5, 0.75)),
    ("numbers_conflict", -1, CONFLICT_SHARES),
    ("numbers_conflicts", -1, (1, 2, 3, 5)),
    ("names_agree", 1, (0.1, 0.25, 0.5, 0.75)),
    ("names_conflict", -1, CONFLICT_SHARES),
    ("names_conflicts", -1, (1, 2, 3, 5)),
    ("pictures", 1, (1,)),
    ("off_title", 0, (1, 2)),
    ("char_bodies", 0, (1, 2)),
)
# The comparisons of version-6 features (fingerprints/rule/main_body.py) the model
# weighs, one weight set for every regime (regime -1): the codes in context, by the
# definition (CODE_WEIGHTS, fixed). The others (the main body's containment, the chrome
# shares, the template share, the codes shared) are in the vector, unweighed: fitted to
# the 766 labelled pairs they left the grouped CV where it was and joined a Xinhua
# template for another day (docs/results/log.md, 2026-11-29, vector-5).
SHARED_SCHEMA: tuple[tuple[str, int, tuple[float, ...]], ...] = (
    ("codes_conflict", -1, (0.01, 0.5)),
)
# The comparisons of version-7 features (names in context by kind, weighed by rarity;
# the quoted share of the shared clause keys), their declared directions (a conflicting
# name never raises the match weight, nor does a shared block that quotes a third
# source) and cuts: what a fit that weighs them starts from (bench/vector_model.py
# --names shared or regimes). The shipped model leaves them unweighed (docs/results/
# log.md, 2026-11-29, features version 7).
NAMES_SCHEMA: tuple[tuple[str, int, tuple[float, ...]], ...] = (
    ("names_kind_conflict", -1, CONFLICT_SHARES),
    ("names_kind_conflicts", -1, (1, 2, 3, 5)),
    ("names_person_conflict", -1, (0.01, 0.2, 0.5)),
    ("names_place_conflict", -1, (0.01, 0.2, 0.5)),
    ("names_organisation_conflict", -1, (0.01, 0.2, 0.5)),
    ("names_other_conflict", -1, (0.01, 0.2, 0.5)),
    ("quoted_shared", -1, (0.01, 0.5, 0.9)),
)


# no body, a short body, two long ones (the rule's short_shingles): what a title or a
# shared number says differs between them
REGIME_CUTS = (1, 30)
# ... and each body regime twice, by script (VectorModel.script_regimes): two CJK bodies
# (character 5-gram sketches, Features.char_shingles on both sides) or not (word
# 5-grams on either side). 60 % of a CJK text's character 5-grams found in another page
# is mostly a partial repost; 60 % of an English text's word 5-grams, two write-ups of
# one event quoting the same people (docs/results/match-model.md)
SCRIPT_REGIMES = True


@dataclass(frozen=True)
class Contribution:
    comparison: str
    level: str  # the level's label ("0.6-0.7", "missing")
    weight: float  # bits


@dataclass(frozen=True)
class VectorScore:
    """A pair's match weight (exact, in centibits) and calibrated probability."""

    model: str
    centibits: int
    probability: float
    prior: float
    weights: tuple[Contribution, ...]

    @property
    def match_weight(self) -> float:
        return self.centibits / CENTIBITS

    def as_dict(self) -> dict[str, Any]:
        """The JSON form of the explanation (as ``Score.as_dict``, plus the probability)."""
        return {"model": self.model, "prior": self.prior, "matchWeight": self.match_weight,
                "probability": self.probability,
                "weights": [{"comparison": w.comparison, "level": w.level, "weight": w.weight}
                            for w in self.weights]}


UNWEIGHED = "unweighed"  # a comparison the model has no spec for in the pair's regime


_Weighing = tuple[Spec, tuple[float, ...], tuple[int, ...]]  # a spec, its cuts, level sums
# a comparison in one regime: the specs in force that weigh it; with one spec, its line
# per level; the line of a missing measure (or of no spec: unweighed)
_Explainer = tuple[tuple[_Weighing, ...], tuple[Contribution, ...], Contribution]


def _explainer(place: int, specs: tuple[_Weighing, ...]) -> _Explainer:
    missing = _line(place, specs, (None,) * len(specs))
    if len(specs) != 1:
        return specs, (), missing
    return specs, tuple(_line(place, specs, (level,))
                        for level in range(len(specs[0][1]) + 1)), missing


def _line(place: int, specs: Sequence[_Weighing],
          levels: tuple[int | None, ...]) -> Contribution:
    """The explanation's line of the comparison at ``place`` (VectorModel.explain)."""
    if not specs:
        return Contribution(COMPARISONS[place], UNWEIGHED, 0.0)
    weight = 0.0
    for (_spec, _cuts, sums), level in zip(specs, levels, strict=True):
        weight += 0.0 if level is None else sums[level] / CENTIBITS
    return Contribution(COMPARISONS[place], specs[0][0].label(levels[0]), weight)


def _centi(value: float) -> int:
    return int(round(value * CENTIBITS))


@dataclass(frozen=True)
class VectorModel:
    """A versioned model on the comparison vector (hashable; JSON: :meth:`as_dict`)."""

    version: str
    prior: float
    specs: tuple[Spec, ...]
    scale: float = 1.0  # Platt calibration of the match weight: scale * w + offset, bits
    offset: float = 0.0
    description: str = ""
    # the regimes: cut points on the smaller body's shingles (regime k: at least
    # regime_cuts[k-1], below regime_cuts[k]); () one regime
    regime_cuts: tuple[float, ...] = ()
    # each body regime (k >= 1) split by script: k for two CJK bodies, k + len(regime_cuts)
    # otherwise (regime_of); False: one set of regimes whatever the script
    script_regimes: bool = False
    # per spec: (the measure's place in the vector, its regime, its cuts, the centibits
    # of each level: present, present + steps[0], ...)
    _table: tuple[tuple[int, int, tuple[float, ...], tuple[int, ...]], ...] = field(
        default=(), compare=False, hash=False, repr=False)
    _cuts: dict[float, int] = field(default_factory=dict, init=False, compare=False,
                                    hash=False, repr=False)  # cut() per threshold
    # per regime: per comparison (COMPARISONS' order), an _Explainer of the specs in
    # force there (every regime's and its own, in spec order): what a pair is scored on;
    # and the lines of two specs' levels met so far, by (regime, comparison, levels)
    _explain: tuple[tuple[_Explainer, ...], ...] = field(
        default=(), init=False, compare=False, hash=False, repr=False)
    _lines: dict[tuple[int, int, tuple[int | None, ...]], Contribution] = field(
        default_factory=dict, init=False, compare=False, hash=False, repr=False)
    _hash: int = field(default=0, init=False, compare=False, hash=False, repr=False)

    def __hash__(self) -> int:
        """The hash of the compared fields, made once: a configuration holding the model
        is a cache key per decision (decision._strict), and hashing every spec's cuts
        each time cost more than the comparison vector."""
        return self._hash

    def __post_init__(self) -> None:
        unknown = sorted({s.name for s in self.specs} - set(COMPARISONS))
        keys = [s.key for s in self.specs]
        if unknown or len(set(keys)) != len(keys):
            raise ValueError(f"unknown or repeated comparisons: {unknown or keys}")
        if any(b <= a for a, b in zip(self.regime_cuts, self.regime_cuts[1:], strict=False)):
            raise ValueError("regime cuts must be increasing")
        if any(not -1 <= s.regime < self.regime_count for s in self.specs):
            raise ValueError("a spec's regime must be -1 or one of the regimes")
        for s in self.specs:
            if s.direction not in (-1, 0, 1):
                raise ValueError(f"{s.name}: direction must be -1, 0 or 1")
            if not s.cuts or any(b <= a for a, b in zip(s.cuts, s.cuts[1:], strict=False)):
                raise ValueError(f"{s.name}: cuts must be increasing")
            if len(s.steps) != len(s.cuts):
                raise ValueError(f"{s.name}: one step per cut")
            if any(step * s.direction < 0 for step in s.steps):
                raise ValueError(f"{s.name}: a step against the declared direction")
            if any(abs(w) > 1000 for w in (s.present, *s.steps)):
                raise ValueError(f"{s.name}: weights of at most 1000 bits")
        if not self.scale > 0:
            raise ValueError("the calibration's scale must be positive")
        table = tuple((COMPARISONS.index(s.name), s.regime, s.cuts,
                       tuple(accumulate((_centi(w) for w in s.steps), initial=_centi(s.present))))
                      for s in self.specs)
        object.__setattr__(self, "_table", table)
        object.__setattr__(self, "_explain", tuple(
            tuple(_explainer(place, tuple((spec, cuts, sums) for (i, r, cuts, sums), spec
                                          in zip(table, self.specs, strict=True)
                                          if i == place and r in (-1, regime)))
                  for place in range(len(COMPARISONS)))
            for regime in range(self.regime_count)))
        object.__setattr__(self, "_cuts", {})
        object.__setattr__(self, "_lines", {})
        object.__setattr__(self, "_hash", hash(tuple(
            getattr(self, f.name) for f in fields(self) if f.compare)))

    # --- scoring ---------------------------------------------------------------------

    @property
    def regime_count(self) -> int:
        """How many regimes the model has (a spec's ``regime`` is below it, or -1)."""
        sizes = len(self.regime_cuts) + 1
        return sizes + len(self.regime_cuts) if self.script_regimes and self.regime_cuts \
            else sizes

    def regime_of(self, vector: ComparisonVector) -> int:
        """The pair's regime: by the smaller body's shingles (``regime_cuts``) and, with
        ``script_regimes``, a body regime moved up by ``len(regime_cuts)`` unless both
        bodies are CJK (``char_bodies`` 2)."""
        return self.regime_for(vector.smaller_shingles, vector.char_bodies)

    def regime_for(self, smaller_shingles: float, char_bodies: float) -> int:
        """:meth:`regime_of` a vector with these two measures."""
        regime = bisect_right(self.regime_cuts, smaller_shingles)
        if self.script_regimes and regime > 0 and char_bodies < 2:
            regime += len(self.regime_cuts)
        return regime

    def regime_name(self, regime: int) -> str:
        """A regime as the explanation shows it: its size band and, with script regimes,
        its script."""
        if regime < 0:
            return "any"
        sizes = len(self.regime_cuts)
        size = regime if regime <= sizes else regime - sizes
        bounds = (0.0, *self.regime_cuts, float("inf"))
        band = f"{bounds[size]:g}-{bounds[size + 1]:g} shingles" if size < sizes \
            else f">= {bounds[size]:g} shingles"
        if not self.script_regimes or size == 0:
            return band
        return f"{band}, {'CJK' if regime <= sizes else 'words'}"

    def levels(self, vector: ComparisonVector) -> tuple[int | None, ...]:
        """Each spec's level on ``vector`` (None: missing, or another regime's)."""
        values = vector.values()
        regime = self.regime_of(vector)
        out: list[int | None] = []
        for i, r, cuts, _sums in self._table:
            value = values[i]
            out.append(None if value is None or r not in (-1, regime)
                       else bisect_right(cuts, value))
        return tuple(out)

    def centibits(self, vector: ComparisonVector) -> int:
        """The match weight in centibits: an integer sum (the same on every machine) of
        the specs in force in the pair's regime (:meth:`explain`'s)."""
        return self.explain(vector)[1]

    def explain(self, vector: ComparisonVector
                ) -> tuple[int, int, tuple[Contribution, ...]]:
        """(the pair's regime, its match weight in centibits, one :class:`Contribution`
        per comparison of the vector in its order): the weight of the specs in force
        there (two specs of one comparison, every regime's and the regime's own, summed
        in spec order on one line under the first one's level), ``unweighed`` when none
        weighs it; the same sum as :meth:`score`'s. A line is made once per model and
        levels, then reused: a pair's explanation costs its bisections."""
        values = vector.values()
        regime = self.regime_of(vector)
        total = _centi(self.prior)
        parts: list[Contribution] = []
        for place, (specs, by_level, missing) in enumerate(self._explain[regime]):
            value = values[place]
            if value is None or not specs:
                parts.append(missing)
            elif by_level:  # one spec: its line per level, made with the model
                cuts, sums = specs[0][1], specs[0][2]
                level = bisect_right(cuts, value)
                total += sums[level]
                parts.append(by_level[level])
            else:
                levels = tuple(bisect_right(cuts, value) for _spec, cuts, _sums in specs)
                total += sum(sums[at] for (_spec, _cuts, sums), at
                             in zip(specs, levels, strict=True))
                line = self._lines.get((regime, place, levels))
                if line is None:
                    line = self._lines[(regime, place, levels)] = _line(place, specs, levels)
                parts.append(line)
        return regime, total, tuple(parts)

    def _centibits(self, levels: tuple[int | None, ...]) -> int:
        total = _centi(self.prior)
        for (_i, _r, _c, sums), level in zip(self._table, levels, strict=True):
            if level is not None:
                total += sums[level]
        return total

    def calibrated(self, centibits: int) -> float:
        """The calibrated probability of a match weight (centibits)."""
        return probability(self.scale * centibits / CENTIBITS + self.offset)

    def score(self, vector: ComparisonVector) -> VectorScore:
        """The match weight, probability and every comparison's contribution."""
        levels = self.levels(vector)
        parts = tuple(Contribution(spec.key, spec.label(level),
                                   0.0 if level is None else sums[level] / CENTIBITS)
                      for (_i, _r, _c, sums), spec, level in zip(self._table, self.specs, levels,
                                                                 strict=True))
        total = self._centibits(levels)
        return VectorScore(self.version, total, self.calibrated(total), self.prior, parts)

    def cut(self, threshold: float) -> int:
        """The smallest match weight (centibits) whose calibrated probability is at
        least ``threshold``: a pair matches when its weight reaches it (an integer
        comparison, the same as comparing the probability). Computed once per model and
        threshold by bisection with :meth:`calibrated`; two processes could disagree
        only if their C libraries' ``pow`` differed in the last bit exactly at a
        threshold a weight's probability equals, which one build does not allow."""
        found = self._cuts.get(threshold)
        if found is None:  # kept on the model: hashing a whole model per lookup cost more
            found = self._cuts[threshold] = _cut(self, threshold)
        return found

    def matches(self, vector: ComparisonVector, threshold: float) -> bool:
        return self.centibits(vector) >= self.cut(threshold)

    # --- data ------------------------------------------------------------------------

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": KIND, "version": self.version, "description": self.description,
            "prior": self.prior,
            "calibration": {"scale": self.scale, "offset": self.offset},
            "regime_cuts": list(self.regime_cuts),
            **({"script_regimes": True} if self.script_regimes else {}),
            "comparisons": [{"name": s.name, "regime": s.regime, "direction": s.direction,
                             "cuts": list(s.cuts), "present": s.present, "steps": list(s.steps),
                             **({"fixed": True} if s.fixed else {})}
                            for s in self.specs],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VectorModel:
        try:
            if data.get("kind") != KIND:
                raise ValueError(f"not a {KIND} model: kind {data.get('kind')!r}")
            specs = tuple(
                Spec(str(c["name"]), int(c["direction"]), tuple(float(x) for x in c["cuts"]),
                     float(c["present"]), tuple(float(x) for x in c["steps"]),
                     int(c.get("regime", -1)), bool(c.get("fixed", False)))
                for c in data["comparisons"])
            calibration = data.get("calibration") or {}
            return cls(str(data["version"]), float(data["prior"]), specs,
                       float(calibration.get("scale", 1.0)),
                       float(calibration.get("offset", 0.0)), str(data.get("description", "")),
                       tuple(float(x) for x in data.get("regime_cuts", ())),
                       bool(data.get("script_regimes", False)))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not a vector model: {exc}") from exc

    def to_json(self) -> str:
        """:meth:`as_dict` as JSON, one comparison a line."""
        data = self.as_dict()
        comparisons = data.pop("comparisons")
        head = json.dumps(data, indent=1, ensure_ascii=False)[:-2]  # without "\n}"
        rows = ",\n  ".join(json.dumps(c, ensure_ascii=False) for c in comparisons)
        return f'{head},\n "comparisons": [\n  {rows}\n ]\n}}\n'


def _cut(model: VectorModel, threshold: float) -> int:
    if threshold <= 0.0:
        return -(1 << 62)
    low, high = -(1 << 40), 1 << 40  # weights are at most 1000 bits a comparison
    if model.calibrated(high) < threshold:
        return high + 1
    while low < high:  # the smallest s with calibrated(s) >= threshold (monotone in s)
        mid = (low + high) // 2
        if model.calibrated(mid) >= threshold:
            high = mid
        else:
            low = mid + 1
    return low


def blank_model(version: str = "blank", schema: Sequence[tuple[str, int, tuple[float, ...]]]
                = DEFAULT_SCHEMA, regime_cuts: Sequence[float] = REGIME_CUTS,
                script_regimes: bool = SCRIPT_REGIMES,
                shared: Sequence[tuple[str, int, tuple[float, ...]]] = ()) -> VectorModel:
    """Every weight 0 on ``schema``, each comparison once per regime, and on
    :data:`SHARED_SCHEMA` and ``shared`` once for every regime: the prior of a first
    fit."""
    shape = VectorModel("shape", 0.0, (), regime_cuts=tuple(float(c) for c in regime_cuts),
                        script_regimes=script_regimes)
    regimes = range(shape.regime_count) if regime_cuts else (-1,)
    per_regime = [(name, direction, cuts, regime)
                  for regime in regimes for name, direction, cuts in schema]
    per_regime += [(name, direction, cuts, -1) for name, direction, cuts
                   in (*SHARED_SCHEMA, *shared)
                   if regime_cuts or name not in {n for n, _d, _c in schema}]
    return replace(shape, version=version, specs=tuple(
        Spec(name, direction, tuple(float(c) for c in cuts), 0.0, (0.0,) * len(cuts), regime)
        for name, direction, cuts, regime in per_regime))


# vector-0: the engine-v2 rule's bounds written on the vector by hand, in bits (what
# rule-1 is for the rule's levels): the prior the first fit is centred on, so that a
# kind of pair the labels lack (two empty bodies under unrelated titles) is still
# decided as the rule would. (regime, comparison) -> (present, {cut: step}); every other
# weight 0. Regimes: 0 no body, 1 a short body, 2 two long ones (two CJK bodies); 3 and
# 4 the same sizes with an alphabetic body (word 5-grams) on either side.
RULE_PRIOR = -10.0
RULE_WEIGHTS: dict[tuple[int, str], tuple[float, dict[float, float]]] = {
    # no body: the titles decide (title-only: >= 0.9 alike, no other number or name)
    (0, "title"): (0.0, {0.9: 12.0}),
    (0, "title_conflict"): (0.0, {0.9: -20.0}),
    # a short body: near-identical shingles, or short texts >= 0.8 alike without another
    # number or name (short-copy, short-edit)
    (1, "jaccard"): (0.0, {0.9: 20.0}),
    (1, "short_text"): (0.0, {0.8: 17.0}),
    (1, "short_conflict"): (0.0, {0.8: -30.0}),
    (1, "title"): (0.0, {0.9: 4.0}),
    (1, "title_conflict"): (0.0, {0.8: -10.0}),
    # two long bodies: copy (J >= 0.6 and C >= 0.8), contained (C >= 0.9), CJK
    # partial copies (C >= 0.7; >= 0.6 without another number or name), under one
    # headline less; the template guards
    (2, "containment"): (0.0, {0.6: 9.0, 0.7: 3.0, 0.8: 4.0, 0.9: 4.0}),
    (2, "jaccard"): (0.0, {0.3: 2.0, 0.6: 4.0}),
    (2, "title"): (0.0, {0.9: 9.0}),
    (2, "title_conflict"): (0.0, {0.8: -10.0}),
    # the items of a series under one headline ("(1)", "(4)"): one frame, other
    # pictures, whatever their captions share (the rule's title guard, a veto)
    (2, "title_number_conflict"): (0.0, {0.8: -20.0}),
    (2, "numbers_conflicts"): (0.0, {1: -3.0, 2: -10.0}),
    (2, "names_conflicts"): (0.0, {1: -2.0, 2: -4.0}),
    (2, "names_conflict"): (0.0, {0.2: -6.0}),
    (1, "numbers_conflicts"): (0.0, {1: -10.0}),
    (1, "names_conflicts"): (0.0, {1: -10.0}),
    # the same with word bodies (a short body: regime 1's weights, below); two long ones
    # are a copy at Jaccard >= 0.6 (word-copy) or containment >= 0.7 (word-contained),
    # never at the CJK partial level (0.6 without another number or name)
    # (4 bits clear of the prior at each bound: these weights are the model's own where
    # no label reaches, so the calibration fitted on the labelled regimes must not move
    # a bound's pair across the threshold)
    (4, "containment"): (0.0, {0.7: 14.0, 0.8: 4.0, 0.9: 4.0}),
    (4, "jaccard"): (0.0, {0.3: 2.0, 0.6: 12.0}),
    (4, "title"): (0.0, {0.9: 12.0}),
    (4, "title_conflict"): (0.0, {0.8: -10.0}),
    (4, "numbers_conflicts"): (0.0, {1: -3.0, 2: -10.0}),
    (4, "names_conflicts"): (0.0, {1: -2.0, 2: -10.0}),
}
# Pictures (both sides have some; the labels have none, so these weights are the
# definition's, kept by every fit): a picture shared is evidence for, one side's
# pictures all different from the other's is evidence against (pictures@k present: none
# shared; step at 1: shared). Without a body, as the rule's same-picture level: titles
# at least 0.6 alike over one photo are one post, and two titles under other photos are
# two (item (3) and item (4) of a series under one caption: a veto, as for two short
# bodies). Two long bodies: a shared photo lifts a partial copy under one headline over
# the threshold when its text alone is borderline; another photo is mild evidence
# against a template for another town. A short body (regime 1) under other photos is a
# veto too: one caption under two photos of a series is two posts, and two identical
# captions weigh about 50 bits (vector-3's -20 let them join).
PICTURE_WEIGHTS: dict[tuple[int, str], tuple[float, dict[float, float]]] = {
    (0, "pictures"): (-20.0, {1.0: 30.0}),
    (0, "title"): (0.0, {0.6: 4.0, 0.9: 8.0}),
    (1, "pictures"): (-60.0, {1.0: 66.0}),
    (2, "pictures"): (-1.5, {1.0: 6.5}),
}
# Codes in context (version-6 features; every regime): a phone, order or model number
# that differs in the same context between two near-copies is another contact, company or
# item (DESIGN.md: the same template for another company, contact or product is not a
# duplicate), whatever the rest of the text shares. The labels cannot teach it: 13 of the
# 766 labelled pairs have such a code, 12 of them distinct and one an ad for another phone
# labelled a copy (docs/results/log.md, 2026-11-29, vector-5), and a fit gives a code the
# weight its few pairs happen to carry. So it is the definition's, fixed: every fit keeps
# it and leaves it out of what it fits (Spec.fixed; vector_training.design). One conflicting code
# context in any share weighs -6 bits (a repost that kept its codes and changed one is
# rare, an update of a count is a number, not a code); half or more of them -22 bits more:
# a template that differs in nothing but its contact's phone or its model code shares
# every other word, 15-23 bits of body and title, and must fall below the threshold. A
# code only one side has (a repost that dropped the contact line) is no conflict: its
# context is not shared (comparison._code_contexts).
CODE_WEIGHTS: dict[tuple[int, str], tuple[float, dict[float, float]]] = {
    (-1, "codes_conflict"): (0.0, {0.01: -6.0, 0.5: -22.0}),
}
RULE_WEIGHTS.update(PICTURE_WEIGHTS)
RULE_WEIGHTS.update(CODE_WEIGHTS)
RULE_WEIGHTS.update({(3, name): weights for (regime, name), weights in list(RULE_WEIGHTS.items())
                     if regime == 1})
RULE_WEIGHTS[(4, "pictures")] = RULE_WEIGHTS[(2, "pictures")]


def rule_vector_model(version: str = "vector-0", *, names: str = "") -> VectorModel:
    """vector-0: :data:`RULE_WEIGHTS` on the default schema and regimes; ``names``
    "shared" or "regimes": with :data:`NAMES_SCHEMA` (weights 0) once for every regime
    or in each."""
    if names not in ("", "shared", "regimes"):
        raise ValueError(f"names must be '', 'shared' or 'regimes', not {names!r}")
    blank = blank_model(version, (*DEFAULT_SCHEMA, *NAMES_SCHEMA) if names == "regimes"
                        else DEFAULT_SCHEMA, shared=NAMES_SCHEMA if names == "shared" else ())
    specs = []
    for s in blank.specs:
        present, steps = RULE_WEIGHTS.get((s.regime, s.name), (0.0, {}))
        unknown = set(steps) - set(s.cuts)
        if unknown:
            raise ValueError(f"{s.key}: {sorted(unknown)} is not a cut")
        specs.append(replace(s, present=present,
                             steps=tuple(steps.get(cut, 0.0) for cut in s.cuts),
                             fixed=(s.regime, s.name) in CODE_WEIGHTS))
    return replace(blank, prior=RULE_PRIOR, specs=tuple(specs),
                   description="the engine-v2 rule's bounds on the vector, by hand")


@lru_cache(maxsize=1)
def shipped_vector_model() -> VectorModel:
    """The model fitted to the project's labelled pairs (``data/vector_model.json``)."""
    text = resources.files("fingerprints.rule").joinpath("data", SHIPPED).read_text(
        encoding="utf-8")
    return VectorModel.from_dict(json.loads(text))
