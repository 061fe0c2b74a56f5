"""What one candidate pair's verification costs under the default model.

    .venv/bin/python bench/verify_cost.py [--corpus xinhua] [--rounds 5]

The online pass (``common.run_engine``) runs once over the corpus with
``verification.verify_vector`` wrapped to record every pair it verifies; then each
step is timed over those pairs, the best of ``--rounds`` passes, in µs a pair:
the verification (``verify_vector``), the comparison vector (``compare_pair``), the
explanation (``explain_vector``), and the vector's parts. CPU time of one process: run
it in two trees (``farm-bench``) for a ratio.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from itertools import cycle
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import load_docs, run_engine, table  # noqa: E402

from fingerprints.rule import comparison, verification  # noqa: E402

Pair = tuple[Any, Any, Any, Any, dict[str, Any]]


def recorded_pairs(corpus: str) -> list[Pair]:
    """Every (a, b, config, model, keywords) the online pass verifies with a vector model."""
    pairs: list[Pair] = []
    verify = verification.verify_vector

    def spy(a: Any, b: Any, config: Any, model: Any, **kw: Any) -> Any:
        pairs.append((a, b, config, model, kw))
        return verify(a, b, config, model, **kw)

    verification.verify_vector = spy
    try:
        run_engine(load_docs(corpus))
    finally:
        verification.verify_vector = verify
    return pairs


def per_pair(pairs: list[Pair], step: Callable[[Pair], object], rounds: int) -> float:
    """The best of ``rounds`` passes of ``step`` over ``pairs``, CPU µs a pair."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for pair in pairs:
            step(pair)
        best = min(best, time.process_time() - start)
    return best / len(pairs) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default="xinhua")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    pairs = recorded_pairs(args.corpus)
    vectors = cycle([comparison.compare_pair(a, b, picture_bits=c.picture_bits, **kw)
                     for a, b, c, _m, kw in pairs])
    steps: list[tuple[str, Callable[[Pair], object]]] = [
        ("verification (verify_vector)", lambda p: verification.verify_vector(
            p[0], p[1], p[2], p[3], **p[4])),
        ("comparison vector (compare_pair)", lambda p: comparison.compare_pair(
            p[0], p[1], picture_bits=p[2].picture_bits, **p[4])),
        ("explanation (explain_vector)", lambda p: verification.explain_vector(
            p[3], next(vectors))),
        ("  sketch overlap", lambda p: comparison.overlap_counts(p[0].sketch, p[1].sketch)),
        ("  titles", lambda p: comparison._short(p[0].title_key, p[1].title_key)),
        ("  short texts", lambda p: comparison._short(p[0].short_text, p[1].short_text)),
        ("  shared keys", lambda p: comparison._shared_keys(p[0].keys, p[1].keys)),
        ("  numbers and names in context", lambda p: comparison.both_contexts(p[0], p[1])),
    ]
    print(f"{args.corpus}: {len(pairs):,} candidate pairs verified by the online pass")
    print(table(["step", "µs a pair"],
                [[name, f"{per_pair(pairs, step, args.rounds):.2f}"] for name, step in steps]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
