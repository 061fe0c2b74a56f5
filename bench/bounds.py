"""What the labelled crawled pairs say about the match model's level bounds.

    .venv/bin/python bench/bounds.py [--folds 5]

The 766 human-labelled pairs of the crawled corpus (``bench/labels/``: both samples),
each with its two articles' features (the shipped boilerplate list), and
``match_training.fit_bounds`` — the search ``train_matcher --bounds`` runs on a
deployment's editors' decisions:

* on every pair, from the shipped model: which bounds move, and the cross-validated
  wrong decisions before and after (in-sample: the search saw these pairs);
* nested cross-validation (``--folds`` outer folds by a hash of the pair): on each, a
  starting model by the shipped procedure (scripts/ship_match_model.py: from rule-1,
  the labels plus one pseudo-pair per exit of the rule) on the other folds; from it,
  ``train_matcher`` on those same folds without ``--bounds`` (the weights) and with it
  (the bounds, then the weights); all three scored on the held-out fold at 0.5. The
  bounds a fold's search chose are listed. This is how the search does on pairs it
  never saw.

Pair-level figures (each labelled pair verified directly).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import table  # noqa: E402
from match_model import labelled_pairs, row, shipped_fit  # noqa: E402

from fingerprints.rule import EngineConfig  # noqa: E402
from fingerprints.rule.match_model import starting_model  # noqa: E402
from fingerprints.rule.match_training import (  # noqa: E402
    STRENGTH,
    Example,
    fit,
    fit_bounds,
    folds,
    levels_of,
    scores,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    first, validation, first_keys, validation_keys = labelled_pairs()
    pairs, keys = first + validation, first_keys + validation_keys
    config = EngineConfig(model=starting_model())  # the rule's levels, not the default
    shipped = starting_model()
    fitted, moves = fit_bounds(pairs, shipped, config, "bounds-all", keys=keys)
    print(f"The bound search on all {len(pairs)} labelled pairs, from {shipped.version} "
          "(in-sample):\n")
    print(table(["bound", "shipped", "fitted", "CV wrong decisions before", "after"],
                [[m.name, m.before, m.after, m.errors_before, m.errors_after]
                 for m in moves]) if moves else "no bound moved")

    def examples(model_config: EngineConfig, chosen: list[int]) -> list[Example]:
        return [Example(levels_of(pairs[i].a, pairs[i].b, model_config), pairs[i].match)
                for i in chosen]

    starting: list[tuple[float, bool]] = []
    weights_only: list[tuple[float, bool]] = []
    with_bounds: list[tuple[float, bool]] = []
    chosen_rows = []
    everything = [Example((), p.match) for p in pairs]  # folds() reads only the count
    for n, held in enumerate(folds(everything, args.folds, keys)):
        held_set = set(held)
        train = [i for i in range(len(pairs)) if i not in held_set]
        model = shipped_fit(examples(config, train), "fold", STRENGTH)
        starting += scores(model, examples(config, held))
        weights_only += scores(fit(examples(config, train), model, "fold"),
                               examples(config, held))
        searched, fold_moves = fit_bounds([pairs[i] for i in train], model, config, "fold",
                                          keys=[keys[i] for i in train])
        with_bounds += scores(searched, examples(EngineConfig(model=searched), held))
        chosen_rows.append([n, ", ".join(f"{m.name} {m.before:g} -> {m.after:g}"
                                         for m in fold_moves) or "none"])
    print(f"\nNested {args.folds}-fold cross-validation, threshold 0.5, each fold scored by "
          "models fitted on the others:\n")
    print(table(["procedure", "pairs", "F1", "P", "R", "false merges", "missed"], [
        row("starting model (the shipped procedure)", starting),
        row("then train_matcher: the weights", weights_only),
        row("then train_matcher --bounds: the bounds and the weights", with_bounds)]))
    print()
    print(table(["fold", "bounds the search moved"], chosen_rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
