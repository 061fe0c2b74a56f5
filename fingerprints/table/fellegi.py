"""Unsupervised Fellegi-Sunter matching of table rows: m/u probabilities by EM, no labels.

The blocking of :mod:`fingerprints.table.match` proposes candidate pairs; every pair gets,
per field, a *comparison level*:

* ``exact`` — the normalized values are equal;
* ``very close`` / ``close`` / ``similar`` — the field similarity of
  :func:`fingerprints.table.match.short_similarity` (long text: word Jaccard/containment) is
  at least 0.95 / 0.88 / 0.7;
* ``different`` — below that; when each value carries a number the other lacks
  (another house number, another phone, another id) the pair is at most ``similar``;
* missing on either side — no level, the field contributes nothing.

For each field and level, ``m`` is the probability of the level among true
duplicates and ``u`` among other candidate pairs; the match weight of a level is
``log2(m/u)``, and a pair's weight is the sum over its fields plus the prior
``log2(λ/(1-λ))``. ``m``, ``u`` and ``λ`` (the share of duplicates among the
candidates) are estimated by expectation maximisation over the candidate pairs
(conditional independence of the fields, the classic Fellegi-Sunter/Winkler model),
starting from ``u`` measured on random row pairs, which are almost all non-duplicates.

Term frequency: agreeing exactly on a common value ("new york", "italian", a hotel's
address shared by its five restaurants) says less than agreeing on a rare one. The
exact level's weight gets ``log2(Σp² / p_v)`` added, where ``p_v`` is the share of
rows with value ``v`` and ``Σp²`` the chance that two random rows agree on the field
at all: a value of average frequency keeps the EM weight, a common one loses weight.

The threshold on the posterior match probability is chosen from the data: pairs are
sorted by probability, and the cut maximises the *expected* F1 (expected true
duplicates = the sum of the accepted pairs' probabilities); the expected precision
and recall of that cut are reported with the weights.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fingerprints.rule.fellegi_sunter import MISSING, expectation_maximisation, level_shares

__all__ = [
    "LEVELS",
    "FSModel",
    "choose_threshold",
    "comparison_level",
    "estimate",
    "random_pairs",
]

LEVELS = ("different", "similar", "close", "very close", "exact")
_CUTS = (0.7, 0.88, 0.95)  # similarity at which "similar", "close", "very close" start


def comparison_level(similarity: float, equal: bool, numbers_differ: bool) -> int:
    if equal:
        return 4
    level = sum(similarity >= cut for cut in _CUTS)
    return min(level, 1) if numbers_differ else level


def random_pairs(n: int, count: int, seed: int = 20150) -> list[tuple[int, int]]:
    """``count`` distinct random row pairs (i < j), deterministic for a given ``n``."""
    total = n * (n - 1) // 2
    if total <= count:
        return [(i, j) for i in range(n) for j in range(i + 1, n)]
    rng = random.Random(seed)
    chosen: set[tuple[int, int]] = set()
    while len(chosen) < count:
        i, j = rng.randrange(n), rng.randrange(n)
        if i != j:
            chosen.add((i, j) if i < j else (j, i))
    return sorted(chosen)


@dataclass
class FSModel:
    """Learned m/u probabilities per field and level, the prior and the TF tables."""

    names: list[str]
    m: np.ndarray  # (fields, levels)
    u: np.ndarray
    prior: float  # λ: share of duplicates among the candidate pairs
    frequencies: list[dict[str, float]]  # per field: value -> share of rows
    agreement: list[float]  # per field: Σp², chance two random rows agree
    iterations: int = 0

    def level_weights(self) -> np.ndarray:
        return np.log2(self.m / self.u)

    def tf_adjustment(self, field: int, value: str) -> float:
        share = self.frequencies[field].get(value)
        if not share or not self.agreement[field]:
            return 0.0
        return math.log2(self.agreement[field] / share)

    def contributions(self, levels: np.ndarray, values: Sequence[str] | None = None
                      ) -> list[float | None]:
        """Each field's weight for one pair (``levels`` of the pair; ``values`` the
        first row's normalized values, for the TF adjustment of exact agreement)."""
        table = self.level_weights()
        out: list[float | None] = []
        for f, level in enumerate(levels.tolist()):
            if level == MISSING:
                out.append(None)
                continue
            weight = float(table[f, level])
            if level == 4 and values is not None:
                weight += self.tf_adjustment(f, values[f])
            out.append(weight)
        return out

    def prior_weight(self) -> float:
        return math.log2(self.prior / (1.0 - self.prior))

    def as_dict(self) -> dict[str, Any]:
        table = self.level_weights()
        return {
            "model": "fellegi-sunter",
            "prior": round(self.prior, 6),
            "priorWeight": round(self.prior_weight(), 3),
            "emIterations": self.iterations,
            "fields": {
                name: {
                    level: {"m": round(float(self.m[f, x]), 6),
                            "u": round(float(self.u[f, x]), 6),
                            "weight": round(float(table[f, x]), 3)}
                    for x, level in enumerate(LEVELS)
                } | {"tfValues": len(self.frequencies[f]),
                     "agreementChance": round(self.agreement[f], 6)}
                for f, name in enumerate(self.names)
            },
        }


def _frequencies(values: Sequence[str]) -> tuple[dict[str, float], float]:
    counts = Counter(v for v in values if v)
    present = sum(counts.values())
    if not present:
        return {}, 0.0
    shares = {v: c / present for v, c in counts.items()}
    return shares, sum(s * s for s in shares.values())


def estimate(levels: np.ndarray, random_levels: np.ndarray, names: Sequence[str],
             columns: Sequence[Sequence[str]], *, veto_fields: Sequence[int] = (),
             max_iterations: int = 100, tolerance: float = 1e-6) -> FSModel:
    """EM over the candidate pairs' ``levels``; ``random_levels`` (random row pairs)
    give the starting ``u``; ``columns`` are the normalized values of every row per
    field (term frequencies). Pairs whose ``veto_fields`` are at level ``different``
    are known non-duplicates: their posterior is held at 0."""
    fields = levels.shape[1]
    sizes = [len(LEVELS)] * fields
    u = np.array(level_shares(random_levels, np.ones(len(random_levels)), sizes, 1.0))
    start = np.array([0.05, 0.05, 0.1, 0.2, 0.6])
    patterns, counts = (np.unique(levels, axis=0, return_counts=True) if len(levels)
                        else (np.zeros((0, fields), dtype=np.int8), np.zeros(0)))
    vetoed = (patterns[:, list(veto_fields)] == 0).any(axis=1) if len(veto_fields) else None
    fit = expectation_maximisation(
        patterns, counts, sizes, [start.copy() for _ in range(fields)], list(u), 0.1,
        smoothing=0.01, vetoed=vetoed, max_iterations=max_iterations, tolerance=tolerance)
    m, u, prior, iterations = np.array(fit.m), np.array(fit.u), fit.prior, fit.iterations
    tables = [_frequencies(column) for column in columns]
    return FSModel(list(names), m, u, prior, [t[0] for t in tables], [t[1] for t in tables],
                   iterations)


def choose_threshold(probabilities: np.ndarray) -> tuple[float, float, float]:
    """(probability threshold, expected precision, expected recall) maximising the
    expected F1 over the candidate pairs."""
    if not len(probabilities):
        return 0.5, 1.0, 1.0
    ordered = np.sort(probabilities)[::-1]
    expected_true = np.cumsum(ordered)
    accepted = np.arange(1, len(ordered) + 1)
    total = expected_true[-1]
    if total <= 0:
        return 0.5, 1.0, 1.0
    precision = expected_true / accepted
    recall = expected_true / total
    f1 = 2 * precision * recall / np.maximum(precision + recall, 1e-12)
    best = int(np.argmax(f1))
    return float(ordered[best]), float(precision[best]), float(recall[best])


def match_probabilities(model: FSModel, levels: np.ndarray,
                        first_values: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """(match weight, probability) of each pair, TF adjustment included."""
    weights = np.zeros(len(levels))
    for p in range(len(levels)):
        contributions = model.contributions(levels[p], first_values[p])
        weights[p] = model.prior_weight() + sum(c for c in contributions if c is not None)
    probabilities = 1.0 / (1.0 + np.power(2.0, -np.clip(weights, -1000, 1000)))
    return weights, probabilities


# (row-position pairs) -> (levels, similarities), arrays of shape (pairs, fields)
Comparer = Callable[[Sequence[tuple[int, int]]], tuple[np.ndarray, np.ndarray]]
