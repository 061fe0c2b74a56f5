"""The match model against labelled pairs: the shipped model, fitted models, folds.

    .venv/bin/python bench/match_model.py [--folds 5] [--strength 0.05] [--write-model PATH]

Every human-labelled pair of the crawled corpus (``bench/labels/``: the first sample and
the held-out validation sample) is verified as a pair (features with the shipped
boilerplate list, the default level boundaries), which gives the levels it reaches.
Then, at the default threshold 0.5:

* the shipped starting model (``rule-1``) on each sample;
* a model fitted on the first sample (``fingerprints.rule.match_training.fit``,
  starting from rule-1) scored on the validation sample it never saw;
* ``--folds`` cross-validation over both samples together: each fold scored by a model
  fitted on the others, folds by a hash of the pair, and rule-1 on the same folds;
* a model estimated without labels (``match_training.estimate``, EM) from the candidate
  pairs of the whole corpus replayed through the online rule (every index hit of every
  article, ``Replayer(record_pairs=True)``), scored on both samples.

Pair-level figures (each labelled pair verified directly), not the engine's clusters:
bench/accuracy.py scores those. ``--write-model`` writes the model fitted on all the
labelled pairs (what ``train_matcher`` would propose from these labels).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import mmh3

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import load_docs, load_labels, table  # noqa: E402

from fingerprints.batch.replay import Item, Replayer  # noqa: E402
from fingerprints.rule import EngineConfig, extract_many, verify  # noqa: E402
from fingerprints.rule.boilerplate import shipped_hashes  # noqa: E402
from fingerprints.rule.match_model import starting_model  # noqa: E402
from fingerprints.rule.match_training import (  # noqa: E402
    STRENGTH,
    Example,
    estimate,
    fit,
    folds,
    precision_recall,
    scores,
)


def labelled_examples() -> tuple[list[Example], list[Example], list[int], list[int]]:
    """(first sample, validation sample, and a stable hash per pair of each)."""
    first, validation = load_labels("bdci"), load_labels("bdci", validation=True)
    ids = sorted({i for pairs in (first, validation) for pair in pairs for i in pair})
    docs = {d.id: d for d in load_docs("bdci")}
    config = EngineConfig()
    features = dict(zip(ids, extract_many([(docs[i].title, docs[i].content) for i in ids],
                                          config, boilerplate=frozenset(shipped_hashes())),
                        strict=True))

    def examples(pairs: dict[tuple[str, str], tuple[int, str]]) -> list[Example]:
        out = []
        for (a, b), (label, _reason) in sorted(pairs.items()):
            score = verify(features[a], features[b], config).score
            assert score is not None
            out.append(Example(tuple((w.comparison, w.level) for w in score.weights),
                               label == 1))
        return out

    def keys(pairs: dict[tuple[str, str], tuple[int, str]]) -> list[int]:
        return [mmh3.hash(f"{a}|{b}", signed=False) for a, b in sorted(pairs)]

    return examples(first), examples(validation), keys(first), keys(validation)


def candidate_levels() -> list[tuple[tuple[str, str], ...]]:
    """The levels of every candidate pair of the crawled corpus replayed in order."""
    docs = load_docs("bdci")
    config = EngineConfig()
    features = extract_many([(d.title, d.content) for d in docs], config,
                            boilerplate=frozenset(shipped_hashes()))
    replayer = Replayer(config, record_pairs=True)
    for seq, (doc, feats) in enumerate(zip(docs, features, strict=True)):
        replayer.add(Item(seq=seq, nid=doc.id, features=feats))
    assert replayer.pairs is not None
    out = []
    for a, b in replayer.pairs:
        score = verify(features[b], features[a], config).score
        assert score is not None
        out.append(tuple((w.comparison, w.level) for w in score.weights))
    return out


def row(name: str, scored: list[tuple[float, bool]]) -> list[object]:
    pr = precision_recall(scored, 0.5)
    return [name, len(scored), f"{pr['f1']:.3f}", f"{pr['precision'] or 0:.3f}",
            f"{pr['recall'] or 0:.3f}", pr["fp"], pr["fn"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--strength", type=float, default=STRENGTH)
    parser.add_argument("--write-model", type=Path)
    args = parser.parse_args()
    first, validation, first_keys, validation_keys = labelled_examples()
    start = starting_model()
    rows = [row("rule-1 on the first sample", scores(start, first)),
            row("rule-1 on the validation sample", scores(start, validation))]
    fitted = fit(first, start, "fitted-first", strength=args.strength)
    rows.append(row("fitted on the first sample, on the validation sample",
                    scores(fitted, validation)))
    everything, keys = first + validation, first_keys + validation_keys
    cv_fitted: list[tuple[float, bool]] = []
    cv_start: list[tuple[float, bool]] = []
    for held in folds(everything, args.folds, keys):
        held_set = set(held)
        train = [e for i, e in enumerate(everything) if i not in held_set]
        model = fit(train, start, "fold", strength=args.strength)
        cv_fitted += scores(model, [everything[i] for i in held])
        cv_start += scores(start, [everything[i] for i in held])
    rows.append(row(f"{args.folds}-fold: fitted on the other folds", cv_fitted))
    rows.append(row(f"{args.folds}-fold: rule-1, same folds", cv_start))
    unlabelled = candidate_levels()
    em = estimate(unlabelled, start, "em-bdci")
    rows.append(row(f"EM on {len(unlabelled):,} candidate pairs (no labels), first sample",
                    scores(em, first)))
    rows.append(row("EM, validation sample", scores(em, validation)))
    print(f"Labelled crawled pairs, verified as pairs, threshold 0.5 "
          f"(strength {args.strength}):\n")
    print(table(["model, pairs", "pairs", "F1", "P", "R", "false merges", "missed"], rows))
    sweep = scores(start, everything)
    print(f"\nrule-1 by threshold on all {len(everything)} pairs:")
    print(table(["threshold", "P", "R", "false merges", "missed"], [
        [str(t), f"{pr['precision']:.3f}", f"{pr['recall']:.3f}", pr["fp"], pr["fn"]]
        for t in (0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999)
        for pr in [precision_recall(sweep, t)]]))
    full = fit(everything, start, "fitted-labels", strength=args.strength)
    changed = [(c, lvl, start.weight(c, lvl), w) for c, lvl, w in full.weights
               if abs(start.weight(c, lvl) - w) >= 0.5]
    print(f"\nFitted on all {len(everything)} pairs: prior {start.prior} -> {full.prior}; "
          "weights that moved half a bit or more:")
    print(table(["comparison", "level", "rule-1", "fitted"],
                [[c, lvl, f"{a:+g}", f"{b:+.2f}"] for c, lvl, a, b in changed]))
    if args.write_model:
        args.write_model.write_text(json.dumps(full.as_dict(), indent=1, ensure_ascii=False),
                                    encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
