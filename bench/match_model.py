"""The match model against labelled pairs: rule-1, the shipped model, folds, EM.

    .venv/bin/python bench/match_model.py [--folds 5] [--strength 0.2]

Every human-labelled pair of the crawled corpus (``bench/labels/``: the first sample and
the held-out validation sample) is verified as a pair (features with the shipped
boilerplate list, the default level boundaries), which gives the levels it reaches.
Then, at the default threshold 0.5:

* ``rule-1`` (the engine-v2 rule as hand-set weights) on each sample, and the shipped
  model (fitted on both samples: in-sample);
* the shipped model's procedure (scripts/ship_match_model.py: from rule-1, the labelled
  pairs plus one pseudo-pair per exit of the rule, ``STARTING_FIXED`` kept) on the first sample
  only, scored on the validation sample it never saw;
* ``--folds`` cross-validation over both samples together: each fold scored by the
  procedure run on the others (folds by a hash of the pair), and rule-1 on the same
  folds; with the calibration on those folds (predicted against observed share of
  duplicates by probability band);
* a model estimated without labels (``match_training.estimate``, EM, from rule-1) on
  the candidate pairs of the whole corpus replayed through the online rule (every
  index hit of every article, ``Replayer(record_pairs=True)``), scored on both samples.

Pair-level figures (each labelled pair verified directly), not the engine's clusters:
bench/accuracy.py scores those.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import mmh3

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import load_docs, load_labels, table  # noqa: E402

from fingerprints.batch.replay import Item, Replayer  # noqa: E402
from fingerprints.rule import EngineConfig, Features, extract_many  # noqa: E402
from fingerprints.rule.boilerplate import shipped_hashes  # noqa: E402
from fingerprints.rule.match_model import MatchModel, rule_model, starting_model  # noqa: E402
from fingerprints.rule.match_training import (  # noqa: E402
    STARTING_FIXED,
    STRENGTH,
    Example,
    PairOfFeatures,
    estimate,
    fit,
    folds,
    levels_of,
    precision_recall,
    rule_exits,
    scores,
)

Labels = dict[tuple[str, str], tuple[int, str]]


def labelled_articles() -> tuple[Labels, Labels, dict[str, Features]]:
    """(first sample, validation sample, the features of every article either labels:
    the shipped boilerplate list, the default configuration)."""
    first, validation = load_labels("bdci"), load_labels("bdci", validation=True)
    ids = sorted({i for pairs in (first, validation) for pair in pairs for i in pair})
    docs = {d.id: d for d in load_docs("bdci")}
    features = dict(zip(ids, extract_many([(docs[i].title, docs[i].content) for i in ids],
                                          EngineConfig(model=starting_model()),
                                          boilerplate=frozenset(shipped_hashes())),
                        strict=True))
    return first, validation, features


def labelled_pairs() -> tuple[list[PairOfFeatures], list[PairOfFeatures], list[int],
                              list[int]]:
    """(first sample, validation sample, and a stable hash per pair of each), each pair
    with its two articles' features (the shipped boilerplate list)."""
    first, validation, features = labelled_articles()

    def pairs(labels: Labels) -> list[PairOfFeatures]:
        return [PairOfFeatures(features[a], features[b], label == 1)
                for (a, b), (label, _reason) in sorted(labels.items())]

    def keys(labels: Labels) -> list[int]:
        return [mmh3.hash(f"{a}|{b}", signed=False) for a, b in sorted(labels)]

    return pairs(first), pairs(validation), keys(first), keys(validation)


def labelled_examples() -> tuple[list[Example], list[Example], list[int], list[int]]:
    """(first sample, validation sample, and a stable hash per pair of each), each pair
    at the levels it reaches with the default configuration."""
    first, validation, first_keys, validation_keys = labelled_pairs()
    config = EngineConfig(model=starting_model())
    return ([Example(levels_of(p.a, p.b, config), p.match) for p in first],
            [Example(levels_of(p.a, p.b, config), p.match) for p in validation],
            first_keys, validation_keys)


def candidate_levels() -> list[tuple[tuple[str, str], ...]]:
    """The levels of every candidate pair of the crawled corpus replayed in order."""
    docs = load_docs("bdci")
    config = EngineConfig(model=starting_model())
    features = extract_many([(d.title, d.content) for d in docs], config,
                            boilerplate=frozenset(shipped_hashes()))
    replayer = Replayer(config, record_pairs=True)
    for seq, (doc, feats) in enumerate(zip(docs, features, strict=True)):
        replayer.add(Item(seq=seq, nid=doc.id, features=feats))
    assert replayer.pairs is not None
    out = []
    for a, b in replayer.pairs:
        out.append(levels_of(features[b], features[a], config))
    return out


def row(name: str, scored: list[tuple[float, bool]]) -> list[object]:
    pr = precision_recall(scored, 0.5)
    return [name, len(scored), f"{pr['f1']:.3f}", f"{pr['precision'] or 0:.3f}",
            f"{pr['recall'] or 0:.3f}", pr["fp"], pr["fn"]]


def shipped_fit(train: list[Example], version: str, strength: float) -> MatchModel:
    """The starting model's procedure (scripts/ship_match_model.py) on ``train``: from
    rule-1, the labelled pairs and one pseudo-pair per exit of the rule, STARTING_FIXED kept."""
    return fit(train + rule_exits(), rule_model(), version, strength=strength,
               fixed=STARTING_FIXED)


def calibration(scored: list[tuple[float, bool]]) -> list[list[object]]:
    """Predicted against observed share of duplicates, by probability band."""
    out = []
    for low, high in ((0.0, 0.1), (0.1, 0.5), (0.5, 0.9), (0.9, 0.99), (0.99, 1.01)):
        band = [(p, m) for p, m in scored if low <= p < high]
        if band:
            out.append([f"{low:g}-{min(high, 1.0):g}", len(band),
                        f"{sum(p for p, _m in band) / len(band):.3f}",
                        f"{sum(m for _p, m in band) / len(band):.3f}"])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--strength", type=float, default=STRENGTH)
    args = parser.parse_args()
    first, validation, first_keys, validation_keys = labelled_examples()
    everything, keys = first + validation, first_keys + validation_keys
    rule, shipped = rule_model(), starting_model()
    rows = [row("rule-1 on the first sample", scores(rule, first)),
            row("rule-1 on the validation sample", scores(rule, validation)),
            row(f"{shipped.version} (shipped, fitted on both samples) on all, in-sample",
                scores(shipped, everything))]
    fitted = shipped_fit(first, "fitted-first", args.strength)
    rows.append(row("the shipped procedure on the first sample, on the validation sample",
                    scores(fitted, validation)))
    cv_fitted: list[tuple[float, bool]] = []
    cv_rule: list[tuple[float, bool]] = []
    for held in folds(everything, args.folds, keys):
        held_set = set(held)
        train = [e for i, e in enumerate(everything) if i not in held_set]
        model = shipped_fit(train, "fold", args.strength)
        cv_fitted += scores(model, [everything[i] for i in held])
        cv_rule += scores(rule, [everything[i] for i in held])
    rows.append(row(f"{args.folds}-fold: the shipped procedure on the other folds",
                    cv_fitted))
    rows.append(row(f"{args.folds}-fold: rule-1, same folds", cv_rule))
    unlabelled = candidate_levels()
    em = estimate(unlabelled, rule, "em-bdci")
    rows.append(row(f"EM from rule-1 on {len(unlabelled):,} candidate pairs (no labels), "
                    "first sample", scores(em, first)))
    rows.append(row("EM, validation sample", scores(em, validation)))
    print(f"Labelled crawled pairs, verified as pairs, threshold 0.5 "
          f"(strength {args.strength}):\n")
    print(table(["model, pairs", "pairs", "F1", "P", "R", "false merges", "missed"], rows))
    print(f"\nCalibration on folds not fitted on ({args.folds}-fold, the shipped procedure) "
          "and of rule-1: predicted and observed share of duplicates by band:")
    print(table(["probability", "pairs", "predicted", "observed"], calibration(cv_fitted)))
    print(table(["rule-1: probability", "pairs", "predicted", "observed"],
                calibration(cv_rule)))
    sweep = scores(shipped, everything)
    print(f"\n{shipped.version} by threshold on all {len(everything)} pairs (in-sample):")
    print(table(["threshold", "P", "R", "false merges", "missed"], [
        [str(t), "—" if pr["precision"] is None else f"{pr['precision']:.3f}",
         f"{pr['recall']:.3f}", pr["fp"], pr["fn"]]
        for t in (0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999)
        for pr in [precision_recall(sweep, t)]]))
    changed = [(c, lvl, rule.weight(c, lvl), w) for c, lvl, w in shipped.weights
               if abs(rule.weight(c, lvl) - w) >= 0.5]
    print(f"\n{shipped.version} against rule-1: prior {rule.prior:g} -> {shipped.prior}; "
          "weights that differ by half a bit or more:")
    print(table(["comparison", "level", "rule-1", shipped.version],
                [[c, lvl, f"{a:+g}", f"{b:+.2f}"] for c, lvl, a, b in changed]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
