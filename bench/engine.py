"""Speed of the engine: throughput, Redis index lookups and memory, all-pairs.

    .venv/bin/python bench/engine.py [--sizes 1000000,10000000] [--skip-redis]

1. Throughput on one core (the process is pinned to one CPU) over the Xinhua corpus:
   the engine (``extract_many``; ``extract`` one by one; the whole online cascade with
   index lookups and verification), datasketch MinHash-LSH (128 permutations, character
   5-grams, insert + query) and the ``simhash`` package with jieba words, in the same
   run. Wall-clock and CPU docs/s; the ratio to MinHash-LSH.
2. Redis: a RedisBlockIndex (k=3) loaded with N random fingerprints; p50/p99 of
   ``query`` (one MGET round trip + decoding), memory per article from INFO; p50/p99 of
   a multi-probe lookup (``query_probes`` of the fingerprint and 28 probes, one pipeline).
   REDIS_URL (default redis://127.0.0.1:6379/13); only the bench namespace is touched.
3. All pairs within k=3 among 1M random fingerprints, in memory.
Exits non-zero when the corpora are missing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from common import char_shingles, load_docs, require_data, run_engine, table  # noqa: E402

from fingerprints.allpairs import all_pairs  # noqa: E402
from fingerprints.engine import EngineConfig, extract, extract_many  # noqa: E402
from fingerprints.index import RedisBlockIndex  # noqa: E402


def pin_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        cpu = sorted(os.sched_getaffinity(0))[-1]
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned"


def measure(fn: Callable[[], object], repeat: int = 3) -> tuple[float, float]:
    """Best (wall seconds, CPU seconds) of ``repeat`` runs."""
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall, best_cpu


def throughput(limit: int | None) -> list[list[object]]:
    docs = load_docs("xinhua", limit)
    items = [(d.title, d.content) for d in docs]
    n = len(items)
    extract_many(items[:500])  # load dictionaries and IDF table, warm the vocabulary

    def minhash_lsh() -> None:
        from datasketch import MinHash, MinHashLSH

        lsh = MinHashLSH(threshold=0.8, num_perm=128)
        for i, doc in enumerate(docs):
            mh = MinHash(num_perm=128)
            mh.update_batch([s.encode("utf-8") for s in char_shingles(doc.text)])
            lsh.query(mh)
            lsh.insert(str(i), mh)

    def simhash_jieba() -> None:
        import logging

        import jieba
        from simhash import Simhash, SimhashIndex

        jieba.setLogLevel(60)
        quiet = logging.getLogger("bench.simhash")
        quiet.setLevel(logging.ERROR)
        index = SimhashIndex([], k=3, log=quiet)
        for i, doc in enumerate(docs):
            fp = Simhash([w for w in jieba.cut(doc.text) if w.strip()])
            index.get_near_dups(fp)
            index.add(str(i), fp)

    import jieba

    jieba.setLogLevel(60)
    jieba.initialize()
    cases: list[tuple[str, Callable[[], object], int]] = [
        ("engine: extract_many (batch)", lambda: extract_many(items), 3),
        ("engine: extract one by one", lambda: [extract(t, c) for t, c in items], 2),
        ("engine: full online cascade", lambda: run_engine(docs, EngineConfig()), 1),
        ("MinHash-LSH (datasketch)", minhash_lsh, 1),
        ("simhash + jieba", simhash_jieba, 1),
    ]
    results = {}
    for name, fn, repeat in cases:
        results[name] = measure(fn, repeat)
        print(f"  {name}: {n / results[name][0]:,.0f} docs/s", file=sys.stderr, flush=True)
    lsh_wall, lsh_cpu = results["MinHash-LSH (datasketch)"]
    rows: list[list[object]] = []
    for name, (wall, cpu) in results.items():
        rows.append([
            name, f"{n / wall:,.0f}", f"{n / cpu:,.0f}", f"{lsh_wall / wall:.1f}x",
            f"{1e6 * cpu / n:.0f}",
        ])
    return rows


def redis_figures(url: str, sizes: list[int], queries: int = 20_000) -> list[list[object]]:
    import redis

    client = redis.Redis.from_url(url)
    client.ping()
    rows: list[list[object]] = []
    rng = np.random.default_rng(42)
    for size in sizes:
        index = RedisBlockIndex(client, 3, namespace="bench:dd")
        index.clear()
        before = int(client.info("memory")["used_memory"])
        fps = rng.integers(0, 2**64 - 1, size=size, dtype=np.uint64, endpoint=True)
        start = time.perf_counter()
        for lo in range(0, size, 1_000_000):
            index.bulk_load(np.arange(lo, min(size, lo + 1_000_000)), fps[lo : lo + 1_000_000])
        load_seconds = time.perf_counter() - start
        after = int(client.info("memory")["used_memory"])
        # queries: stored fingerprints with 0-3 bits flipped (hits) and random ones
        picks = rng.integers(0, size, size=queries)
        probes = fps[picks].copy()
        for q in range(queries):
            for bit in rng.choice(64, size=int(rng.integers(0, 4)), replace=False):
                probes[q] ^= np.uint64(1) << np.uint64(int(bit))
        probes[queries // 2 :] = rng.integers(0, 2**64 - 1, size=queries - queries // 2,
                                              dtype=np.uint64, endpoint=True)
        for fp in probes[:500].tolist():
            index.query(fp, 8)
        stats_before = client.info("commandstats").get("cmdstat_mget", {})
        latencies = np.empty(queries)
        hits = 0
        for q, fp in enumerate(probes.tolist()):
            t = time.perf_counter()
            found = index.query(fp, 8)
            latencies[q] = time.perf_counter() - t
            hits += bool(found)
        stats_after = client.info("commandstats").get("cmdstat_mget", {})
        # Multi-probe lookups as the workers run them: the fingerprint and its 28 probes
        # (3 weak bits per 16-bit block, every non-empty subset; random positions here)
        # through query_probes (each distinct bucket fetched once, one pipeline).
        probe_latencies = np.empty(min(queries, 5_000))
        for q, fp in enumerate(probes[: len(probe_latencies)].tolist()):
            fps_q = [fp]
            for block in range(4):
                bits = rng.choice(16, size=3, replace=False) + 16 * block
                for mask in range(1, 8):
                    flip = sum(1 << int(b) for j, b in enumerate(bits) if mask >> j & 1)
                    fps_q.append(fp ^ flip)
            t = time.perf_counter()
            index.query_probes([fps_q], 8)
            probe_latencies[q] = time.perf_counter() - t
        probe_p50, probe_p99 = np.percentile(probe_latencies, [50, 99]) * 1e3
        calls = stats_after.get("calls", 0) - stats_before.get("calls", 0)
        usec = stats_after.get("usec", 0) - stats_before.get("usec", 0)
        server_us = usec / calls if calls else float("nan")
        p50, p99 = np.percentile(latencies, [50, 99]) * 1e3
        rows.append([
            f"{size:,}", f"{p50:.3f}", f"{p99:.3f}", f"{server_us:.1f}",
            f"{(after - before) / size:.0f}", f"{load_seconds:.1f}", f"{hits}/{queries}",
            f"{probe_p50:.3f}", f"{probe_p99:.3f}",
        ])
        print(f"  redis {size:,}: p50 {p50:.3f} ms p99 {p99:.3f} ms", file=sys.stderr, flush=True)
        index.clear()
    return rows


def allpairs_figures(size: int = 1_000_000) -> list[list[object]]:
    rng = np.random.default_rng(7)
    fps = rng.integers(0, 2**64 - 1, size=size, dtype=np.uint64, endpoint=True)
    # plant 1,000 near pairs so that the answer is not trivially empty
    flips = rng.integers(0, 64, size=(1000, 3))
    for i in range(1000):
        fp = int(fps[2 * i])
        for bit in flips[i]:
            fp ^= 1 << int(bit)
        fps[2 * i + 1] = fp
    all_pairs(fps[:10_000], 3)
    pairs = np.zeros((0, 2))

    def run() -> None:
        nonlocal pairs
        pairs = all_pairs(fps, 3)

    wall, cpu = measure(run, 3)
    return [[f"{size:,}", 3, f"{wall:.2f}", f"{cpu:.2f}", len(pairs)]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--skip-redis", action="store_true")
    parser.add_argument("--limit", type=int, help="first N Xinhua articles only")
    args = parser.parse_args()
    require_data()
    print(pin_one_core(), file=sys.stderr)
    print("Throughput, Xinhua (5,141 articles), one core")
    print(table(["method", "docs/s (wall)", "docs/s (CPU)", "vs MinHash-LSH", "µs CPU/doc"],
                throughput(args.limit)))
    print()
    print("All pairs within Hamming distance 3, random 64-bit fingerprints, in memory")
    print(table(["fingerprints", "k", "s (wall)", "s (CPU)", "pairs found"], allpairs_figures()))
    print()
    if not args.skip_redis:
        url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/13")
        sizes = [int(s) for s in args.sizes.split(",") if s]
        print(f"Redis block index (k=3, max_distance 8), random fingerprints, {url}")
        print(table(["fingerprints", "p50 ms", "p99 ms", "Redis µs/MGET", "bytes/article",
                     "load s", "hits", "+28 probes p50 ms", "+28 probes p99 ms"],
                    redis_figures(url, sizes)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
