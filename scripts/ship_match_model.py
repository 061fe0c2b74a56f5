"""The starting match model the project ships: fingerprints/rule/data/match_model.json.

    .venv/bin/python scripts/ship_match_model.py [--check]

Fitted (``fingerprints.rule.match_training.fit``, strength ``STRENGTH``, from ``rule-1``:
the engine-v2 rule written as weights, data/rule_model.json) to two kinds of example:

* the 766 human-labelled pairs of the crawled corpus (``bench/labels/``, ids and labels
  only; each pair verified with the shipped boilerplate list, which gives its levels),
  so that the probabilities say how often such a pair was a duplicate;
* one pseudo-pair per exit of the rule (``match_training.rule_exits``) with the rule's
  verdict, so that level combinations no labelled pair reaches (guards that rarely
  fire) stay where the rule put them.

Not fitted (``STARTING_FIXED``): the prior and the guards' neutral levels (so that each
weight reads as evidence: nothing to compare weighs nothing) and the pictures (no
labelled pair has pictures): they keep rule-1's weights.

The result must decide every exit as the rule did with at least one bit of margin (so
every docId stays what the rule gives); the script refuses to write it otherwise.
Weights only, never a text. ``--check``: exit 1 when the shipped file differs from what
the script fits now.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from match_model import labelled_examples  # noqa: E402

from fingerprints.rule.match_model import STARTING_MODEL, MatchModel, rule_model  # noqa: E402
from fingerprints.rule.match_training import (  # noqa: E402
    STARTING_FIXED,
    STRENGTH,
    fit,
    rule_exits,
)

VERSION = "labels-1"
PATH = ROOT / "fingerprints" / "rule" / "data" / STARTING_MODEL


def ship() -> MatchModel:
    first, validation, _keys, _more = labelled_examples()
    labelled = first + validation
    exits = rule_exits()
    model = fit(labelled + exits, rule_model(), VERSION, strength=STRENGTH, fixed=STARTING_FIXED,
                description=(
        f"Fitted from rule-1 to the {len(labelled)} human-labelled crawled pairs and one "
        f"pseudo-pair per exit of the engine-v2 rule ({len(exits)}), strength {STRENGTH}; "
        "the prior, the guards' neutral levels and the pictures keep rule-1's weights. "
        "scripts/ship_match_model.py. Decides every exit as the rule did, with at least "
        "one bit of margin."))
    worst = min(model.score(e.levels).match_weight * (1 if e.match else -1) for e in exits)
    if worst < 1:
        raise SystemExit(f"the fitted model decides an exit of the rule with a margin of "
                         f"{worst:.2f} bits (< 1): not written")
    return model


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = json.dumps(ship().as_dict(), indent=1, ensure_ascii=False) + "\n"
    if args.check:
        return 0 if PATH.read_text(encoding="utf-8") == text else 1
    PATH.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
