"""Speed of the engine: throughput, Redis index lookups and memory, all-pairs.

    .venv/bin/python bench/engine.py [--corpus xinhua --corpus bdci] [--sizes 1000000,10000000]
                                     [--rounds 3] [--engine-at REV] [--only batch]
                                     [--skip-throughput]
                                     [--skip-redis] [--skip-allpairs]

1. Throughput on one core (pinned to one CPU), Xinhua and the crawled corpus (bdci),
   each method in a fresh process: its first pass over the corpus (cold: text the
   process has never seen, what production sees) and a second pass over the same
   texts (warm), reported separately. Methods: the engine's features alone
   (``extract_many``), the same with rjieba cutting (``DEDUP_C_SEGMENTER=0``: the
   engine's segmenter before the C segmenter, now its fallback), the engine's segmentation of the
   normalized titles and bodies alone (the C segmenter: the part of the features no rule
   change can remove), rjieba's segmentation of the same texts, the engine's full online
   rule
   (features + content, title and key index lookups + ``decide``, boilerplate learned
   as it goes: ``common.run_engine``) with the default match model and with the rule
   walk's (``labels-1``: ``online-labels``),
   rensa MinHash-LSH (128 permutations, 16 bands, character 5-grams, query + insert,
   Python shingling included: the baseline of the ratios), datasketch MinHash-LSH and
   the ``simhash`` package with jieba words, and the local batch command
   (``manage.py spark_dedup --engine local --workers 1`` over JSON lines of the same
   texts: cold is the whole process less the whole process over the first 20 articles,
   so start-up, imports and dictionaries are taken off; warm a second call of the command
   in one process; a scratch SQLite database), with a line of its CPU per article against
   the full online rule's. ``--only CASE``: those rows and the ones the ratios need.
   CPU docs/s (wall for the cold pass too).
   ``--rounds N``: every row N times, the methods taking turns (a slow minute of the
   shared machine then falls on all of them); medians, and each ratio's range.
   ``--engine-at REV`` (repeatable): a row each, the full online rule as it was at an
   older commit (its own tree and kernel in a temporary git worktree, timed the same way
   in a fresh process: bench/older_engine.py), and a line with the current rule's cold
   speed-up over it (the median of the rounds' ratios). Every row also has its cold and
   warm ratios to rjieba's segmentation alone (the speed yardstick: the full online rule
   within 2x of it, 0.5x).
2. Redis: a RedisBlockIndex (k=3) loaded with N random fingerprints; p50/p99 of
   ``query`` (one MGET round trip + decoding), memory per article from INFO; p50/p99 of
   a multi-probe lookup (``query_probes`` of the fingerprint and 28 probes, one
   pipeline); a RedisKeyIndex with 4 random keys per article: bytes per article and the
   p99 of a 16-key lookup; the canonical-URL map's bytes per article. An article is in
   the content and the title block index (same layout, so the block figure counts twice),
   the key index and the URL map. REDIS_URL (default redis://127.0.0.1:6379/13); only the
   bench namespaces are touched.
3. All pairs within k=3 among 1M random fingerprints, in memory.
Exits non-zero when the corpora are missing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from common import Doc, load_docs, require_data, run_engine, table  # noqa: E402
from older_engine import OlderEngine, exit_on_sigterm  # noqa: E402

from fingerprints.rule import EngineConfig, extract_many  # noqa: E402
from fingerprints.rule.keys import STORED_KEYS
from fingerprints.rule.match_model import starting_model  # noqa: E402
from fingerprints.rule.normalize import normalize  # noqa: E402
from fingerprints.rule.tokenize import get_segmenter  # noqa: E402
from fingerprints.stores.block_index import RedisBlockIndex  # noqa: E402
from fingerprints.stores.key_index import RECORD_DTYPE, RedisKeyIndex
from fingerprints.stores.url_map import RedisUrlMap  # noqa: E402
from fingerprints.table.allpairs import all_pairs  # noqa: E402


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


# Each row runs in a fresh process: the first pass over a corpus is what production sees
# (text the process has never met); the second pass over the same texts is the warm one.
# Before timing, each method loads what a worker loads at start-up (jieba's dictionary,
# the IDF table and the C kernel for the engine; the library for the others) on one
# made-up sentence, never on the corpus.
CASES = {
    "engine: features (extract_many)": "features",
    "engine: features, rjieba (DEDUP_C_SEGMENTER=0)": "features-rjieba",
    "engine: full online rule": "online",
    "engine: full online rule, the rule walk's model (labels-1)": "online-labels",
    "  of which segmentation alone (C segmenter)": "segment",
    "rjieba segmentation alone (DEDUP_C_SEGMENTER=0)": "segment-rjieba",
    "local batch command (spark_dedup --engine local --workers 1)": "batch",
    "rensa MinHash-LSH": "rensa",
    "datasketch MinHash-LSH": "datasketch",
    "simhash + jieba": "simhash",
}
BASELINE = "rensa MinHash-LSH"
# the speed yardstick: the full online rule against segmentation alone with rjieba
SEGMENTATION = "rjieba segmentation alone (DEDUP_C_SEGMENTER=0)"
ONLINE = "engine: full online rule"
BATCH = "local batch command (spark_dedup --engine local --workers 1)"
# the rows every run needs: the ratios' baselines and the rule the batch command is held to
NEEDED = ("online", "segment-rjieba", "rensa")
ROOT = Path(__file__).resolve().parent.parent


def batch_command(docs: Sequence[Doc]) -> dict[str, float]:
    """Cold and warm (wall, CPU) seconds of ``manage.py spark_dedup --engine local
    --workers 1`` over ``docs`` (JSON lines of nid, title and content: the texts the
    rule gets). Cold is the whole process less the whole process over the first 20
    articles (start-up, imports, dictionaries and the database taken off), each a child
    of this pinned process; warm is a second call of the command in one process over the
    same file, timed inside it. A scratch SQLite database (migrated, untimed): the
    active configuration and boilerplate of an empty database."""
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as scratch:
        folder = Path(scratch)
        env = {**os.environ, "DEDUPSITE_VAR_DIR": str(folder),
               "DJANGO_SETTINGS_MODULE": "dedupsite.settings"}
        subprocess.run([sys.executable, str(ROOT / "manage.py"), "migrate", "-v0"],
                       env=env, check=True, capture_output=True)
        for name, chosen in (("all", docs), ("twenty", docs[:20])):
            with (folder / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
                for doc in chosen:
                    handle.write(json.dumps({"nid": doc.id, "title": doc.title,
                                             "content": doc.content}, ensure_ascii=False)
                                 + "\n")

        def whole(name: str) -> tuple[float, float]:
            command = [sys.executable, str(ROOT / "manage.py"), "spark_dedup", "--engine",
                       "local", "--workers", "1", "--input", str(folder / f"{name}.jsonl"),
                       "--output", str(folder / f"out-{name}")]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall = time.perf_counter()
            subprocess.run(command, env=env, check=True, capture_output=True, cwd=ROOT)
            wall = time.perf_counter() - wall
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

        all_wall, all_cpu = whole("all")
        twenty_wall, twenty_cpu = whole("twenty")
        second = subprocess.run(
            [sys.executable, "-c", _SECOND_PASS, str(folder / "all.jsonl"), str(folder / "out")],
            env=env, check=True, capture_output=True, text=True, cwd=ROOT)
        warm = json.loads(second.stdout.strip().splitlines()[-1])
    n = len(docs) - 20  # the articles the difference of the two processes is the cost of
    return {"n": n, "cold_wall": all_wall - twenty_wall, "cold_cpu": all_cpu - twenty_cpu,
            "warm_wall": warm["wall"] * n / len(docs), "warm_cpu": warm["cpu"] * n / len(docs)}


# the command twice in one process; prints the second call's wall and CPU seconds
_SECOND_PASS = """
import json, sys, time
import django
django.setup()
from django.core.management import call_command
def once():
    call_command("spark_dedup", engine="local", workers=1, input=sys.argv[1],
                 output=sys.argv[2], stdout=open("/dev/null", "w"))
once()
wall, cpu = time.perf_counter(), time.process_time()
once()
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}))
"""


def one_case(case: str, corpus: str) -> dict[str, float]:
    """Cold and warm (wall, CPU) seconds of one method over one corpus, in this process
    (``online@REV``: an older commit's online rule, timed the same way in a child of
    this process: bench/older_engine.py)."""
    from accuracy import run_minhash_lsh, run_plain_simhash, run_rensa_lsh

    docs = load_docs(corpus)
    if case == "batch":
        return batch_command(docs)
    if case.startswith("online@"):
        exit_on_sigterm()
        with OlderEngine(case.removeprefix("online@")) as older:
            return older.timed(docs)
    items = [(d.title, d.content) for d in docs]
    rjieba_row = case.endswith("-rjieba")
    if rjieba_row:  # before the process makes its first segmenter
        os.environ["DEDUP_C_SEGMENTER"] = "0"
        case = case.removesuffix("-rjieba")
    segmenter = get_segmenter(EngineConfig().segmenter)
    if segmenter.uses_c == rjieba_row:  # the row would time another segmenter than it names
        raise RuntimeError(f"the segmenter cuts with {'C' if segmenter.uses_c else 'rjieba'} "
                           "(build the C segmenter: setup.py build_ext --inplace)")

    def segment(pairs: list[tuple[str, str]]) -> None:
        # what extract_many cuts: the normalized title and body (normalizing untimed)
        for title, body in pairs:
            segmenter.cut(title)
            segmenter.cut(body)

    normalized = [(normalize(title), normalize(content)) for title, content in items]
    runs: dict[str, Callable[[], object]] = {
        "segment": lambda: segment(normalized),
        "features": lambda: extract_many(items),
        "online": lambda: run_engine(docs, EngineConfig()),
        "online-labels": lambda: run_engine(docs, EngineConfig(model=starting_model())),
        "rensa": lambda: run_rensa_lsh(docs),
        "datasketch": lambda: run_minhash_lsh(docs),
        "simhash": lambda: run_plain_simhash(docs),
    }
    warm_up = [Doc("w", "预热", "预热用的一句话，不在任何语料里。")]
    {"segment": lambda: segment([(warm_up[0].title, warm_up[0].content)]),
     "features": lambda: extract_many([(warm_up[0].title, warm_up[0].content)]),
     "online": lambda: run_engine(warm_up, EngineConfig()),
     "online-labels": lambda: run_engine(warm_up, EngineConfig(model=starting_model())),
     "rensa": lambda: run_rensa_lsh(warm_up),
     "datasketch": lambda: run_minhash_lsh(warm_up),
     "simhash": lambda: run_plain_simhash(warm_up)}[case]()
    cold = measure(runs[case], 1)
    warm = measure(runs[case], 1)
    return {"n": len(docs), "cold_wall": cold[0], "cold_cpu": cold[1],
            "warm_wall": warm[0], "warm_cpu": warm[1]}


def throughput(corpora: list[str], rounds: int = 1, engine_at: Sequence[str] = (),
               notes: list[str] | None = None, only: Sequence[str] = ()
               ) -> list[list[object]]:
    """Each method over each corpus in a fresh process, ``rounds`` times, the methods
    taking turns (every method once, then every method again...), so that a slow
    minute of the shared machine falls on every method alike. A figure is the median of
    the rounds; a ratio is the median of the rounds' ratios, with their range. ``notes``
    receives a line per corpus and ``engine_at`` commit: the full online rule's cold
    speed-up over that commit's, round by round, and the batch command's cost per
    article against the full online rule's. ``only``: these cases and the ones the
    ratios need (``NEEDED``), not every method."""
    chosen = {name: case for name, case in CASES.items()
              if not only or case in only or case in NEEDED}
    cases = chosen | {f"engine@{rev}: full online rule": f"online@{rev}"
                           for rev in engine_at}
    rows: list[list[object]] = []
    for corpus in corpora:
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in cases}
        for _ in range(rounds):
            for name, case in cases.items():
                out = subprocess.run(
                    [sys.executable, __file__, "--one-case", case, "--corpus", corpus],
                    check=False, capture_output=True, text=True)
                if out.returncode != 0:
                    raise RuntimeError(f"{name} on {corpus} failed:\n{out.stderr}")
                f = json.loads(out.stdout)
                runs[name].append(f)
                print(f"  {corpus} {name}: cold {f['n'] / f['cold_cpu']:,.0f} docs/s, "
                      f"warm {f['n'] / f['warm_cpu']:,.0f}", file=sys.stderr, flush=True)
        base = runs[BASELINE]
        for name, found in runs.items():
            n = found[0]["n"]
            rows.append([
                corpus, name, f"{n / _median(found, 'cold_wall'):,.0f}",
                f"{n / _median(found, 'cold_cpu'):,.0f}", _ratio(base, found, "cold_cpu"),
                _ratio(runs[SEGMENTATION], found, "cold_cpu"),
                f"{n / _median(found, 'warm_cpu'):,.0f}", _ratio(base, found, "warm_cpu"),
                _ratio(runs[SEGMENTATION], found, "warm_cpu"),
                f"{1e6 * _median(found, 'cold_cpu') / n:.0f}",
            ])
        if BATCH in runs and notes is not None:
            # cost against the rule's: seconds per article of the batch command / the rule's
            notes.append(f"{corpus}: the local batch command's CPU per article against the "
                         f"full online rule's: cold {_ratio(runs[BATCH], runs[ONLINE], 'cold_cpu')}"
                         f", warm {_ratio(runs[BATCH], runs[ONLINE], 'warm_cpu')} (the "
                         "issue's bound: 1.25x)")
        for rev in engine_at:
            if notes is not None:
                older = runs[f"engine@{rev}: full online rule"]
                notes.append(f"{corpus}: full online rule against engine@{rev}'s, cold CPU: "
                             f"{_ratio(older, runs[ONLINE], 'cold_cpu')}")
    return rows


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return number


def _median(found: list[dict[str, float]], key: str) -> float:
    return float(np.median([f[key] for f in found]))


def _ratio(base: list[dict[str, float]], found: list[dict[str, float]], key: str) -> str:
    """The median of the rounds' ratios (baseline seconds / these seconds), and their
    range when there is more than one round."""
    each = [b[key] / f[key] for b, f in zip(base, found, strict=True)]
    spread = f" ({min(each):.2f}-{max(each):.2f})" if len(each) > 1 else ""
    return f"{np.median(each):.2f}x{spread}"


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
        key_bytes, key_p99 = key_index_figures(client, size, rng)
        url_bytes = url_map_figures(client, size, rng)
        calls = stats_after.get("calls", 0) - stats_before.get("calls", 0)
        usec = stats_after.get("usec", 0) - stats_before.get("usec", 0)
        server_us = usec / calls if calls else float("nan")
        p50, p99 = np.percentile(latencies, [50, 99]) * 1e3
        rows.append([
            f"{size:,}", f"{p50:.3f}", f"{p99:.3f}", f"{server_us:.1f}",
            f"{(after - before) / size:.0f}", f"{load_seconds:.1f}", f"{hits}/{queries}",
            f"{probe_p50:.3f}", f"{probe_p99:.3f}", f"{key_bytes:.0f}", f"{key_p99:.3f}",
            f"{url_bytes:.0f}", f"{2 * (after - before) / size + key_bytes + url_bytes:.0f}",
        ])
        print(f"  redis {size:,}: p50 {p50:.3f} ms p99 {p99:.3f} ms", file=sys.stderr, flush=True)
        index.clear()
    return rows


def key_index_figures(client: Any, size: int, rng: np.random.Generator,
                      queries: int = 5_000) -> tuple[float, float]:
    """Bytes per article of a key index holding ``size`` articles (STORED_KEYS random
    32-bit keys each), and p99 ms of one article's 16-key lookup (one pipeline)."""
    index = RedisKeyIndex(client, namespace="bench:kx")
    index.clear()
    before = int(client.info("memory")["used_memory"])
    for lo in range(0, size, 1_000_000):
        hi = min(size, lo + 1_000_000)
        records = np.empty((hi - lo) * STORED_KEYS, dtype=RECORD_DTYPE)
        records["key"] = rng.integers(0, 2**32, size=len(records), dtype=np.uint32)
        records["id"] = np.repeat(np.arange(lo, hi, dtype=np.uint32), STORED_KEYS)
        index.load_records(records)
    after = int(client.info("memory")["used_memory"])
    groups = rng.integers(0, 2**32, size=(queries, 16), dtype=np.uint32).tolist()
    latencies = np.empty(queries)
    for q, keys in enumerate(groups):
        t = time.perf_counter()
        index.query_many([keys])
        latencies[q] = time.perf_counter() - t
    index.clear()
    return (after - before) / size, float(np.percentile(latencies, 99) * 1e3)


def url_map_figures(client: Any, size: int, rng: np.random.Generator) -> float:
    """Bytes per article of the canonical-URL map (``fingerprints.stores.url_map``: a 12-byte
    record per URL in buckets, as ``rebuild_index`` loads it)."""
    urls = RedisUrlMap(client, namespace="bench:url")
    urls.clear()
    before = int(client.info("memory")["used_memory"])
    for lo in range(0, size, 1_000_000):
        hi = min(size, lo + 1_000_000)
        urls.bulk_load(np.arange(lo, hi), rng.integers(1, 2**64, size=hi - lo,
                                                       dtype=np.uint64))
    after = int(client.info("memory")["used_memory"])
    urls.clear()
    return (after - before) / size


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
    parser.add_argument("--corpus", action="append", choices=["xinhua", "bdci"])
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--rounds", type=_positive, default=1,
                        help="run every throughput row this many times, the methods taking "
                             "turns; report medians (and the ratios' range)")
    parser.add_argument("--skip-redis", action="store_true")
    parser.add_argument("--skip-allpairs", action="store_true")
    parser.add_argument("--engine-at", action="append", default=[], metavar="REV",
                        help="also time the full online rule as it was at this commit "
                             "(bench/older_engine.py)")
    parser.add_argument("--only", action="append", default=[],
                        choices=sorted(CASES.values()),
                        help="time only this method (repeatable), with the rows the ratios "
                             "need: the online rule, rjieba segmentation alone and rensa")
    parser.add_argument("--one-case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_case and not (args.one_case in CASES.values()
                              or args.one_case.startswith("online@")):
        parser.error(f"unknown case {args.one_case}")
    require_data()
    pin = pin_one_core()
    if args.one_case:
        print(json.dumps(one_case(args.one_case, (args.corpus or ["xinhua"])[0])))
        return 0
    print(pin, file=sys.stderr)
    corpora = args.corpus or ["xinhua", "bdci"]
    if not args.skip_throughput:
        print("Throughput, one core, a fresh process per row: cold = its first pass over the "
              "corpus, warm = a second pass over the same texts (docs/s from CPU time unless "
              f"marked wall); {args.rounds} round(s), the methods taking turns, medians")
        notes: list[str] = []
        print(table(["corpus", "method", "cold docs/s (wall)", "cold docs/s",
                     f"cold vs {BASELINE}", "cold vs rjieba segmentation alone",
                     "warm docs/s", f"warm vs {BASELINE}", "warm vs rjieba segmentation alone",
                     "cold µs CPU/doc"],
                    throughput(corpora, args.rounds, args.engine_at, notes, args.only)))
        print()
        for note in notes:
            print(f"* {note}")
        if notes:
            print()
    if not args.skip_allpairs:
        print("All pairs within Hamming distance 3, random 64-bit fingerprints, in memory")
        print(table(["fingerprints", "k", "s (wall)", "s (CPU)", "pairs found"],
                    allpairs_figures()))
        print()
    if not args.skip_redis:
        url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/13")
        sizes = [int(s) for s in args.sizes.split(",") if s]
        print(f"Redis: block index (k=3, max_distance 8) and key index ({STORED_KEYS} keys "
              f"an article), random fingerprints and keys, {url}")
        print(table(["articles", "p50 ms", "p99 ms", "Redis µs/MGET", "block bytes/article",
                     "load s", "hits", "+28 probes p50 ms", "+28 probes p99 ms",
                     "key bytes/article", "16-key lookup p99 ms", "URL map bytes/article",
                     "all indexes bytes/article (2 x block + key + URL)"],
                    redis_figures(url, sizes)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
