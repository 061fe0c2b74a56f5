"""The Fellegi-Sunter model's expectation maximisation, shared by the news engine's match
model (fingerprints/rule/match_training.estimate) and the table matcher
(fingerprints/table/fellegi.estimate).

A candidate pair is a row of *patterns*: per comparison, the index of the level it
reached (``MISSING`` when the comparison could not be made: it then says nothing). For
each comparison and level, ``m`` is the level's share among true duplicates and ``u``
among the other pairs; ``prior`` is the share of duplicates. Given them, a pair's
posterior is the logistic of ``log(prior / (1 - prior)) + Σ log(m / u)`` over the
levels it reached (the comparisons independent given match or not); given the
posteriors, ``m``, ``u`` and ``prior`` are the posterior-weighted shares. The two steps
alternate until nothing moves by more than ``tolerance``. Plain NumPy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MISSING = -1


@dataclass
class EM:
    m: list[np.ndarray]  # per comparison: the share of each level among duplicates
    u: list[np.ndarray]  # ... among the other pairs
    prior: float  # the share of duplicates among the pairs
    posterior: np.ndarray  # per pattern, at the last E-step
    iterations: int


def level_shares(patterns: np.ndarray, weights: np.ndarray, sizes: Sequence[int],
                 smoothing: float) -> list[np.ndarray]:
    """Per comparison: the ``weights``-weighted share of the patterns at each of its
    ``sizes[j]`` levels, among those where it was made (Laplace-smoothed: none is 0)."""
    out = []
    for j, size in enumerate(sizes):
        share = np.zeros(size)
        for level in range(size):
            share[level] = weights[patterns[:, j] == level].sum() + smoothing
        out.append(share / share.sum())
    return out


def log_odds(patterns: np.ndarray, m: Sequence[np.ndarray], u: Sequence[np.ndarray],
             prior: float) -> np.ndarray:
    """Each pattern's log odds (natural log) of being a duplicate."""
    present = patterns != MISSING
    index = np.where(present, patterns, 0)
    comparisons = range(patterns.shape[1])
    log_m = np.where(present, np.log(np.stack([m[j][index[:, j]] for j in comparisons],
                                              axis=1)), 0.0).sum(axis=1)
    log_u = np.where(present, np.log(np.stack([u[j][index[:, j]] for j in comparisons],
                                              axis=1)), 0.0).sum(axis=1)
    return math.log(prior / (1 - prior)) + log_m - log_u


def expectation_maximisation(
    patterns: np.ndarray, counts: np.ndarray, sizes: Sequence[int],
    m: list[np.ndarray], u: list[np.ndarray], prior: float, *, smoothing: float,
    vetoed: np.ndarray | None = None, max_iterations: int = 100, tolerance: float = 1e-6,
) -> EM:
    """EM from ``m``, ``u`` and ``prior`` over distinct ``patterns`` seen ``counts``
    times. ``vetoed`` patterns are known non-duplicates: their posterior is held at 0."""
    counts = counts.astype(np.float64)
    posterior = np.zeros(len(patterns))
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 (reported below)
        odds = log_odds(patterns, m, u, prior)
        posterior = 1.0 / (1.0 + np.exp(-np.clip(odds, -700, 700)))
        if vetoed is not None:
            posterior = np.where(vetoed, 0.0, posterior)
        new_m = level_shares(patterns, counts * posterior, sizes, smoothing)
        new_u = level_shares(patterns, counts * (1 - posterior), sizes, smoothing)
        new_prior = float(np.clip((counts * posterior).sum() / max(counts.sum(), 1.0),
                                  1e-6, 1 - 1e-6))
        change = max(max(float(np.abs(a - b).max()) for a, b in zip(new_m, m, strict=True)),
                     max(float(np.abs(a - b).max()) for a, b in zip(new_u, u, strict=True)),
                     abs(new_prior - prior))
        m, u, prior = new_m, new_u, new_prior
        if change < tolerance:
            break
    return EM(m, u, prior, posterior, iterations)
