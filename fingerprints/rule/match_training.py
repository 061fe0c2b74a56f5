"""Fitting a match model's weights to labelled pairs, and scoring a model on them.

A labelled pair is the levels its verification reached (``Verification.score``) and
whether it is one story (an editor confirmed, merged or moved it: yes; split it: no).
:func:`fit` estimates the weights by logistic regression on the level indicators —
the match weight is the log-odds in bits, so this is the maximum-likelihood model of
the same additive form — with a Gaussian prior centred on the current model's weights
(``strength`` per bit squared): a level the labels say little about keeps its weight,
one they say much about moves to what they show. Newton's method, a few dozen
iterations of a matrix the size of the levels (about 30).

The levels a pair reaches depend on the level boundaries (``EngineConfig``), not on
the weights, so a pair's levels are computed once and any model can score them.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import mmh3
import numpy as np

from fingerprints.rule.bounds import Bounds, least_count, share
from fingerprints.rule.fellegi_sunter import expectation_maximisation, level_shares
from fingerprints.rule.match_model import LEVELS, MatchModel, probability

# the prior's strength: a weight moves by one bit when that buys the labels about this
# much log-likelihood per bit of move (docs/results/log.md, "The match model's fit")
STRENGTH = 0.2
MAX_ITERATIONS = 100
# What the shipped starting model keeps of rule-1 when it is fitted to the labelled
# pairs (scripts/ship_match_model.py): the prior and the guards' neutral levels, so that
# every weight reads as evidence (a comparison that found nothing to compare weighs
# nothing, agreeing weighs a little for), and the pictures, which no labelled pair has
STARTING_FIXED = ("prior", "pictures", "numbers: agree", "numbers: none-shared",
                  "names: agree", "names: none-shared")
LN2 = math.log(2.0)
SMOOTHING = 0.5  # EM's pseudo-count per level (the candidate pairs number thousands)

Levels = Sequence[tuple[str, str]]


@dataclass(frozen=True)
class Example:
    levels: tuple[tuple[str, str], ...]
    match: bool


def _columns() -> list[tuple[str, str]]:
    return [(c, lvl) for c, levels in LEVELS.items() for lvl in levels]


def _design(examples: Sequence[Example]) -> tuple[np.ndarray, np.ndarray]:
    index = {key: i + 1 for i, key in enumerate(_columns())}  # column 0: the prior
    x = np.zeros((len(examples), len(index) + 1))
    x[:, 0] = 1.0
    for row, example in enumerate(examples):
        for key in example.levels:
            x[row, index[key]] += 1.0
    y = np.array([1.0 if e.match else 0.0 for e in examples])
    return x, y


def fit(examples: Sequence[Example], start: MatchModel, version: str, *,
        strength: float = STRENGTH, description: str = "",
        fixed: Collection[str] = ()) -> MatchModel:
    """The weights that best explain ``examples`` (maximum a posteriori, the prior
    centred on ``start``), as a new model ``version``. The weights of the ``fixed``
    comparisons (``"numbers"``), levels (``"numbers: agree"``) and ``"prior"`` stay
    ``start``'s (evidence the examples cannot speak for, or a scale to keep)."""
    if strength <= 0:
        raise ValueError("strength must be positive")
    columns = _columns()
    theta0 = np.array([start.prior] + [start.weight(c, lvl) for c, lvl in columns])
    x_all, y = _design(examples)
    free = np.array(["prior" not in fixed] + [c not in fixed and f"{c}: {lvl}" not in fixed
                                              for c, lvl in columns])
    offset = x_all[:, ~free] @ theta0[~free]
    x, theta0_all, theta0 = x_all[:, free], theta0, theta0[free]
    theta = theta0.copy()

    def objective(t: np.ndarray) -> float:
        z = LN2 * (x @ t + offset)
        return float(np.sum(np.logaddexp(0.0, z) - y * z)
                     + strength / 2 * np.sum((t - theta0) ** 2))

    current = objective(theta)
    for _ in range(MAX_ITERATIONS):
        p = 1.0 / (1.0 + np.exp(-np.clip(LN2 * (x @ theta + offset), -700, 700)))
        gradient = LN2 * (x.T @ (p - y)) + strength * (theta - theta0)
        hessian = (LN2 ** 2) * (x.T * (p * (1.0 - p))) @ x + strength * np.eye(len(theta))
        step = np.linalg.solve(hessian, gradient)
        scale = 1.0
        while scale > 1e-4:  # backtracking: Newton's full step may overshoot
            candidate = theta - scale * step
            value = objective(candidate)
            if value <= current:
                break
            scale /= 2
        else:
            break
        theta, current = candidate, value
        if float(np.max(np.abs(scale * step))) < 1e-6:
            break
    fitted = theta0_all.copy()
    fitted[free] = theta
    weights = tuple((c, lvl, round(float(w), 2))
                    for (c, lvl), w in zip(columns, fitted[1:], strict=True))
    return MatchModel(version, round(float(fitted[0]), 2), weights, description, start.bounds)


def scores(model: MatchModel, examples: Iterable[Example]) -> list[tuple[float, bool]]:
    """(match probability under ``model``, label) per example."""
    return [(probability(model.score(e.levels).match_weight), e.match) for e in examples]


def precision_recall(scored: Sequence[tuple[float, bool]], threshold: float
                     ) -> dict[str, float | int | None]:
    """Precision, recall and F1 of "probability >= threshold" on labelled scores."""
    tp = sum(1 for p, m in scored if m and p >= threshold)
    fp = sum(1 for p, m in scored if not m and p >= threshold)
    fn = sum(1 for p, m in scored if m and p < threshold)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = (2 * tp / (2 * tp + fp + fn)) if tp else 0.0
    return {"threshold": threshold, "tp": tp, "fp": fp, "fn": fn,
            "precision": precision, "recall": recall, "f1": f1}


def folds(examples: Sequence[Example], n: int, key: Sequence[int]) -> list[list[int]]:
    """``n`` folds of example indices, by ``key`` (a stable hash per example) mod n."""
    out: list[list[int]] = [[] for _ in range(n)]
    for i, k in enumerate(key):
        out[k % n].append(i)
    return out


def estimate(pairs: Sequence[Levels], start: MatchModel, version: str, *,
             max_iterations: int = MAX_ITERATIONS, tolerance: float = 1e-6,
             description: str = "") -> MatchModel:
    """Weights from unlabelled candidate pairs by expectation maximisation (the
    Fellegi-Sunter model, comparisons independent given match or not:
    :mod:`fingerprints.rule.fellegi_sunter`, the core the table matcher uses too). Each
    comparison's categories are its levels and *not compared*; the first M-step takes
    ``start``'s probabilities as the posteriors. The m/u shares become the model's form:
    a level's weight is ``log2(m/u)`` less that of *not compared* (which the model
    scores 0), and the prior carries the rest."""
    comparisons = list(LEVELS)
    sizes = [len(LEVELS[c]) + 1 for c in comparisons]  # the last: not compared
    if not pairs:
        raise ValueError("no candidate pairs to estimate from")
    codes = np.array([[len(LEVELS[c]) for c in comparisons] for _ in pairs], dtype=np.int64)
    for row, levels in enumerate(pairs):
        for c, level in levels:
            codes[row, comparisons.index(c)] = LEVELS[c].index(level)
    patterns, counts = np.unique(codes, axis=0, return_counts=True)
    counts = counts.astype(np.float64)
    posterior = np.array([probability(start.score(
        [(c, LEVELS[c][k]) for c, k in zip(comparisons, row, strict=True)
         if k < len(LEVELS[c])]).match_weight) for row in patterns])
    m = level_shares(patterns, counts * posterior, sizes, SMOOTHING)
    u = level_shares(patterns, counts * (1 - posterior), sizes, SMOOTHING)
    prior = float(np.clip((counts * posterior).sum() / counts.sum(), 1e-6, 1 - 1e-6))
    em = expectation_maximisation(patterns, counts, sizes, m, u, prior, smoothing=SMOOTHING,
                                  max_iterations=max_iterations, tolerance=tolerance)
    ratio = [np.log2(em.m[j] / em.u[j]) for j in range(len(sizes))]
    weights = tuple((c, level, round(float(ratio[j][k] - ratio[j][-1]), 2))
                    for j, c in enumerate(comparisons) for k, level in enumerate(LEVELS[c]))
    bias = math.log2(em.prior / (1 - em.prior)) + sum(float(r[-1]) for r in ratio)
    return MatchModel(version, round(bias, 2), weights, description, start.bounds)


# --- the engine-v2 rule as examples ----------------------------------------------------

_GUARDED = ("copy", "word-copy", "contained", "cjk-contained", "word-contained",
            "short-copy", "short-edit")
_TOLERATED = ("agree", "none-shared", "some-differ")  # what the guard lets through
_PICTURES = (None, "shared", "shared-other-title", "none-shared", "none-shared-short")


def _text_exits() -> list[tuple[list[tuple[str, str]], bool, bool]]:
    """(levels, the rule's verdict, both bodies may be short) for every exit of the walk
    over the texts (verification._walk)."""
    out: list[tuple[list[tuple[str, str]], bool, bool]] = []
    for title in ("same", "different", "conflict"):
        out.append(([("body", "no-body"), ("title", title)], title == "same", True))

    def guarded(head: list[tuple[str, str]], short: bool) -> None:
        out.append(([head[0], ("title", "other-number")], False, short))
        for numbers in _TOLERATED:
            out.append(([*head, ("numbers", numbers), ("names", "differ")], False, short))
            for names in _TOLERATED:
                out.append(([*head, ("numbers", numbers), ("names", names)], True, short))
        out.append(([*head, ("numbers", "differ")], False, short))

    for body in _GUARDED:
        guarded([("body", body)], body.startswith("short"))
    guarded([("body", "headline-overlap"), ("title", "same")], False)
    for title in ("different", "conflict"):
        out.append(([("body", "headline-overlap"), ("title", title)], False, False))
    out.append(([("body", "cjk-partial"), ("title", "other-number")], False, False))
    out.append(([("body", "cjk-partial"), ("numbers", "differ")], False, False))
    for numbers in ("agree", "none-shared"):
        out.append(([("body", "cjk-partial"), ("numbers", numbers), ("names", "differ")],
                    False, False))
        for names in ("agree", "none-shared"):
            out.append(([("body", "cjk-partial"), ("numbers", numbers), ("names", names)],
                        True, False))
    for body in ("different", "short-different"):
        out.append(([("body", body)], False, body.startswith("short")))
    out.append(([("body", "short-template")], False, True))
    return out


def rule_exits() -> list[Example]:
    """Every level combination verification can reach, with the engine-v2 rule's verdict
    (verification.verify: the text rules, then the same-picture and other-picture rules).
    A model that decides each of these as the rule did decides every pair as it did."""
    out = []
    for levels, text_ok, short in _text_exits():
        template = any(level in ("differ", "conflict", "other-number", "short-template")
                       for _c, level in levels)
        for pictures in _PICTURES:
            if pictures == "none-shared-short" and not short:
                continue  # the level needs two short bodies
            if pictures is None:
                verdict = text_ok
            elif text_ok:
                verdict = pictures != "none-shared-short"
            else:
                verdict = pictures == "shared" and not template
            out.append(Example(tuple(levels) + ((("pictures", pictures),) if pictures else ()),
                               verdict))
    return out


# --- the level bounds -------------------------------------------------------------------

# The moves a search tries from a bound's current value: a share by these steps (kept
# within 0-1), a count by these factors (kept at 1 or more where 0 means "off").
SHARE_MOVES = (-0.2, -0.1, -0.05, 0.05, 0.1, 0.2)
COUNT_MOVES = (0.5, 0.75, 1.25, 1.5, 2.0)
FOLDS = 5
# a move must decide more held-out pairs right than it breaks (at the match threshold,
# cross-validated) by Z standard deviations of that difference under chance (a sign
# test over the pairs the move changes: sqrt(fixed + broken); so by four pairs at
# least); where the labels are indifferent, or a few pairs would flip, the bound stays
Z = 2.0
FOLD_SEED = 0xF01D  # the search's folds: a hash of the caller's key, apart from its uses
MAX_SWEEPS = 3


@dataclass(frozen=True)
class PairOfFeatures:
    """A labelled pair with what verification compares: the two articles' features."""

    a: Any  # fingerprints.rule.features.Features
    b: Any
    match: bool


@dataclass(frozen=True)
class BoundMove:
    """What the bound search did to one bound: its value before and after, and the
    cross-validated wrong decisions (all labelled pairs) at each."""

    name: str
    before: float
    after: float
    errors_before: int
    errors_after: int


def _significant(before: Sequence[bool], after: Sequence[bool]) -> bool:
    """Does ``after`` decide enough more pairs right than ``before`` (wrong flags)?"""
    fixed = sum(1 for b, a in zip(before, after, strict=True) if b and not a)
    broken = sum(1 for b, a in zip(before, after, strict=True) if a and not b)
    gain = fixed - broken
    return gain > 0 and gain >= Z * math.sqrt(fixed + broken)


def search_folds(keys: Sequence[int]) -> list[int]:
    """The fold key of each pair in the bound search: the caller's key hashed again
    (``FOLD_SEED``), so that pairs the caller chose by the same key (one held out in
    five by ``key % 5``, an outer fold of a nested cross-validation) still spread over
    every fold."""
    return [mmh3.hash(int(k).to_bytes(8, "little", signed=False), FOLD_SEED, signed=False)
            for k in keys]


def levels_of(a: Any, b: Any, config: Any) -> tuple[tuple[str, str], ...]:
    """The levels verification puts a pair of features at under ``config`` (its model's
    bounds)."""
    from fingerprints.rule.verification import verify

    score = verify(a, b, config).score
    assert score is not None  # verify always scores
    return tuple((w.comparison, w.level) for w in score.weights)


def candidate_values(name: str, value: float) -> list[float]:
    """The values the search tries for bound ``name`` besides ``value``."""
    if share(name):
        moved = {round(min(1.0, max(0.0, value + step)), 3) for step in SHARE_MOVES}
    else:
        moved = {max(least_count(name), round(value * factor)) for factor in COUNT_MOVES}
    return sorted(v for v in moved if v != value)


def cross_validated_errors(pairs: Sequence[PairOfFeatures], start: MatchModel, config: Any,
                           bounds: Bounds, keys: Sequence[int], *, strength: float = STRENGTH,
                           n_folds: int = FOLDS) -> list[bool]:
    """Which pairs are decided wrong (probability against ``config.match_threshold``) by
    weights fitted, from ``start`` with ``bounds``, to the folds they are not in
    (``keys`` place each pair in a fold)."""
    model = replace(start, bounds=bounds)
    cfg = replace(config, model=model)
    examples = [Example(levels_of(p.a, p.b, cfg), p.match) for p in pairs]
    wrong = [False] * len(examples)
    for held in folds(examples, n_folds, keys):
        held_set = set(held)
        fitted = fit([e for i, e in enumerate(examples) if i not in held_set], model, "fold",
                     strength=strength)
        for i in held:
            p = probability(fitted.score(examples[i].levels).match_weight)
            wrong[i] = (p >= config.match_threshold) != examples[i].match
    return wrong


def fit_bounds(pairs: Sequence[PairOfFeatures], start: MatchModel, config: Any, version: str,
               *, keys: Sequence[int], strength: float = STRENGTH, n_folds: int = FOLDS,
               names: Collection[str] | None = None, description: str = "",
               ) -> tuple[MatchModel, list[BoundMove]]:
    """The level bounds and weights that best explain labelled ``pairs``.

    A coordinate search: bound by bound (``names``, default all), each value of
    :func:`candidate_values` is scored by :func:`cross_validated_errors` (weights
    refitted on the other folds at that bound), and the bound moves to the value with
    the fewest wrong decisions when it decides significantly more pairs right than the
    current one (:data:`Z`); sweeps repeat until none moves (at most
    :data:`MAX_SWEEPS`). The wrong decisions, not the likelihood, are
    scored: a looser bound that pools duplicates and templates in one level lowers the
    log-loss by hedging their probabilities towards one half while deciding them no
    better (on the project's labels it lowered F1 on folds it did not see). Then the
    weights are fitted to every pair at the chosen bounds (:func:`fit`, from ``start``).
    Returns the model and one :class:`BoundMove` per bound that moved (its wrong
    decisions before its first move and after its last). ``keys``: a stable number per
    pair; the folds are :func:`search_folds` of them."""
    bounds = start.bounds
    names = [f.name for f in fields(Bounds) if names is None or f.name in names]
    keys = search_folds(keys)
    current = cross_validated_errors(pairs, start, config, bounds, keys, strength=strength,
                                     n_folds=n_folds)
    first: dict[str, tuple[float, int]] = {}
    last: dict[str, int] = {}
    for _sweep in range(MAX_SWEEPS):
        moved = False
        for name in names:
            value = getattr(bounds, name)
            best, best_wrong = value, current
            for candidate in candidate_values(name, value):
                change: dict[str, Any] = {name: candidate}
                wrong = cross_validated_errors(pairs, start, config, replace(bounds, **change),
                                               keys, strength=strength, n_folds=n_folds)
                if sum(wrong) < sum(best_wrong) and _significant(current, wrong):
                    best, best_wrong = candidate, wrong
            if best != value:
                first.setdefault(name, (value, sum(current)))
                last[name] = sum(best_wrong)
                change = {name: best}
                bounds, current, moved = replace(bounds, **change), best_wrong, True
        if not moved:
            break
    model = replace(start, bounds=bounds)
    cfg = replace(config, model=model)
    examples = [Example(levels_of(p.a, p.b, cfg), p.match) for p in pairs]
    fitted = fit(examples, model, version, strength=strength, description=description)
    moves = [BoundMove(name, before, getattr(bounds, name), errors_before, last[name])
             for name, (before, errors_before) in first.items()
             if getattr(bounds, name) != before]
    return fitted, moves
