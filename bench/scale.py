"""The windowed index at scale: 10M+ articles in Redis, lookups, memory and the expiry
pass while ingest goes on.

    REDIS_URL=redis://127.0.0.1:6379/13 .venv/bin/python bench/scale.py [--articles 10000000]
    INDEX_REDIS_URL=redis+cluster://h:7000,h:7001,h:7002 .venv/bin/python bench/scale.py ...

Synthetic features (random 64-bit content and title fingerprints, 4 random 32-bit keys
and a URL hash per article; ids in arrival order) are loaded into the real index
classes (``RedisBlockIndex`` x2, ``RedisKeyIndex``, the URL map), as ``rebuild_index``
loads them. The window holds ``--days`` days (default 30) of ``--articles`` articles;
then one day leaves it (the floor moves by articles/days) and the expiry pass
(``articles.index.window.expire``'s steps, ``INDEX_EXPIRY_KEYS_PER_TICK`` keys per
namespace a step) runs to the end while an ingest thread keeps adding and looking up
articles. Printed: bytes per article, the lookup a worker makes per article (content
fingerprint + 28 probes, title, 16 keys and the URL: one pipeline) p50/p99 before and
during expiry, the expiry pass's time and how much it freed. Only the ``bench:scale``
keys are touched. Baseline: the same lookups with the window off (floor 0) in the same
run. With ``INDEX_REDIS_URL`` naming a Redis Cluster the same runs there (memory summed
over the primaries).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fingerprints.rule.keys import STORED_KEYS
from fingerprints.stores.block_index import RedisBlockIndex  # noqa: E402
from fingerprints.stores.key_index import RECORD_DTYPE, RedisKeyIndex  # noqa: E402
from fingerprints.stores.url_map import RedisUrlMap  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table  # noqa: E402

NS = "bench:scale"


class Indexes:
    def __init__(self, client: Any) -> None:
        self.client = client
        self.content = RedisBlockIndex(client, 3, namespace=f"{NS}:c")
        self.title = RedisBlockIndex(client, 3, namespace=f"{NS}:t")
        self.keys = RedisKeyIndex(client, namespace=f"{NS}:x")
        self.urls = RedisUrlMap(client, namespace=f"{NS}:u")

    def set_floor(self, floor: int) -> None:
        self.content.floor = self.title.floor = self.keys.floor = self.urls.floor = floor

    def clear(self) -> None:
        for key in list(self.client.scan_iter(match=f"{NS}:*", count=10_000)):
            self.client.unlink(key)


def memory(client: Any) -> int:
    if hasattr(client, "get_primaries"):  # a cluster: every primary's
        return sum(int(client.get_redis_connection(node).info("memory")["used_memory"])
                   for node in client.get_primaries())
    return int(client.info("memory")["used_memory"])


def load(ix: Indexes, n: int, rng: np.random.Generator, chunk: int = 1_000_000) -> None:
    for lo in range(1, n + 1, chunk):
        hi = min(n + 1, lo + chunk)
        ids = np.arange(lo, hi)
        ix.content.bulk_load(ids, rng.integers(0, 2**64, size=len(ids), dtype=np.uint64))
        ix.title.bulk_load(ids, rng.integers(0, 2**64, size=len(ids), dtype=np.uint64))
        records = np.empty(len(ids) * STORED_KEYS, dtype=RECORD_DTYPE)
        records["key"] = rng.integers(0, 2**32, size=len(records), dtype=np.uint32)
        records["id"] = np.repeat(ids.astype(np.uint32), STORED_KEYS)
        ix.keys.load_records(records)
        ix.urls.bulk_load(ids, rng.integers(1, 2**64, size=len(ids), dtype=np.uint64))
        print(f"  loaded {hi - 1:,}", file=sys.stderr, flush=True)


def lookup(ix: Indexes, rng: np.random.Generator) -> float:
    """One article's lookups as a worker pipelines them; seconds."""
    fp = int(rng.integers(0, 2**64, dtype=np.uint64))
    group = [fp] + [fp ^ (1 << int(b)) for b in rng.choice(64, size=28, replace=False)]
    start = time.perf_counter()
    pipe = ix.client.pipeline(transaction=False)
    u = ix.urls.plan([int(rng.integers(1, 2**64, dtype=np.uint64))])
    u.queue(pipe)
    c = ix.content.plan_probes([group], 8)
    t = ix.title.plan_many([int(rng.integers(0, 2**64, dtype=np.uint64))], 8)
    k = ix.keys.plan([rng.integers(0, 2**32, size=16, dtype=np.uint32).tolist()])
    c.queue(pipe)
    t.queue(pipe)
    k.queue(pipe)
    replies = iter(pipe.execute())
    u.collect(replies)
    c.collect(replies)
    t.collect(replies)
    k.collect(replies)
    return time.perf_counter() - start


def percentiles(samples: list[float]) -> tuple[float, float]:
    p50, p99 = np.percentile(np.array(samples) * 1e3, [50, 99])
    return float(p50), float(p99)


def expire_all(ix: Indexes, floor: int, step_keys: int) -> tuple[float, int, int]:
    """A whole expiry pass; (seconds, records dropped, steps)."""
    start = time.perf_counter()
    dropped = steps = 0
    for index in (ix.content, ix.title, ix.keys, ix.urls):
        cursor = 0
        while True:
            cursor, n = index.expire_step(cursor, floor, step_keys)
            dropped += n
            steps += 1
            if cursor == 0:
                break
    return time.perf_counter() - start, dropped, steps


def main() -> int:
    import redis

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--articles", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--lookups", type=int, default=5_000)
    parser.add_argument("--step-keys", type=int, default=5_000)
    args = parser.parse_args()
    url = os.environ.get("INDEX_REDIS_URL") or os.environ.get("REDIS_URL",
                                                               "redis://127.0.0.1:6379/13")
    client: Any
    if url.startswith("redis+cluster://"):
        from redis.cluster import ClusterNode, RedisCluster

        nodes = [part.rsplit(":", 1) for part in url.removeprefix("redis+cluster://").split(",")]
        client = RedisCluster(startup_nodes=[ClusterNode(h, int(p)) for h, p in nodes])
    else:
        client = redis.Redis.from_url(url)
    client.ping()
    rng = np.random.default_rng(11)
    ix = Indexes(client)
    ix.clear()
    before = memory(client)
    t = time.perf_counter()
    load(ix, args.articles, rng)
    load_s = time.perf_counter() - t
    per_article = (memory(client) - before) / args.articles
    rows: list[list[object]] = []
    for _ in range(500):
        lookup(ix, rng)
    off = percentiles([lookup(ix, rng) for _ in range(args.lookups)])
    day = args.articles // args.days
    ix.set_floor(day + 1)
    on = percentiles([lookup(ix, rng) for _ in range(args.lookups)])
    # the expiry pass, with an ingest thread adding and looking up articles meanwhile
    during: list[float] = []
    stop = threading.Event()
    added = [0]

    def ingest() -> None:
        local = np.random.default_rng(12)
        next_id = args.articles + 1
        while not stop.is_set():
            during.append(lookup(ix, local))
            ix.content.add(next_id, int(local.integers(0, 2**64, dtype=np.uint64)))
            ix.title.add(next_id, int(local.integers(0, 2**64, dtype=np.uint64)))
            ix.keys.add_many([(next_id, local.integers(0, 2**32, size=STORED_KEYS,
                                                       dtype=np.uint32).tolist())])
            ix.urls.add_many([(next_id, int(local.integers(1, 2**64, dtype=np.uint64)))])
            next_id += 1
            added[0] += 1

    thread = threading.Thread(target=ingest)
    thread.start()
    mem_before = memory(client)
    seconds, dropped, steps = expire_all(ix, day + 1, args.step_keys)
    stop.set()
    thread.join()
    freed = (mem_before - memory(client)) / day
    during_p = percentiles(during)
    rows.append([f"{args.articles:,}", args.days, f"{per_article:.0f}", f"{load_s:.0f}",
                 f"{off[0]:.3f} / {off[1]:.3f}", f"{on[0]:.3f} / {on[1]:.3f}",
                 f"{during_p[0]:.3f} / {during_p[1]:.3f}", f"{seconds:.0f}", steps,
                 f"{dropped:,}", f"{freed:.0f}", f"{added[0]:,}"])
    print(table(["articles in window", "days", "bytes/article", "load s",
                 "lookup p50 / p99 ms, window off (baseline)", "lookup p50 / p99 ms, window on",
                 "lookup p50 / p99 ms during expiry", "expiry pass s", "expiry steps",
                 "records dropped", "bytes freed per expired article",
                 "articles added during expiry"], rows))
    ix.clear()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
