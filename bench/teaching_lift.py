"""What a few dozen answers on the teaching queue do to the model, on families not answered.

    .venv/bin/python bench/teaching_lift.py [--answers 100] [--every 25] [--seeds 3]

The human-labelled crawled pairs (``bench/labels/``, as bench/vector_model.py reads
them) are grouped into families: the connected components of the label graph. One
family in three (by a hash) is *unseen*: never asked, only scored. The other families'
pairs are the teaching queue's pool; a scripted editor answers the queue's items with
the pairs' labels, the queue choosing as the desk does (``teaching.choose``: doubt
under the model now active, disagreement with the starting model, at most two pairs of a
family among the last ten answers, a random audit share). Every ``--every`` answers the
vector model is refitted to the answers so far (``vector_training.train``, the prior
centred on the starting model or, ``--prior previous``, on the previous fit; folds
grouped by family), becomes the active model and the pool is re-scored. The table:
labels given -> F1 (and P, R) at the threshold on the unseen families, beside the
starting model's (``--start hand``: the hand-set vector-0, which never saw these labels;
the shipped vector model was fitted on all of them, so no family is unseen by it;
``--start leave-out``: vector-0 fitted to a third of the families, the pool another
third). Offline: the pairs are scored
directly, not through the HTTP desk or the candidate search.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mmh3  # noqa: E402
from common import table  # noqa: E402
from match_model import labelled_articles  # noqa: E402
from vector_model import components  # noqa: E402

from fingerprints.rule import EngineConfig  # noqa: E402
from fingerprints.rule.comparison import compare_pair  # noqa: E402
from fingerprints.rule.match_training import precision_recall  # noqa: E402
from fingerprints.rule.vector_model import (  # noqa: E402
    VectorModel,
    rule_vector_model,
    shipped_vector_model,
)
from fingerprints.rule.vector_training import STRENGTHS, VectorExample, train  # noqa: E402

UNSEEN = 3  # one family in this many is never asked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--answers", type=int, default=100)
    parser.add_argument("--every", type=int, default=25)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--audit-percent", type=int, default=20)
    parser.add_argument("--start", choices=("hand", "shipped", "leave-out"), default="hand",
                        help="the model before any answer (the prior and the other model of "
                        "the disagreement): hand, the hand-set vector-0 that never saw these "
                        "labels; shipped, the vector model fitted on all of them (no family is "
                        "unseen by it); leave-out, vector-0 fitted as the shipped model was "
                        "(strength by grouped log-loss) to a third of the families, which are "
                        "then neither asked nor scored (a shipped model meeting new news)")
    parser.add_argument("--prior", choices=("start", "previous"), default="start",
                        help="what each refit's prior is centred on: the start (every fit on "
                        "every answer so far, as train_matcher does now), or the previous fit "
                        "(as it did before: the earlier answers counted again)")
    parser.add_argument("--strength", default="cv",
                        help="the prior's strength: cv, chosen among vector_training.STRENGTHS "
                        "by grouped log-loss; or a number (train_matcher --vector: 1)")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedupsite.settings")
    import django

    django.setup()
    from articles.editor.teaching import Candidate, choose

    first, validation, features = labelled_articles()
    labels = {**first, **validation}
    pairs = sorted(labels)
    families = components(pairs)
    examples = [VectorExample(compare_pair(features[a], features[b]), labels[(a, b)][0] == 1)
                for a, b in pairs]
    third = [mmh3.hash(f"family|{f}", signed=False) % UNSEEN for f in families]
    unseen = [i for i in range(len(pairs)) if third[i] == 0]
    seen = [i for i in range(len(pairs)) if third[i] != 0]
    strength: float | list[float] = (list(STRENGTHS) if args.strength == "cv"
                                     else float(args.strength))
    if args.start == "leave-out":
        kept = [i for i in seen if third[i] == 1]
        seen = [i for i in seen if third[i] == 2]
        shipped = replace(train([examples[i] for i in kept], [families[i] for i in kept],
                                rule_vector_model(), "left-out", strength=list(STRENGTHS)),
                          version=f"vector-0 fitted to {len(kept)} other pairs")
    else:
        shipped = shipped_vector_model() if args.start == "shipped" else rule_vector_model()

    def f1_on_unseen(model: VectorModel) -> dict[str, float | int | None]:
        return precision_recall([(model.score(examples[i].vector).probability,
                                  examples[i].match) for i in unseen], args.threshold)

    base = f1_on_unseen(shipped)
    print(f"{len(pairs)} labelled pairs in {len(set(families))} families; "
          f"{len(seen)} pairs in the pool, {len(unseen)} pairs of "
          f"{len({families[i] for i in unseen})} unseen families; threshold "
          f"{args.threshold}; before any answer {shipped.version}: F1 {base['f1']:.3f}\n")
    rows = [[0, "—", f"{base['f1']:.3f}", _p(base["precision"]), _p(base["recall"]), "", ""]]
    curves: dict[int, list[float]] = {}
    for seed in range(args.seeds):
        rng = random.Random(seed)
        model = shipped
        answered: list[int] = []
        audits = 0
        for step in range(1, args.answers + 1):
            done = {(pairs[i][0], pairs[i][1]) for i in answered}
            pool = [Candidate(i, i, pairs[i][0], pairs[i][1], families[i], False,
                              model.score(examples[i].vector).probability,
                              shipped.score(examples[i].vector).probability) for i in seen]
            config = EngineConfig(model=model, match_threshold=args.threshold)
            recent = [families[i] for i in answered[-10:]][::-1]
            asked = choose(pool, done, recent, config, rng, audit_percent=args.audit_percent)
            if asked is None:
                break
            answered.append(asked.candidate.a)
            audits += asked.audit
            if step % args.every == 0:
                model = train([examples[i] for i in answered],
                              [families[i] for i in answered],
                              shipped if args.prior == "start" else model, f"taught-{step}",
                              strength=strength)
                model = replace(model, version=f"taught-{step}")
                found = f1_on_unseen(model)
                curves.setdefault(step, []).append(float(found["f1"] or 0.0))
                if seed == 0:
                    matches = sum(examples[i].match for i in answered)
                    rows.append([step, f"{matches} / {step - matches} ({audits} audit)",
                                 f"{found['f1']:.3f}", _p(found["precision"]),
                                 _p(found["recall"]), "", ""])
    for row in rows[1:]:
        f1s = curves.get(int(row[0]), [])
        row[5] = f"{sum(f1s) / len(f1s) - float(base['f1'] or 0.0):+.3f} ({len(f1s)} seeds)"
        row[6] = (f"{min(f1s) - float(base['f1'] or 0.0):+.3f} / "
                  f"{max(f1s) - float(base['f1'] or 0.0):+.3f}")
    print(table(["answers", "same / different (seed 0)", "F1 unseen (seed 0)", "P", "R",
                 "F1 lift over the start, mean of seeds", "lowest / highest"], rows))
    return 0


def _p(value: float | int | None) -> str:
    return "—" if value is None else f"{value:.3f}"


if __name__ == "__main__":
    raise SystemExit(main())
