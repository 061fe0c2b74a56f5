"""An exact early exit for the comparison vector's model: pairs that cannot reach the cut.

A vector model's match weight is an integer sum, one weight per comparison of the pair
(:mod:`fingerprints.rule.vector_model`), and a pair matches when the sum reaches the
model's cut. Most of a verification's cost is in a few comparisons (the titles' and
short texts' replaced stretches searched for numbers and names, the shared keys) and
in the explanation made for every pair; the sketches' overlap, the numbers and names
in context and the titles' edit similarity alone come from the kernel in a few
microseconds.

:func:`cannot_match` starts from the most each comparison could add in the pair's
regime and replaces, stage by stage, that most by what the cheap measures do add (the
bodies' overlap and sizes, then the titles' similarity, then the numbers and names in
context); a comparison it does not compute keeps the most it could add given what is
known of it (a title conflict is the titles' similarity or 0, the shared keys a share,
a comparison this module does not know anything it weighs). As soon as that upper
bound is below the cut, no verification of the pair can match, and
:func:`~fingerprints.rule.decision.decide` refuses it without one. A pair it lets
through is verified in full, so every decision, score and explanation stays what the
verification gives. A batch without learned boilerplate verifies thousands of pairs
that share only a footer's clause keys: nearly all of them stop at the first stage.

The kernel computes the same integer (``_bound.h``, the model's tables packed once by
:func:`_packed`); :func:`_bound_py` is the reference and the fallback, and
``tests/fingerprints/rule/test_weight_bound.py`` holds the two equal.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

from fingerprints.rule.comparison import (
    CHROME_SHINGLES,
    COMPARISONS,
    LONG_SHINGLES,
    OFF_TITLE_SIMILARITY,
    SHORT_SHINGLES,
    Counts,
    _agree,
    _conflict,
    _context_counts,
    mute_body,
)
from fingerprints.rule.config import EngineConfig
from fingerprints.rule.features import Features
from fingerprints.rule.kernel import kernel
from fingerprints.rule.shorttext import matching_blocks, ratio
from fingerprints.rule.sketch import overlap_counts
from fingerprints.rule.vector_model import VectorModel, _centi

# A comparison's weight in one regime as one step function: its cut points (those of
# every spec in force there, the every-regime one and the regime's own) and the
# centibits of each level (their sum); a missing measure adds 0
_Steps = tuple[tuple[float, ...], tuple[int, ...]]
_NONE: _Steps = ((), (0,))  # a comparison no spec weighs

# The stages, the cheapest and most telling first. Each is a list of groups, a group
# one value put in the step function of its comparisons: those measured exactly by the
# value, and those known to lie in [0, the value] (a title conflict is the titles'
# similarity or 0; the shared keys and the pictures are a share in [0, 1], known only
# present, 1, or missing). A comparison in no group adds the most it could.
_Group = tuple[tuple[str, ...], tuple[str, ...]]  # (exact, at most the value)
_STAGES: tuple[tuple[_Group, ...], ...] = (
    ((("smaller_shingles",), ()), (("jaccard",), ()), (("containment",), ()),
     (("title",), ("title_conflict", "title_number_conflict")), ((), ("keys",)),
     ((), ("pictures",))),
    tuple(((name,), ()) for name in (
        "containment_of_longer", "length_ratio", "long_containment", "off_title",
        "char_bodies", "numbers_agree", "numbers_conflict", "numbers_conflicts",
        "names_agree", "names_conflict", "names_conflicts")),
    ((("short_text",), ("short_conflict",)),),
)


@dataclass(frozen=True)
class _Regime:
    """One regime of a model, as the bound reads it."""

    stages: tuple[tuple[_Steps, ...], ...]  # each group's step function, as _STAGES
    # per stage: the prior plus the most every comparison not computed by then adds
    rest: tuple[int, ...]

    def stage(self, k: int, values: tuple[float | None, ...]) -> int:
        """The most stage ``k``'s groups add with these values (None: missing, 0)."""
        total = 0
        for (cuts, sums), value in zip(self.stages[k], values, strict=True):
            if value is not None:
                total += sums[bisect_right(cuts, value)]
        return total


def _steps(model: VectorModel, name: str, regime: int) -> _Steps:
    """``name``'s specs in force in ``regime`` as one step function (the same sum as
    ``VectorModel.explain``'s, level by level)."""
    return _sum(*((spec.cuts, tuple(accumulate((_centi(w) for w in spec.steps),
                                               initial=_centi(spec.present))))
                  for spec in model.specs
                  if spec.name == name and spec.regime in (-1, regime)))


def _sum(*functions: _Steps) -> _Steps:
    """The sum of step functions, as one."""
    if not functions:
        return _NONE
    cuts = tuple(sorted({cut for some, _sums in functions for cut in some}))
    # a value at or above cuts[j - 1] and below cuts[j] is at one level of every one
    return cuts, tuple(sum(sums[bisect_right(some, low)] for some, sums in functions)
                       for low in (float("-inf"), *cuts))


def _up_to(function: _Steps) -> _Steps:
    """The most ``function`` gives in [0, x], as a function of x >= 0."""
    cuts, sums = function
    first = bisect_right(cuts, 0.0)
    return cuts, tuple(max(sums[first : level + 1]) if level >= first else sums[level]
                       for level in range(len(sums)))


@lru_cache(maxsize=8)
def _regimes(model: VectorModel) -> tuple[_Regime, ...]:
    """Each regime's step functions (made once per model)."""
    out = []
    for regime in range(model.regime_count):
        steps = {name: _steps(model, name, regime) for name in COMPARISONS}
        left = set(COMPARISONS)
        rest = []
        for groups in _STAGES:
            left -= {name for exact, within in groups for name in (*exact, *within)}
            rest.append(_centi(model.prior)
                        + sum(max(0, *steps[name][1]) for name in left))
        out.append(_Regime(
            tuple(tuple(_sum(*(steps[name] for name in exact),
                             *(_up_to(steps[name]) for name in within))
                        for exact, within in groups) for groups in _STAGES),
            tuple(rest)))
    return tuple(out)


def cannot_match(a: Features, b: Features, config: EngineConfig, *,
                 pictures: bool = True) -> bool:
    """Is the pair's match weight under ``config.model`` below its cut for
    ``config.match_threshold`` whatever the costly comparisons give (so that
    ``verify_vector(a, b, config, model, pictures=pictures)`` is not ok)? False for a
    model that is not a vector model."""
    model = config.model
    if not isinstance(model, VectorModel):
        return False
    cut = model.cut(config.match_threshold)
    return _bound(a, b, model, pictures, cut) < cut


def upper_bound(a: Features, b: Features, model: VectorModel, *, pictures: bool = True
                ) -> int:
    """At least the pair's match weight in centibits (``model.centibits`` of
    ``compare_pair(a, b, pictures=pictures)``), every stage computed."""
    return _bound(a, b, model, pictures, None)


@lru_cache(maxsize=8)
def _packed(model: VectorModel) -> bytes:
    """:func:`_regimes` and what the bound reads of the model and of ``comparison`` as
    the kernel's ``weight_bound`` reads them: float64 values in ``_bound.h``'s layout
    (every value an integer or one of the model's cuts, so exact)."""
    values: list[float] = [
        LONG_SHINGLES, CHROME_SHINGLES, SHORT_SHINGLES, OFF_TITLE_SIMILARITY,
        float(model.script_regimes), len(model.regime_cuts), *model.regime_cuts,
        *(len(groups) for groups in _STAGES), model.regime_count]
    offsets = len(values)
    values.extend([0.0] * model.regime_count)
    for number, regime in enumerate(_regimes(model)):
        values[offsets + number] = len(values)
        values.extend(regime.rest)
        for stage in regime.stages:
            for cuts, sums in stage:
                values.extend((len(cuts), *cuts, *sums))
    return array("d", values).tobytes()


def _bound(a: Features, b: Features, model: VectorModel, pictures: bool,
           cut: int | None) -> int:
    """An upper bound of the pair's match weight: the last stage's, or the first one's
    below ``cut`` (the kernel's when it is built and can read the pair, else
    :func:`_bound_py`'s: the same integer)."""
    if kernel is not None:
        found: int | None = kernel.weight_bound(a, b, _packed(model), pictures, cut)
        if found is not None:
            return found
    return _bound_py(a, b, model, pictures, cut)


def _bound_py(a: Features, b: Features, model: VectorModel, pictures: bool,
              cut: int | None) -> int:
    """:func:`_bound` in Python (the reference)."""
    small, large = sorted((a.sketch.shingles, b.sketch.shingles))
    char_bodies = a.char_shingles + b.char_shingles
    title = _similarity(a.title_key, b.title_key)
    size = 0 if mute_body(a, b, small, title) else small
    table = _regimes(model)[model.regime_for(size, char_bodies)]
    shared, na, nb = overlap_counts(a.sketch, b.sketch)
    bodies = na > 0 and nb > 0
    containment = shared / min(na, nb) if bodies else None
    weight = table.stage(0, (
        float(size), shared / (na + nb - shared) if bodies else None, containment, title,
        1.0 if a.keys and b.keys else None,
        1.0 if pictures and a.pictures and b.pictures else None))
    if cut is not None and table.rest[0] + weight < cut:
        return table.rest[0] + weight
    numbers, names = _context_counts(a, b)
    weight += table.stage(1, (
        shared / max(na, nb) if bodies else None,
        small / large if small else None,
        containment if bodies and small >= LONG_SHINGLES else None,
        float(a.off_title + b.off_title),
        float(char_bodies),
        *_in_context(numbers), *_in_context(names)))
    if cut is not None and table.rest[1] + weight < cut:
        return table.rest[1] + weight
    short = _similarity(a.short_text, b.short_text)
    return table.rest[2] + weight + table.stage(2, (short,))


def _in_context(counts: Counts) -> tuple[float | None, float | None, float | None]:
    """The agree, conflict and conflicts measures of numbers (or names) in context."""
    if not counts[0] or not counts[1]:
        return None, None, None
    return _agree(counts), _conflict(counts), float(counts[3])


def _similarity(a: str, b: str) -> float | None:
    """The edit similarity of two keys as the vector measures it (difflib's ratio, the
    smaller string first), without the search for numbers and names in what was
    replaced; missing when either is empty."""
    if not a or not b:
        return None
    if a == b:
        return 1.0
    first, second = min(a, b), max(a, b)
    return ratio(first, second, matching_blocks(first, second))
