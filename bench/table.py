"""The 2015 seed's comparison: grouping row fingerprints with the pigeonhole block index
against single-pass clustering, at growing row counts (synthetic rows).

Rows are made of random name, address, city and phone values; 20% of them are
entered again with a changed field. Each row gets the seed's row SimHash (short
fields as whole values, weight 2 for name and address). Then, on the same
fingerprints:

* block index: all pairs within Hamming distance 3 through the k+1 blocks
  (``fingerprints.allpairs``), then groups by union-find;
* single pass: each row is compared with the representative of every cluster so far
  and joins the first within distance 3, or starts a new cluster (the seed's O(n^2)
  baseline, vectorized with NumPy so that only the algorithm differs).

    .venv/bin/python bench/table.py --rows 1000,10000,100000
    .venv/bin/python bench/table.py --rows 1000,10000 --full   # also dedup_rows end to end
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fingerprints.allpairs import all_pairs  # noqa: E402
from fingerprints.table import dedup_rows, parse_fields, prepare_row, row_fingerprint  # noqa: E402
from fingerprints.unionfind import UnionFind  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", default="1000,10000,100000")
    parser.add_argument("--full", action="store_true", help="also time dedup_rows")
    args = parser.parse_args()
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
