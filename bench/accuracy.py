"""Accuracy of the engine against MinHash-LSH and plain SimHash, on every corpus.

    .venv/bin/python bench/accuracy.py [--corpus xinhua ...] [--method engine ...]
                                       [--engine-at REV ...] [--json out.json]

Per corpus: precision, recall and F1 against the silver pairs with Jaccard >= 0.8
(every pair of articles sharing a docId is a predicted positive, so chaining costs
precision; pairs in the 0.5-0.8 band count neither way — ``strict P`` counts them as
false positives), recall of the 0.5-0.8 band, false-positive pairs (predicted pairs the
silver file does not list at all, J < 0.5), the largest cluster and the time. Then the
human-labelled pairs of the crawled corpus (``bench/labels/``: the first sample and
the held-out validation sample, scored apart), and the labelled Clough & Stevenson
answers: share of answers clustered with their source, by how they were made.
``--engine-at REV`` adds the engine as it was at an older commit (``engine@REV``: that
tree's own code and kernel in a temporary git worktree, bench/older_engine.py), scored
in the same run on the same texts; its seconds include the child process's start-up.
Exits non-zero when the corpora are missing.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    CORPORA,
    DOUBTFUL,
    LABELS,
    VALIDATION,
    Doc,
    Method,
    Timer,
    char_shingles,
    cluster_pairs,
    load_clough,
    load_docs,
    load_labels,
    load_pairs,
    load_silver,
    require_data,
    run_engine,
    score,
    score_corrected,
    score_labels,
    table,
    unlisted_over_half,
)
from older_engine import OlderEngine, exit_on_sigterm  # noqa: E402

from fingerprints.batch.unionfind import UnionFind  # noqa: E402


def run_minhash_lsh(docs: Sequence[Doc]) -> dict[str, str]:
    """datasketch MinHashLSH, 128 permutations, threshold 0.8, character 5-grams of
    title + content (white space removed), as it is usually deployed: every LSH hit of
    an article is a duplicate, clusters are the connected components."""
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=0.8, num_perm=128)
    sets: UnionFind[int] = UnionFind(range(len(docs)))
    for i, doc in enumerate(docs):
        mh = MinHash(num_perm=128)
        mh.update_batch([s.encode("utf-8") for s in char_shingles(doc.text)])
        for key in lsh.query(mh):
            sets.union(int(key), i)
        lsh.insert(str(i), mh)
    return {doc.id: f"m{sets.find(i)}" for i, doc in enumerate(docs)}


def run_rensa_lsh(docs: Sequence[Doc]) -> dict[str, str]:
    """rensa (Rust MinHash): 128 permutations, LSH with 16 bands of 8 rows over
    character 5-grams of title + content, every hit a duplicate, connected components:
    what ``pip install rensa`` gives a user following its README."""
    from rensa import RMinHash, RMinHashLSH

    lsh = RMinHashLSH(threshold=0.5, num_perm=128, num_bands=16)
    sets: UnionFind[int] = UnionFind(range(len(docs)))
    for i, doc in enumerate(docs):
        mh = RMinHash(num_perm=128, seed=42)
        mh.update(list(char_shingles(doc.text)))
        for key in lsh.query(mh):
            sets.union(int(key), i)
        lsh.insert(i, mh)
    return {doc.id: f"r{sets.find(i)}" for i, doc in enumerate(docs)}


def run_plain_simhash(docs: Sequence[Doc]) -> dict[str, str]:
    """The seeds taken literally: jieba words (default HMM), the ``simhash`` package
    (64-bit, count weights), k = 3, clusters by union-find over near pairs."""
    import jieba
    from simhash import Simhash, SimhashIndex

    jieba.setLogLevel(60)
    quiet = logging.getLogger("bench.simhash")
    quiet.setLevel(logging.ERROR)  # it warns on every bucket over 200 items
    index = SimhashIndex([], k=3, log=quiet)
    sets: UnionFind[int] = UnionFind(range(len(docs)))

    for i, doc in enumerate(docs):
        words = [w for w in jieba.cut(doc.text) if w.strip()]
        fp = Simhash(words)
        for key in index.get_near_dups(fp):
            sets.union(int(key), i)
        index.add(str(i), fp)
    return {doc.id: f"s{sets.find(i)}" for i, doc in enumerate(docs)}


def run_engine_vector(docs: Sequence[Doc]) -> dict[str, str]:
    """The engine deciding with the shipped model on the comparison vector (engine v4,
    ``data/vector_model.json``), named: the default since vector-3 (``engine`` at an
    older commit is the rule's model)."""
    from fingerprints.rule import EngineConfig
    from fingerprints.rule.vector_model import shipped_vector_model

    return run_engine(docs, EngineConfig(model=shipped_vector_model()))


def run_engine_labels(docs: Sequence[Doc]) -> dict[str, str]:
    """The engine deciding with the rule's shipped model (engine v3, ``labels-1``,
    ``data/match_model.json``), the default before vector-3."""
    from fingerprints.rule import EngineConfig
    from fingerprints.rule.match_model import starting_model

    return run_engine(docs, EngineConfig(model=starting_model()))


METHODS = {
    "engine": run_engine,
    "engine-vector": run_engine_vector,
    "engine-labels": run_engine_labels,
    "minhash-lsh": run_minhash_lsh,
    "rensa-lsh": run_rensa_lsh,
    "simhash+jieba": run_plain_simhash,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", action="append", choices=list(CORPORA))
    parser.add_argument("--method", action="append", choices=list(METHODS))
    parser.add_argument("--engine-at", action="append", default=[], metavar="REV",
                        help="also score the engine as it was at this commit (built in a "
                             "temporary git worktree: bench/older_engine.py)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    require_data()
    if args.engine_at:
        exit_on_sigterm()
    with ExitStack() as stack:
        runners: dict[str, Method] = {name: METHODS[name] for name in args.method or METHODS}
        for rev in dict.fromkeys(args.engine_at):
            older = stack.enter_context(OlderEngine(rev))
            runners[older.name] = older
        return _run(args.corpus or list(CORPORA), runners, args.json)


def _run(corpora: list[str], runners: dict[str, Method], json_path: Path | None) -> int:
    """Every method of ``runners`` (name -> labeller, in order) over ``corpora``."""
    methods = list(runners)
    results: dict[str, dict[str, dict[str, float]]] = {}
    rows = []
    labelled_rows = []
    corrected_rows = []
    for corpus in corpora:
        docs = load_docs(corpus)
        silver = load_silver(corpus)
        golds = {f"{corpus}-labelled": load_labels(corpus)} if corpus in LABELS else {}
        if corpus in VALIDATION:
            golds[f"{corpus}-validation"] = load_labels(corpus, validation=True)
        results[corpus] = {}
        doubtful = (load_pairs(DOUBTFUL[corpus])
                    if corpus in DOUBTFUL and DOUBTFUL[corpus].exists() else None)
        band = {p for p, (label, _) in (doubtful or {}).items()
                if label == 1 and 0.5 <= silver.get(p, 0.0) < 0.8}
        for name in methods:
            with Timer() as timer:
                labels = runners[name](docs)
            predicted = cluster_pairs(labels)
            for key, gold in golds.items():
                g = score_labels(labels, gold)
                results.setdefault(key, {})[name] = dict(g.__dict__)
                labelled_rows.append([
                    key, name, g.precision, g.recall, g.f1, g.false_merges, g.missed,
                    f"{g.boilerplate_false_merges}/{g.boilerplate_pairs}", g.largest,
                ])
            if doubtful is not None:
                c = score_corrected(labels, silver, doubtful)
                found = len(band & predicted)
                results.setdefault(f"{corpus}-corrected", {})[name] = {
                    **c.__dict__, "band_duplicates": len(band), "band_duplicates_found": found}
                corrected_rows.append([corpus, name, c.precision, c.recall, c.f1,
                                       c.false_merges, c.missed, f"{found}/{len(band)}"])
            s = score(labels, silver)
            unlisted = unlisted_over_half(corpus, docs, predicted, silver)
            results[corpus][name] = {**s.__dict__, "seconds": timer.seconds,
                                     "unlisted_over_half": unlisted}
            rows.append([
                corpus, name, s.precision, s.recall, s.f1, s.strict_precision, s.band_recall,
                f"{s.false_positives} ({unlisted})", s.largest, f"{timer.seconds:.1f}",
                f"{len(docs) / timer.seconds:,.0f}",
            ])
            print(f"  {corpus:9s} {name:14s} F1 {s.f1:.3f}", file=sys.stderr, flush=True)
    print(table(
        ["corpus", "method", "P", "R", "F1", "strict P", "band R",
         "FP pairs (of which J >= 0.5)", "largest", "s", "docs/s"],
        rows,
    ))
    print("FP pairs: predicted pairs the silver file does not list; in brackets those whose "
          "exact Jaccard by the file's own measure (common.silver_grams) is >= 0.5, pairs "
          "the file's script missed rather than false ones.")
    print()
    if corrected_rows:
        print("Silver pairs corrected by hand (bench/labels/<corpus>_doubtful_pairs.csv: the "
              "0.5-0.8 band, unlisted merged pairs and split J >= 0.8 pairs, read): pair P, "
              "R, F1 over the corpus")
        print(table(["corpus", "method", "P", "R", "F1", "false merges", "missed",
                     "0.5-0.8 band pairs read as duplicates: found"], corrected_rows))
        print()
    if labelled_rows:
        print("Human-labelled pairs (bench/labels/; -validation: held-out rounds labelled "
              "after tuning): pair P, R, F1; boilerplate-only pairs given one docId")
        print(table(["labels", "method", "P", "R", "F1", "false merges", "missed",
                     "boilerplate-only merged", "largest"], labelled_rows))
        print()
    ratio_rows = []
    for corpus in corpora:
        ours = results[corpus].get("engine")
        lsh = results[corpus].get("minhash-lsh")
        if ours and lsh:
            ratio_rows.append([
                corpus, ours["f1"] - lsh["f1"], ours["band_recall"] - lsh["band_recall"],
                f"{int(ours['false_positives'])} vs {int(lsh['false_positives'])}",
                f"{lsh['seconds'] / ours['seconds']:.1f}x",
            ])
    if ratio_rows:
        print(table(["corpus", "F1 - LSH F1", "band R - LSH", "FP engine vs LSH",
                     "speed vs LSH"], ratio_rows))
        print()

    # Labelled reuse: is each answer clustered with its source?
    clough_docs, pairs = load_clough()
    clough_rows = []
    for name in methods:
        labels = runners[name](clough_docs)
        by_category: dict[str, list[bool]] = {}
        for answer, source, category in pairs:
            by_category.setdefault(category, []).append(labels[answer] == labels[source])
        clough_rows.append([name] + [
            f"{sum(v)}/{len(v)}" for v in (by_category.get(c, []) for c in
                                           ("cut", "light", "heavy", "non"))
        ])
        results.setdefault("clough", {})[name] = {
            c: sum(v) / len(v) for c, v in by_category.items()
        }
    print("Clough & Stevenson: answers clustered with their source "
          "(cut, light: duplicates; heavy: rewrites; non: independent)")
    print(table(["method", "cut", "light", "heavy", "non"], clough_rows))
    if json_path:
        json_path.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
