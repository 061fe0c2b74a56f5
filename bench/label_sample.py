"""Draw the pairs of a corpus to label by hand (bench/labels/), across similarity bands.

    .venv/bin/python bench/label_sample.py --corpus bdci --out /tmp/label-batches

Every pair of articles sharing at least 8 character 5-grams (title + content, letters
and digits) with containment of the smaller >= 0.2 is put in a band by its Jaccard J
and containment C: A J >= 0.8, B 0.5-0.8, C 0.3-0.5, D J < 0.3 and C >= 0.6, E C
0.3-0.6, F below. The sample (seed fixed) takes 50 of A, all of B and C, 100 of D (40
with both bodies >= 300 characters: not only boilerplate-only pages), 45 of E, 20 of F
and 40 pairs with the same title. It writes the texts to ``--out`` in four batch files
for the labellers (never into the repository); the labels file keeps ids and labels
only: ``id_a,id_b,label,reason`` with the reasons of docs/results/log.md ("Labels").

``--validation`` draws a held-out round (another seed, every pair already labelled in
either file left out; B and C were labelled whole, so it takes what is left): every
remaining pair of A, 80 of D (up to 30 with long bodies), 60 of E (up to 25 long), 30
of F, every remaining same-title pair, and 40 pairs the engine gives one docId
(``run_engine`` at the defaults) that no band holds. The first draw (``--seed 20261125``,
drawn before the validation file existed) and the second (``--seed 20261126``) are in
the validation file; a draw is scored before anything is changed because of it
(docs/results/log.md, "The validation sample").

``--disagreements`` (xinhua, thucnews, bbc, cnndm) draws the pairs whose silver verdict
is in doubt and that ``bench/labels/<corpus>_doubtful_pairs.csv`` does not hold yet
(:func:`disagreements`).
"""

from __future__ import annotations

import argparse
import collections
import itertools
import random
import sys
from pathlib import Path

import mmh3

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    DOUBTFUL,
    VALIDATION,
    Doc,
    cluster_pairs,
    load_docs,
    load_labels,
    load_pairs,
    load_silver,
    run_engine,
)


def shingles(text: str, width: int = 5) -> set[int]:
    kept = "".join(ch for ch in text if ch.isalnum())
    if len(kept) <= width:
        return {mmh3.hash(kept, signed=False)} if kept else set()
    return {mmh3.hash(kept[i : i + width], signed=False) for i in range(len(kept) - width + 1)}


def similar_pairs(docs: list[Doc]) -> list[tuple[int, int, float, float]]:
    sets = [shingles(doc.text) for doc in docs]
    postings: dict[int, list[int]] = collections.defaultdict(list)
    for i, s in enumerate(sets):
        for h in s:
            postings[h].append(i)
    shared: collections.Counter[tuple[int, int]] = collections.Counter()
    for members in postings.values():
        if 2 <= len(members) <= 400:  # a 5-gram in 400+ articles says nothing
            shared.update(itertools.combinations(members, 2))
    out = []
    for (a, b), n in shared.items():
        if n < 8:
            continue
        inter = len(sets[a] & sets[b])
        j = inter / len(sets[a] | sets[b])
        c = inter / min(len(sets[a]), len(sets[b]))
        if c >= 0.2:
            out.append((a, b, j, c))
    return out


def long_bodies(docs: list[Doc], pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The pairs whose two bodies both have at least 300 characters."""
    return [p for p in pairs if min(len(docs[p[0]].content), len(docs[p[1]].content)) >= 300]


def band(j: float, c: float) -> str:
    if j >= 0.8:
        return "A"
    if j >= 0.5:
        return "B"
    if j >= 0.3:
        return "C"
    return "D" if c >= 0.6 else "E" if c >= 0.3 else "F"


def sample(docs: list[Doc], seed: int = 20261124) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    by_band: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
    for a, b, j, c in similar_pairs(docs):
        by_band[band(j, c)].append((a, b))
    chosen: set[tuple[int, int]] = set()

    def take(pairs: list[tuple[int, int]], n: int) -> None:
        left = [p for p in pairs if p not in chosen]
        rng.shuffle(left)
        chosen.update(left[:n])

    take(by_band["A"], 50)
    take(by_band["B"], 92)
    take(by_band["C"], 57)
    take(long_bodies(docs, by_band["D"]), 40)
    take(by_band["D"], 60)
    take(long_bodies(docs, by_band["E"]), 30)
    take(by_band["E"], 15)
    take(by_band["F"], 20)
    by_title: dict[str, list[int]] = collections.defaultdict(list)
    for i, doc in enumerate(docs):
        by_title[doc.title].append(i)
    take([p for group in by_title.values() for p in itertools.combinations(group, 2)], 40)
    pairs = sorted(chosen)
    rng.shuffle(pairs)
    return pairs


def validation_sample(docs: list[Doc], labelled: set[tuple[str, str]],
                      seed: int = 20261125) -> list[tuple[int, int]]:
    """The held-out sample (module docstring): pairs of neither ``labelled`` (id pairs,
    sorted) nor each other."""
    rng = random.Random(seed)
    position = {doc.id: i for i, doc in enumerate(docs)}
    seen = {tuple(sorted((position[a], position[b]))) for a, b in labelled}
    by_band: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
    for a, b, j, c in similar_pairs(docs):
        by_band[band(j, c)].append((a, b))
    banded = {p for pairs in by_band.values() for p in pairs}
    chosen: set[tuple[int, int]] = set()

    def take(pairs: list[tuple[int, int]], n: int) -> int:
        left = sorted(p for p in pairs if p not in chosen and p not in seen)
        rng.shuffle(left)
        chosen.update(left[:n])
        return len(left[:n])

    take(by_band["A"], len(by_band["A"]))
    take(by_band["D"], 80 - take(long_bodies(docs, by_band["D"]), 30))
    take(by_band["E"], 60 - take(long_bodies(docs, by_band["E"]), 25))
    take(by_band["F"], 30)
    by_title: dict[str, list[int]] = collections.defaultdict(list)
    for i, doc in enumerate(docs):
        by_title[doc.title].append(i)
    same_title = [p for group in by_title.values() for p in itertools.combinations(group, 2)]
    take(same_title, len(same_title))
    merged = cluster_pairs(run_engine(docs))
    take([p for a, b in merged if (p := tuple(sorted((position[a], position[b])))) not in banded],
         40)
    pairs = sorted(chosen)
    rng.shuffle(pairs)
    return pairs


def disagreements(corpus: str, docs: list[Doc],
                  labelled: frozenset[tuple[str, str]] = frozenset()) -> list[tuple[int, int]]:
    """Every pair of a silver corpus where the silver file's verdict is in doubt and
    that is not ``labelled`` yet: its 0.5-0.8 band (counted neither way by the silver
    scores), every pair the engine, rensa or datasketch gives one docId that the file
    does not list at all, and every J >= 0.8 pair one of them keeps apart."""
    from accuracy import run_minhash_lsh, run_rensa_lsh

    silver = load_silver(corpus)
    high = {pair for pair, j in silver.items() if j >= 0.8}
    wanted = {pair for pair, j in silver.items() if 0.5 <= j < 0.8}
    for method in (run_engine, run_rensa_lsh, run_minhash_lsh):
        merged = cluster_pairs(method(docs))
        wanted |= {pair for pair in merged if pair not in silver} | (high - merged)
    wanted -= labelled
    position = {doc.id: i for i, doc in enumerate(docs)}
    pairs = sorted(tuple(sorted((position[a], position[b]))) for a, b in wanted)
    random.Random(20261125).shuffle(pairs)
    return pairs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default="bdci")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--validation", action="store_true",
                        help="a held-out round, leaving out every pair of both label files")
    parser.add_argument("--seed", type=int, default=20261125, help="the round's seed")
    parser.add_argument("--disagreements", action="store_true",
                        help="a silver corpus's doubtful pairs not read yet (band, "
                             "unlisted merges, split J >= 0.8 pairs)")
    parser.add_argument("--max-chars", type=int, default=2500,
                        help="characters of a body shown before it is cut")
    args = parser.parse_args()
    docs = load_docs(args.corpus)
    if args.disagreements:
        path = DOUBTFUL[args.corpus]
        pairs = disagreements(args.corpus, docs,
                              frozenset(load_pairs(path)) if path.exists() else frozenset())
    elif args.validation:
        labelled = set(load_labels(args.corpus))
        if VALIDATION[args.corpus].exists():
            labelled |= set(load_labels(args.corpus, validation=True))
        pairs = validation_sample(docs, labelled, args.seed)
    else:
        pairs = sample(docs)
    args.out.mkdir(parents=True, exist_ok=True)
    for k in range(args.batches):
        with (args.out / f"batch{k}.txt").open("w", encoding="utf-8") as out:
            for n, (a, b) in enumerate(pairs[k :: args.batches]):
                out.write(f"===== PAIR {n + 1}: {docs[a].id} vs {docs[b].id}\n")
                for side, doc in (("A", docs[a]), ("B", docs[b])):
                    cut = args.max_chars
                    body = doc.content if len(doc.content) <= cut else (
                        doc.content[:cut] + f" …[truncated, {len(doc.content)} chars in all]")
                    out.write(f"--- {side} {doc.id} TITLE: {doc.title}\n"
                              f"--- {side} CONTENT ({len(doc.content)} chars):\n{body}\n")
                out.write("\n")
    print(f"{len(pairs)} pairs in {args.batches} batches under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
