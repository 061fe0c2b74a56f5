"""Fitting a :class:`~fingerprints.rule.vector_model.VectorModel` to labelled pairs.

:func:`fit`: logistic regression on the model's level indicators (the match weight is
the log-odds in bits), maximum a posteriori with a Gaussian prior centred on a previous
version (``strength`` per bit squared, as :mod:`fingerprints.rule.match_training`): a
level the labels say little about keeps its weight, so a few dozen labels refit a
model without unlearning it. Each step is held to its comparison's declared direction
(projected gradient with Barzilai-Borwein steps over the sign constraints; the problem
is convex). :func:`train` adds the calibration: Platt's scale and offset fitted on the
match weights of pairs scored by weights fitted without them, in folds that keep each
group (a connected component of the label graph: :func:`grouped_folds`) whole.

Plain NumPy. The fitted weights are rounded to centibits: the model is data, scoring is
exact (:mod:`fingerprints.rule.vector_model`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from fingerprints.rule.comparison import ComparisonVector
from fingerprints.rule.vector_model import Spec, VectorModel

# the prior's strength of a refit (per bit squared): the one train() chose among
# STRENGTHS, by grouped out-of-fold log-loss, when it fitted the shipped model
STRENGTH = 1.0
# the strengths train() chooses among (by grouped out-of-fold log-loss) when it fits a
# model from labels alone, not a refit with a given strength
STRENGTHS = (0.2, 1.0, 5.0, 20.0)
CALIBRATION_STRENGTH = 0.05  # Platt's (scale, offset) pulled towards the previous ones
LN2 = math.log(2.0)
FOLDS = 5
MAX_ITERATIONS = 5000


@dataclass(frozen=True)
class VectorExample:
    vector: ComparisonVector
    match: bool


def design(model: VectorModel, vectors: Sequence[ComparisonVector]) -> np.ndarray:
    """The indicator matrix: column 0 the prior; per spec, ``present`` then one column
    per cut reached (cumulative coding). A ``fixed`` spec's columns stay 0, as for a
    missing measure: the definition's weight is not the labels' to explain, so a
    labelled pair it overrides does not bend the fitted weights towards it."""
    width = 1 + sum(1 + len(s.cuts) for s in model.specs)
    x = np.zeros((len(vectors), width))
    x[:, 0] = 1.0
    for row, vector in enumerate(vectors):
        col = 1
        for spec, level in zip(model.specs, model.levels(vector), strict=True):
            if level is not None and not spec.fixed:
                x[row, col] = 1.0
                x[row, col + 1 : col + 1 + level] = 1.0
            col += 1 + len(spec.cuts)
    return x


def _parameters(model: VectorModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(weights, lower bounds, upper bounds) in the design's column order."""
    theta, lower, upper = [model.prior], [-np.inf], [np.inf]
    for s in model.specs:
        theta += [s.present, *s.steps]
        if s.fixed:  # the definition's weight: held where it is
            lower += [s.present, *s.steps]
            upper += [s.present, *s.steps]
            continue
        lower += [-np.inf] + [0.0 if s.direction > 0 else -np.inf] * len(s.cuts)
        upper += [np.inf] + [0.0 if s.direction < 0 else np.inf] * len(s.cuts)
    return np.array(theta), np.array(lower), np.array(upper)


def _with_parameters(model: VectorModel, theta: np.ndarray, version: str,
                     description: str) -> VectorModel:
    values = [round(float(v), 2) + 0.0 for v in theta]  # + 0.0: no -0.0 in the JSON
    specs, at = [], 1
    for s in model.specs:
        n = len(s.cuts)
        specs.append(Spec(s.name, s.direction, s.cuts, values[at],
                          tuple(values[at + 1 : at + 1 + n]), s.regime, s.fixed))
        at += 1 + n
    return replace(model, version=version, prior=values[0], specs=tuple(specs),
                   description=description)


def minimise_logistic(x: np.ndarray, y: np.ndarray, theta0: np.ndarray, lower: np.ndarray,
                      upper: np.ndarray, strength: float) -> np.ndarray:
    """argmin over ``lower <= theta <= upper`` of the logistic loss of ``x @ theta``
    (bits) plus ``strength / 2 * |theta - theta0|^2``: projected gradient descent with
    Barzilai-Borwein steps and a backtracking line search."""

    def objective(t: np.ndarray) -> tuple[float, np.ndarray]:
        z = LN2 * (x @ t)
        p = 0.5 * (1.0 + np.tanh(0.5 * z))
        value = float(np.sum(np.logaddexp(0.0, z) - y * z)
                      + strength / 2 * np.sum((t - theta0) ** 2))
        return value, LN2 * (x.T @ (p - y)) + strength * (t - theta0)

    theta = np.clip(theta0, lower, upper)
    value, grad = objective(theta)
    step = 1.0 / (LN2 ** 2 * 0.25 * float(np.sum(x * x)) / max(1, x.shape[1]) + strength)
    for _ in range(MAX_ITERATIONS):
        while True:
            candidate = np.clip(theta - step * grad, lower, upper)
            new_value, new_grad = objective(candidate)
            moved = candidate - theta
            if new_value <= value + float(grad @ moved) + float(moved @ moved) / (2 * step) \
                    or step < 1e-12:
                break
            step /= 2
        if float(np.max(np.abs(moved), initial=0.0)) < 1e-7:
            theta = candidate
            break
        change = new_grad - grad
        curvature = float(moved @ change)
        step = float(moved @ moved) / curvature if curvature > 1e-12 else step * 2
        theta, value, grad = candidate, new_value, new_grad
    return theta


def fit(examples: Sequence[VectorExample], start: VectorModel, version: str, *,
        strength: float = STRENGTH, description: str = "") -> VectorModel:
    """The weights that best explain ``examples``, the prior centred on ``start``'s
    (its schema and calibration kept), each step within its declared direction."""
    if strength <= 0:
        raise ValueError("strength must be positive")
    theta0, lower, upper = _parameters(start)
    if not examples:
        return replace(start, version=version, description=description)
    x = design(start, [e.vector for e in examples])
    y = np.array([1.0 if e.match else 0.0 for e in examples])
    theta = minimise_logistic(x, y, theta0, lower, upper, strength)
    return _with_parameters(start, theta, version, description)


def grouped_folds(groups: Sequence[Hashable], n: int = FOLDS) -> list[list[int]]:
    """``n`` folds of example indices, every group whole in one fold: groups by size,
    largest first (ties by their first example), each to the fold with fewest
    examples so far (ties to the lowest fold). Deterministic."""
    members: dict[Hashable, list[int]] = {}
    for i, group in enumerate(groups):
        members.setdefault(group, []).append(i)
    out: list[list[int]] = [[] for _ in range(n)]
    for indices in sorted(members.values(), key=lambda m: (-len(m), m[0])):
        fold = min(range(n), key=lambda f: (len(out[f]), f))
        out[fold].extend(indices)
    return [sorted(f) for f in out]


def out_of_fold(examples: Sequence[VectorExample], groups: Sequence[Hashable],
                start: VectorModel, *, strength: float = STRENGTH, n_folds: int = FOLDS
                ) -> list[int]:
    """Each example's match weight (centibits) under weights fitted, from ``start``, to
    the grouped folds it is not in, without the ``fixed`` specs' (the definition's
    weights are not the labels' to explain: :func:`design`; so neither the strength nor
    the calibration is chosen to fit a labelled pair they override)."""
    weights = [0] * len(examples)
    for held in grouped_folds(groups, n_folds):
        held_set = set(held)
        model = fit([e for i, e in enumerate(examples) if i not in held_set], start, "fold",
                    strength=strength)
        fitted = replace(model, specs=tuple(s for s in model.specs if not s.fixed))
        for i in held:
            weights[i] = fitted.centibits(examples[i].vector)
    return weights


def platt(weights: Sequence[int], labels: Sequence[bool], start: VectorModel, *,
          strength: float = CALIBRATION_STRENGTH) -> tuple[float, float]:
    """(scale, offset): the calibration of match weights (centibits) to the labels,
    pulled towards ``start``'s; the scale kept positive."""
    x = np.column_stack([np.asarray(weights, dtype=np.float64) / 100.0, np.ones(len(weights))])
    y = np.array([1.0 if m else 0.0 for m in labels])
    theta = minimise_logistic(x, y, np.array([start.scale, start.offset]),
                              np.array([0.01, -np.inf]), np.array([np.inf, np.inf]), strength)
    return round(float(theta[0]), 4), round(float(theta[1]), 4)


def log_loss(weights: Sequence[int], labels: Sequence[bool]) -> float:
    """The mean log-loss (nats) of match weights (centibits) as probabilities."""
    z = LN2 * np.asarray(weights, dtype=np.float64) / 100.0
    y = np.array([1.0 if m else 0.0 for m in labels])
    return float(np.mean(np.logaddexp(0.0, z) - y * z))


def train(examples: Sequence[VectorExample], groups: Sequence[Hashable], start: VectorModel,
          version: str, *, strength: float | Sequence[float] = STRENGTH, n_folds: int = FOLDS,
          description: str = "") -> VectorModel:
    """:func:`fit` on every example, calibrated by :func:`platt` on the out-of-fold
    match weights of :func:`out_of_fold` (grouped by ``groups``). Several
    ``strength`` values: the one whose out-of-fold weights have the smallest log-loss
    (ties to the first). With fewer than ``n_folds`` groups, or without both kinds of
    label, the first strength and ``start``'s calibration are kept."""
    strengths = [strength] if isinstance(strength, int | float) else list(strength)
    labels = [e.match for e in examples]
    if len(set(groups)) < n_folds or len(set(labels)) < 2:
        return fit(examples, start, version, strength=strengths[0], description=description)
    best: tuple[float, float, list[int]] | None = None
    for value in strengths:
        weights = out_of_fold(examples, groups, start, strength=value, n_folds=n_folds)
        loss = log_loss(weights, labels)
        if best is None or loss < best[0]:
            best = (loss, value, weights)
    assert best is not None
    _loss, chosen, weights = best
    model = fit(examples, start, version, strength=chosen,
                description=f"{description} (strength {chosen:g})".strip())
    scale, offset = platt(weights, labels, start)
    return replace(model, scale=scale, offset=offset)
