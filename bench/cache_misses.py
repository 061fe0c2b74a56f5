"""Simulated cache misses of the per-article path, by C function.

    .venv/bin/python bench/cache_misses.py [--corpus xinhua] [--articles 1000] [--at REV ...]

The full online rule (``common.run_engine``, as ``bench/engine.py`` times it) over the
first ``--articles`` articles of the corpus, after the warm-up sentence, under
``valgrind --tool=cachegrind --cache-sim=yes`` with an 8 MiB last level (about where
this machine's cache ends: a pointer chase costs 10-16 ns within 4 MiB and over 100 ns
from 16 MiB up). Prints, for this tree and each ``--at REV`` (its own tree and kernel in
a temporary git worktree, as bench/older_engine.py builds them), the instructions, L1
data read misses and last-level data read misses of the segmenter's ``cut_spans`` and
the kernel's ``fingerprint_core``, and the whole process's (start-up and dictionary
loading included, the same for every tree). Unlike timings on a shared machine, the
counts are the same on every run of the same build: docs/results/log.md, "The
per-article path: cache misses". Needs valgrind (Debian's package); exits 2 without it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CORPORA, require_data, table  # noqa: E402
from older_engine import trees  # noqa: E402

FUNCTIONS = ("cut_spans", "fingerprint_core")
LAST_LEVEL = "--LL=8388608,16,64"
CHILD = """
import sys
sys.path.insert(0, {bench!r})
from common import load_docs, run_engine
import fingerprints
assert fingerprints.__file__.startswith({tree!r}), fingerprints.__file__
from fingerprints.rule import EngineConfig, extract_many
docs = load_docs({corpus!r}, limit={articles})
extract_many([("预热", "预热用的一句话，不在任何语料里。")], EngineConfig())
run_engine(docs)
"""


def counts(tree: Path, corpus: str, articles: int) -> dict[str, tuple[int, int, int]]:
    """(Ir, D1mr, DLmr) of each of FUNCTIONS and of the whole process ("total")."""
    with tempfile.TemporaryDirectory(prefix="cachegrind-") as scratch:
        out = Path(scratch) / "cachegrind.out"
        child = Path(scratch) / "child.py"  # a file: cg_annotate cannot read a multi-line -c
        child.write_text(CHILD.format(bench=str(tree / "bench"), tree=str(tree),
                                      corpus=corpus, articles=articles), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(tree)}
        subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=yes", LAST_LEVEL,
                        f"--cachegrind-out-file={out}", sys.executable, str(child)],
                       check=True, env=env, cwd=tree, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        report = subprocess.run(["cg_annotate", "--show=Ir,D1mr,DLmr", str(out)],
                                check=True, capture_output=True, text=True).stdout
    found: dict[str, tuple[int, int, int]] = {}
    for line in report.splitlines():
        found_numbers = re.findall(r"(?<![\d.,])\d[\d,]*(?= )", line)
        numbers = [int(n.replace(",", "")) for n in found_numbers]
        if len(numbers) < 3:
            continue
        if "PROGRAM TOTALS" in line:
            found["total"] = (numbers[0], numbers[1], numbers[2])
        for name in FUNCTIONS:
            if line.rstrip().endswith(f":{name}") and name not in found:
                found[name] = (numbers[0], numbers[1], numbers[2])
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default="xinhua", choices=sorted(CORPORA))
    parser.add_argument("--articles", type=int, default=1000)
    parser.add_argument("--at", action="append", default=[], metavar="REV",
                        help="also count this commit's engine (repeatable)")
    args = parser.parse_args()
    if not shutil.which("valgrind") or not shutil.which("cg_annotate"):
        print("needs valgrind and cg_annotate (apt-get install valgrind)", file=sys.stderr)
        return 2
    require_data()
    rows: list[list[object]] = []

    def add_rows(name: str, found: dict[str, tuple[int, int, int]]) -> None:
        for function in (*FUNCTIONS, "total"):
            ir, d1, ll = found.get(function, (0, 0, 0))
            rows.append([name, function, f"{ir:,}", f"{d1:,}", f"{ll:,}",
                         f"{ll / args.articles:,.0f}" if function != "total" else ""])

    for name, tree in trees(args.at):
        add_rows(name, counts(tree, args.corpus, args.articles))
    print(f"{args.corpus}, first {args.articles:,} articles, full online rule under "
          f"cachegrind ({LAST_LEVEL}); counts are data reads")
    print(table(["engine", "function", "instructions", "L1 misses", "last-level misses",
                 "last-level misses per article"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
