"""The starting boilerplate list the project ships: fingerprints/rule/data/boilerplate.txt.

    .venv/bin/python scripts/ship_boilerplate.py [--data ../shared/data]

Each public corpus of ``../shared/data`` runs through the online rule as the workers run
it (``bench/common.run_engine``: stories founded in arrival order, each story's clauses
counted once, a clause seen in ``boilerplate_min_docs`` stories promoted), and the
union of the clauses promoted is written as their 64-bit hashes (16 hex digits, one per
line, sorted): hashes only, never a clause's text (the corpora may not be
redistributed). ``manage.py load_boilerplate`` puts them in a database
(docs/engine.md, "Boilerplate learned from the stream"), so that a fresh install
removes the chrome a warm one has learned.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import CORPORA, load_docs, run_engine  # noqa: E402

from fingerprints.rule.boilerplate import SHIPPED  # noqa: E402
from fingerprints.rule.config import EngineConfig  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    hashes: set[int] = set()
    counts = []
    for corpus in CORPORA:
        learned: dict[int, str] = {}
        run_engine(load_docs(corpus), learned=learned)
        counts.append(f"{corpus} {len(learned)}")
        hashes.update(learned)
    min_docs = EngineConfig().boilerplate_min_docs
    lines = [
        "# The starting boilerplate list: hashes of clauses promoted (seen in "
        f"{min_docs} stories) while",
        "# the public corpora ran through the online rule; scripts/ship_boilerplate.py "
        "wrote it,",
        "# manage.py load_boilerplate loads it. Clauses per corpus: " + ", ".join(counts),
        *(f"{h:016x}" for h in sorted(hashes)),
    ]
    SHIPPED.write_text("\n".join(lines) + "\n", encoding="ascii")
    print(f"{len(hashes)} clause hashes -> {SHIPPED.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
