"""The C segmenter (fingerprints/rule/_segment.c) against rjieba: same tokens, speed.

    .venv/bin/python bench/segment.py [--corpus xinhua --corpus bdci] [--rounds 3] [--jieba]

1. Equality, on every document of every corpus of bench/common.py's CORPORA: the C
   segmenter's ``cut`` against rjieba's ``Jieba().cut(text, False)`` (the engine's
   segmenter today), on the raw text (title, newline, content) and on what the engine
   cuts (the normalized title and the normalized content); ``cut_ids``' offsets against
   ``cut``'s tokens. ``--jieba`` also compares with jieba's ``cut(text, HMM=False)``
   itself (about 20 times slower than the rest). Mismatched documents per corpus;
   the exit status is 1 when there is any.
2. Speed, on one core (the process pinned to one CPU), of the engine's input (the
   normalized title and content of every document: normalizing untimed): rjieba's
   ``cut``, the C ``cut`` (a list of str, what the engine takes today) and the C
   ``cut_ids`` (offsets only, no str per token). Each method in a fresh process: the
   dictionary load (wall seconds, and the resident memory it adds), then one made-up
   sentence, then the first pass over the corpus (cold: text the process has never
   seen) and a second pass over the same texts (warm). CPU docs/s; ratios against
   rjieba. ``--rounds N``: every row N times, the methods taking turns (a slow minute of
   the shared machine then falls on all of them); medians, and each ratio's range.
Exits with an error when the corpora are missing.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CORPORA, ROOT, load_docs, table  # noqa: E402

from fingerprints.rule import segment_c  # noqa: E402
from fingerprints.rule.normalize import normalize  # noqa: E402

METHODS = {
    "rjieba cut": "rjieba",
    "C cut (list of str)": "c_cut",
    "C cut_ids (offsets)": "c_ids",
}
BASELINE = "rjieba cut"


def pin_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        cpu = sorted(os.sched_getaffinity(0))[-1]
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned"


def engine_texts(corpus: str) -> list[tuple[str, str]]:
    """What extraction cuts per document: the normalized title and content."""
    return [(normalize(doc.title), normalize(doc.content)) for doc in load_docs(corpus)]


def _spans_match(ids: Sequence[int], text: str, tokens: list[str]) -> bool:
    return [text[ids[i]:ids[i + 1]] for i in range(0, len(ids), 2)] == tokens


def equality(corpus: str, with_jieba: bool) -> tuple[list[object], int]:
    """([corpus, documents, tokens, mismatched raw, mismatched normalized(, jieba)],
    the sum of the mismatched documents)."""
    import rjieba

    seg, rust = segment_c.get(), rjieba.Jieba()
    reference = None
    if with_jieba:
        import jieba

        jieba.setLogLevel(logging.WARNING)
        reference = jieba.Tokenizer()
        reference.initialize()
    docs = load_docs(corpus)
    tokens = raw_bad = normalized_bad = jieba_bad = 0
    for doc in docs:
        text = doc.text
        mine = seg.cut(text)
        tokens += len(mine)
        raw_bad += mine != rust.cut(text, False) or not _spans_match(seg.cut_ids(text), text,
                                                                     mine)
        pieces = (normalize(doc.title), normalize(doc.content))
        normalized_bad += any(seg.cut(p) != rust.cut(p, False) for p in pieces)
        if reference is not None:
            jieba_bad += any(seg.cut(t) != list(reference.cut(t, HMM=False))
                             for t in (text, *pieces))
    row: list[object] = [corpus, f"{len(docs):,}", f"{tokens:,}", raw_bad, normalized_bad]
    if with_jieba:
        row.append(jieba_bad)
    return row, raw_bad + normalized_bad + jieba_bad


def _rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def one_method(method: str, corpus: str) -> dict[str, float]:
    """Load, cold and warm figures of one method over one corpus, in this process."""
    texts = engine_texts(corpus)
    rss, wall = _rss_bytes(), time.perf_counter()
    cut: Callable[[str], object]
    if method == "rjieba":
        import rjieba

        cut = rjieba.Jieba().cut
    else:
        seg = segment_c.new()
        cut = seg.cut if method == "c_cut" else seg.cut_ids
    load = time.perf_counter() - wall
    added = _rss_bytes() - rss
    cut("预热用的一句话，不在任何语料里。")

    def one_pass() -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        for title, content in texts:
            cut(title)
            cut(content)
        return time.perf_counter() - wall, time.process_time() - cpu

    cold_wall, cold_cpu = one_pass()
    warm_wall, warm_cpu = one_pass()
    return {"n": len(texts), "load": load, "rss": added, "cold_wall": cold_wall,
            "cold_cpu": cold_cpu, "warm_wall": warm_wall, "warm_cpu": warm_cpu,
            "chars": sum(len(t) + len(c) for t, c in texts)}


def _median(found: list[dict[str, float]], key: str) -> float:
    return statistics.median(f[key] for f in found)


def _ratio(base: list[dict[str, float]], found: list[dict[str, float]], key: str) -> str:
    """The median of the rounds' ratios (baseline seconds / these seconds), with their
    range when there is more than one round."""
    each = [b[key] / f[key] for b, f in zip(base, found, strict=True)]
    spread = f" ({min(each):.2f}-{max(each):.2f})" if len(each) > 1 else ""
    return f"{statistics.median(each):.2f}x{spread}"


def speed(corpora: list[str], rounds: int) -> list[list[object]]:
    rows: list[list[object]] = []
    for corpus in corpora:
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in METHODS}
        for _ in range(rounds):
            for name, method in METHODS.items():
                out = subprocess.run(
                    [sys.executable, __file__, "--one-method", method, "--corpus", corpus],
                    check=False, capture_output=True, text=True)
                if out.returncode != 0:
                    raise RuntimeError(f"{name} on {corpus} failed:\n{out.stderr}")
                found = json.loads(out.stdout)
                runs[name].append(found)
                print(f"  {corpus} {name}: cold {found['n'] / found['cold_cpu']:,.0f} docs/s, "
                      f"warm {found['n'] / found['warm_cpu']:,.0f}", file=sys.stderr, flush=True)
        base = runs[BASELINE]
        for name, found in runs.items():
            n = found[0]["n"]
            rows.append([
                corpus, name, f"{_median(found, 'load'):.2f}",
                f"{_median(found, 'rss') / 2**20:.0f}",
                f"{n / _median(found, 'cold_cpu'):,.0f}", _ratio(base, found, "cold_cpu"),
                f"{n / _median(found, 'warm_cpu'):,.0f}", _ratio(base, found, "warm_cpu"),
                f"{found[0]['chars'] / _median(found, 'warm_cpu') / 1e6:.1f}",
            ])
    return rows


def _commit() -> str:
    out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                         check=False, capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", action="append", choices=sorted(CORPORA),
                        help="a corpus (repeatable; default: all of them)")
    parser.add_argument("--rounds", type=int, default=1, help="speed rows per method (medians)")
    parser.add_argument("--jieba", action="store_true", help="also compare with jieba itself")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--one-method", help=argparse.SUPPRESS)
    args = parser.parse_args()
    corpora = args.corpus or list(CORPORA)
    if args.one_method:
        print(json.dumps(one_method(args.one_method, corpora[0])))
        return 0
    if not segment_c.available():
        raise SystemExit("ERROR: build the C segmenter first: pip install --no-deps "
                         "--no-build-isolation -e .")
    print(f"commit {_commit()}, Python {sys.version.split()[0]}, {pin_one_core()}\n")
    headers = ["corpus", "documents", "tokens (raw)", "mismatched docs, raw",
               "mismatched docs, normalized"]
    checked = [equality(corpus, args.jieba) for corpus in corpora]
    print(table(headers + (["mismatched docs vs jieba"] if args.jieba else []),
                [row for row, _ in checked]))
    mismatches = sum(count for _, count in checked)
    print(f"\nmismatched documents in all: {mismatches}\n")
    if not args.skip_speed:
        print(table(["corpus", "method", "load s", "load MiB", "cold docs/s", "cold vs rjieba",
                     "warm docs/s", "warm vs rjieba", "warm M chars/s"],
                    speed(corpora, args.rounds)))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
