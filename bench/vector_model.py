"""The learned model on the comparison vector against labelled pairs (engine v4).

    .venv/bin/python bench/vector_model.py [--folds 5] [--strength 0.2] [--write PATH]

Every human-labelled pair of the crawled corpus (``bench/labels/``, both samples: 766
pairs; features with the shipped boilerplate list) gets its comparison vector
(``fingerprints.rule.comparison``). Folds are *grouped*: the label graph's connected
components (articles joined by any labelled pair) are kept whole, so no article is on
both sides of a fold (``vector_training.grouped_folds``).

* ``vector`` grouped CV: for each fold, the whole procedure (``vector_training.train``
  from the blank model: weights, then Platt's calibration on inner grouped folds) is
  run on the other folds and scores the held-out one; every figure is of those scores.
* ``vector`` in-sample: the same procedure on all 766, scoring them (optimistic).
* ``labels-1`` (the shipped rule model) on the same pairs: in-sample for it (it was
  fitted on all 766 with one pseudo-pair per rule exit); and its procedure
  (bench/match_model.shipped_fit) on the same grouped folds.

Pair-level figures at threshold 0.5 (each labelled pair scored directly; no star rule,
no clustering): F1, P, R; the same with the pairs the candidate search would never
propose (``decision.proposes`` from the later article of the pair, in corpus order)
counted as not merged; Brier score; distinct operating points (threshold -> (P, R)
pairs) between the threshold where recall falls below 0.99 and the one where precision
reaches 0.99; a reliability table and the operating-point table of the grouped-CV
scores. ``--write PATH`` writes the in-sample model (the one to ship) as JSON.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import load_docs, table  # noqa: E402
from match_model import labelled_articles, shipped_fit  # noqa: E402

from fingerprints.batch.unionfind import UnionFind  # noqa: E402
from fingerprints.rule import EngineConfig  # noqa: E402
from fingerprints.rule.comparison import compare_pair  # noqa: E402
from fingerprints.rule.decision import proposes  # noqa: E402
from fingerprints.rule.match_model import starting_model  # noqa: E402
from fingerprints.rule.match_training import Example, levels_of, precision_recall  # noqa: E402
from fingerprints.rule.match_training import scores as rule_scores  # noqa: E402
from fingerprints.rule.vector_model import VectorModel, rule_vector_model  # noqa: E402
from fingerprints.rule.vector_training import (  # noqa: E402
    STRENGTHS,
    VectorExample,
    grouped_folds,
    train,
)

Scored = list[tuple[float, bool]]
THRESHOLDS = (0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999)


def components(pairs: Sequence[tuple[str, str]]) -> list[str]:
    """Each pair's connected component of the label graph (its smallest article id)."""
    sets: UnionFind[str] = UnionFind()
    for a, b in pairs:
        sets.union(a, b)
    return [sets.find(a) for a, _b in pairs]


def operating_points(scored: Scored, high: float = 0.99) -> int:
    """Distinct operating points ((true, false) merges: each distinct probability is a
    threshold) from the highest threshold that keeps recall >= ``high`` (the lowest
    threshold when none does) to the lowest that gives precision >= ``high`` (the
    highest when none does): how many steps the admin's threshold has there."""
    points = []
    for t in sorted({p for p, _m in scored}):
        pr = precision_recall(scored, t)
        points.append((pr["precision"] or 0.0, pr["recall"] or 0.0, pr["tp"], pr["fp"]))
    low_i = max((i for i, p in enumerate(points) if p[1] >= high), default=0)
    high_i = min((i for i, p in enumerate(points) if p[0] >= high), default=len(points) - 1)
    lo, hi = min(low_i, high_i), max(low_i, high_i)
    return len({(tp, fp) for _p, _r, tp, fp in points[lo : hi + 1]})


def bootstrap_difference(groups: Sequence[str], a: Scored, b: Scored, *, rounds: int = 2000,
                         seed: int = 46) -> tuple[float, float]:
    """The 95 % interval of F1(a) - F1(b) at 0.5 over resamples of whole components (a
    paired bootstrap: both scored on the same resampled pairs)."""
    members: dict[str, list[int]] = {}
    for i, group in enumerate(groups):
        members.setdefault(group, []).append(i)
    blocks = list(members.values())
    rng = random.Random(seed)
    differences = []
    for _ in range(rounds):
        chosen = [i for _ in blocks for i in rng.choice(blocks)]
        differences.append(precision_recall([a[i] for i in chosen], 0.5)["f1"]
                           - precision_recall([b[i] for i in chosen], 0.5)["f1"])
    differences.sort()
    return differences[int(0.025 * rounds)], differences[int(0.975 * rounds) - 1]


def brier(scored: Scored) -> float:
    return sum((p - m) ** 2 for p, m in scored) / len(scored)


def reliability(scored: Scored, bins: int = 10) -> list[list[object]]:
    out: list[list[object]] = []
    for k in range(bins):
        low, high = k / bins, (k + 1) / bins
        band = [(p, m) for p, m in scored if low <= p < high or (k == bins - 1 and p == 1.0)]
        if band:
            out.append([f"{low:.1f}-{high:.1f}", len(band),
                        f"{sum(p for p, _ in band) / len(band):.3f}",
                        f"{sum(m for _, m in band) / len(band):.3f}"])
    return out


def summary(name: str, scored: Scored, proposed: Sequence[bool]) -> list[object]:
    pr = precision_recall(scored, 0.5)
    reach = precision_recall([(p if ok else 0.0, m) for (p, m), ok in zip(scored, proposed,
                                                                          strict=True)], 0.5)
    return [name, f"{pr['f1']:.3f}", f"{pr['precision'] or 0:.3f}", f"{pr['recall'] or 0:.3f}",
            pr["fp"], pr["fn"], f"{reach['f1']:.3f}", f"{brier(scored):.4f}",
            operating_points(scored)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--strength", type=float, nargs="+", default=list(STRENGTHS),
                        help="the prior's strengths train() chooses among (inner folds)")
    parser.add_argument("--write", type=Path, help="write the in-sample model's JSON here")
    parser.add_argument("--version", default="vector-5", help="the in-sample model's version")
    parser.add_argument("--names", choices=["", "shared", "regimes"], default="",
                        help="weigh the version-7 comparisons (NAMES_SCHEMA) once for every "
                             "regime or in each (default: unweighed, as shipped)")
    args = parser.parse_args()
    first, validation, features = labelled_articles()
    labels = {**first, **validation}
    pairs = sorted(labels)
    order = {d.id: i for i, d in enumerate(load_docs("bdci"))}
    config = EngineConfig(model=starting_model())  # the rule's levels, not the default
    examples = [VectorExample(compare_pair(features[a], features[b]), labels[(a, b)][0] == 1)
                for a, b in pairs]
    rule_examples = [Example(levels_of(features[a], features[b], config), labels[(a, b)][0] == 1)
                     for a, b in pairs]
    proposed = [proposes(features[b], features[a], config) if order[a] < order[b]
                else proposes(features[a], features[b], config) for a, b in pairs]
    groups = components(pairs)
    folds = grouped_folds(groups, args.folds)
    start = rule_vector_model(names=args.names)

    def fitted(train_idx: Sequence[int], version: str, description: str = "") -> VectorModel:
        return train([examples[i] for i in train_idx], [groups[i] for i in train_idx], start,
                     version, strength=args.strength, n_folds=args.folds,
                     description=description)

    cv: Scored = [(0.0, False)] * len(examples)
    cv_rule: Scored = [(0.0, False)] * len(examples)
    for k, held in enumerate(folds):
        held_set = set(held)
        rest = [i for i in range(len(examples)) if i not in held_set]
        model = fitted(rest, f"fold-{k}")
        rule = shipped_fit([rule_examples[i] for i in rest], f"fold-{k}", 0.2)
        for i in held:
            cv[i] = (model.score(examples[i].vector).probability, examples[i].match)
            cv_rule[i] = rule_scores(rule, [rule_examples[i]])[0]
    whole = fitted(range(len(examples)), args.version,
                   f"bench/vector_model.py: from {start.version} to the {len(examples)} labelled "
                   "crawled pairs, the prior's strength chosen by grouped out-of-fold log-loss")
    insample: Scored = [(whole.score(e.vector).probability, e.match) for e in examples]
    shipped = rule_scores(starting_model(), rule_examples)
    sizes = sorted((len(f) for f in folds), reverse=True)
    unproposed = sum(1 for ok, e in zip(proposed, examples, strict=True) if e.match and not ok)
    print(f"{len(pairs)} labelled pairs, {len(set(groups))} connected components, "
          f"{args.folds} grouped folds of {sizes} pairs; {sum(proposed)} pairs the candidate "
          f"search proposes, {unproposed} "
          f"duplicates it never proposes; strengths {args.strength}\n")
    print(table(["model", "F1", "P", "R", "false merges", "missed",
                 "F1, unproposed as misses", "Brier", "operating points R>=0.99..P>=0.99"],
                [summary("vector, grouped CV (held-out folds)", cv, proposed),
                 summary("vector, in-sample (fitted on all 766)", insample, proposed),
                 summary(f"{start.version} (the hand prior, not fitted)",
                         [(start.score(e.vector).probability, e.match) for e in examples],
                         proposed),
                 summary(f"{starting_model().version} (shipped), in-sample", shipped, proposed),
                 summary(f"{starting_model().version}'s procedure, same grouped folds", cv_rule,
                         proposed)]))
    low, high = bootstrap_difference(groups, cv, cv_rule)
    print(f"\nGrouped-CV F1 of vector less labels-1's procedure on the same folds: "
          f"95 % interval {low:+.3f} to {high:+.3f} (paired bootstrap over components)")
    print("\nReliability of the grouped-CV probabilities:")
    print(table(["probability", "pairs", "predicted", "observed"], reliability(cv)))
    print("\nOperating points, grouped CV (threshold -> precision, recall):")
    print(table(["threshold", "P", "R", "false merges", "missed"], [
        [str(t), "—" if pr["precision"] is None else f"{pr['precision']:.3f}",
         f"{pr['recall']:.3f}", pr["fp"], pr["fn"]]
        for t in THRESHOLDS for pr in [precision_recall(cv, t)]]))
    print(f"\nThe in-sample model ({whole.version}: {whole.description}): prior "
          f"{whole.prior:+.2f} bits, calibration {whole.scale:g} x w {whole.offset:+g}")
    print(table(["comparison", "direction", "present", "steps (bits)"],
                [[s.key, f"{s.direction:+d}", f"{s.present:+.2f}",
                  " ".join(f"{w:+.1f}" for w in s.steps)] for s in whole.specs]))
    if args.write:
        args.write.write_text(whole.to_json(), encoding="utf-8")
        print(f"\nwrote {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
