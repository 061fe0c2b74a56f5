"""End-to-end ingest benchmark: HTTP -> gunicorn (2 workers) -> MySQL -> RQ (2 workers) -> docId.

    .venv/bin/python bench/ingest.py [--batch 200] [--limit N] [--singles 300]
    .venv/bin/python bench/ingest.py --webhook-cost [--limit N]

Posts the Xinhua corpus (../shared/data/xinhua_uhgeval_zh/docs.jsonl) over
HTTP in batches to a production-style server and measures articles/s until
every article has its docId; then the latency of single-article `?wait=5`
posts. Uses DATABASE_URL / REDIS_URL when set (it empties both first: give it
throwaway ones), else starts throwaway MariaDB and Redis servers through
scripts/testenv.py. Baseline in the same run:
datasketch's MinHashLSH with its Redis storage (128 permutations, threshold
0.8, character 5-grams) inserting the same articles from one process, one per call
(so the ratio is labelled: not the same processes or batching), in the configured
Redis database under its own key prefix, which it deletes afterwards.

``--webhook-cost``: the batch phase twice on emptied stores, the same articles, servers
and workers, first without and then with a webhook (a receiver on loopback in this
process, answering 200 at once): articles/s end to end of each, their ratio, and when the
receiver held every change of the log.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "data" / "xinhua_uhgeval_zh" / "docs.jsonl"
PY = sys.executable


def load(limit: int | None) -> list[dict]:
    if not CORPUS.exists():
        raise SystemExit(f"missing corpus {CORPUS} (see ../shared/data/README.md)")
    rows = []
    with CORPUS.open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            if not doc.get("content", "").strip():
                continue
            rows.append({"nid": doc["id"], "url": f"https://xinhua.example/{doc['id']}",
                         "title": doc.get("title", ""), "content": doc["content"],
                         "hotness": len(doc["content"]) % 100})
            if limit and len(rows) >= limit:
                break
    return rows


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def manage(*args: str) -> str:
    return subprocess.run([PY, "manage.py", *args], cwd=ROOT, check=True, text=True,
                          capture_output=True).stdout


def wait_http(url: str) -> None:
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            requests.get(url, timeout=1)
            return
        except requests.RequestException:
            time.sleep(0.2)
    raise SystemExit(f"server at {url} did not start")


def datasketch_baseline(docs: list[dict], redis_url: str) -> float:
    from urllib.parse import urlsplit

    import redis
    from datasketch import MinHash, MinHashLSH

    parts = urlsplit(redis_url)
    db = int(parts.path.lstrip("/") or 0)  # the configured database, not one of our own
    basename = f"bench_baseline_{os.getpid()}".encode()
    lsh = MinHashLSH(threshold=0.8, num_perm=128, storage_config={
        "type": "redis", "basename": basename,
        "redis": {"host": parts.hostname, "port": parts.port or 6379, "db": db}})
    try:
        start = time.perf_counter()
        for doc in docs:
            text = doc["title"] + doc["content"]
            mh = MinHash(num_perm=128)
            mh.update_batch([text[i:i + 5].encode("utf-8")
                             for i in range(max(1, len(text) - 4))])
            lsh.query(mh)
            lsh.insert(doc["nid"], mh)
        return len(docs) / (time.perf_counter() - start)
    finally:
        client = redis.Redis.from_url(redis_url)
        for key in client.scan_iter(match=basename + b"*", count=1000):
            client.delete(key)


def _empty_stores() -> None:
    from articles.models import Article, Change, Doc, IndexState, RepresentativeOutbox, Webhook

    for model in (Article, Doc, RepresentativeOutbox, IndexState, Change, Webhook):
        model.objects.all().delete()
    import redis

    redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()


def _batch_phase(docs: list[dict], args: argparse.Namespace, base: str, key: str
                 ) -> tuple[float, float]:
    """Post every article in batches; (seconds until accepted, until every docId)."""
    from articles.models import Article

    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {key}"
    batches = [docs[i:i + args.batch] for i in range(0, len(docs), args.batch)]
    start = time.perf_counter()

    def post(batch: list[dict]) -> float:
        r = session.post(f"{base}/api/v1/articles", json={"articles": batch}, timeout=60)
        r.raise_for_status()
        return time.perf_counter()

    with ThreadPoolExecutor(args.clients) as pool:
        list(pool.map(post, batches))
    accepted = time.perf_counter() - start
    while Article.objects.queued().exists():
        time.sleep(0.2)
    return accepted, time.perf_counter() - start


def webhook_cost(docs: list[dict], args: argparse.Namespace) -> None:
    """The batch phase without, then with, a webhook (module docstring)."""
    from articles.downstream import webhooks
    from articles.models import Change
    from support.webhook_receiver import Receiver

    receiver = Receiver()
    rates: dict[bool, list[float]] = {False: [], True: []}
    for with_hook in (False, True, False, True):  # twice each, alternating
        _empty_stores()
        receiver.deliveries.clear()
        if with_hook:
            webhooks.create(receiver.url)
        key = manage("create_api_key", "bench", "--rate-limit", "0").strip().splitlines()[-1]
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        procs = _start(port)
        try:
            _accepted, total = _batch_phase(docs, args, base, key)
            rates[with_hook].append(len(docs) / total)
            line = f"{'with' if with_hook else 'without'} a webhook: {total:.1f} s = " \
                   f"{rates[with_hook][-1]:,.0f} articles/s end to end"
            if with_hook:
                logged = Change.objects.count()
                start = time.perf_counter()
                while receiver.received < logged and time.perf_counter() - start < 120:
                    time.sleep(0.2)
                line += (f"; the receiver held all {logged:,} changes "
                         f"{time.perf_counter() - start:.1f} s after the last docId "
                         f"({receiver.received:,} received)")
            print(line, flush=True)
        finally:
            _stop(procs)
    ratio = statistics.mean(rates[True]) / statistics.mean(rates[False])
    print(f"with/without: {ratio:.2f}x, the mean of two runs each, alternating (the same "
          f"{len(docs):,} articles, batches of {args.batch}, {args.clients} clients, "
          "gunicorn 2 workers, 2 RQ workers, fresh stores each run)")


def _start(port: int) -> list[subprocess.Popen]:
    procs = [subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "dedupsite.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "2", "--log-level", "warning"], cwd=ROOT)]
    procs += [subprocess.Popen([PY, "manage.py", "dedup_worker"], cwd=ROOT) for _ in range(2)]
    wait_http(f"http://127.0.0.1:{port}/api/v1/health")
    import django_rq
    from rq import Worker

    while len(Worker.all(connection=django_rq.get_connection("ingest"))) < 2:
        time.sleep(0.2)  # both workers listening (and warmed up)
    return procs


def _stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.wait(timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--singles", type=int, default=300)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--baseline", type=int, default=1000, help="articles for datasketch")
    parser.add_argument("--webhook-cost", action="store_true",
                        help="the batch phase without and with a webhook, and their ratio")
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL") or not os.environ.get("REDIS_URL"):
        os.execv(PY, [PY, str(ROOT / "scripts" / "testenv.py"), "run", "--", PY, *sys.argv])

    os.environ["DEBUG"] = "false"
    os.environ.setdefault("SECRET_KEY", "bench-" + "x" * 40)
    os.environ["SECURE_SSL_REDIRECT"] = "false"
    os.environ["ALLOWED_HOSTS"] = "127.0.0.1,localhost"
    os.environ["LOG_LEVEL"] = "WARNING"
    os.environ["WEBHOOK_ALLOW_PRIVATE"] = "true"  # --webhook-cost's receiver is on loopback
    manage("migrate", "--noinput")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedupsite.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.db.models import Max

    if args.webhook_cost:
        webhook_cost(load(args.limit), args)
        return

    from articles.models import Article, Doc, IndexState, RepresentativeOutbox

    Article.objects.all().delete()
    Doc.objects.all().delete()
    RepresentativeOutbox.objects.all().delete()
    IndexState.objects.all().delete()
    import redis

    redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()
    key = manage("create_api_key", "bench", "--rate-limit", "0").strip().splitlines()[-1]
    docs = load(args.limit)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    procs = _start(port)
    try:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {key}"
        batches = [docs[i:i + args.batch] for i in range(0, len(docs), args.batch)]
        start = time.perf_counter()

        def post(batch: list[dict]) -> float:
            t0 = time.perf_counter()
            r = session.post(f"{base}/api/v1/articles", json={"articles": batch}, timeout=60)
            r.raise_for_status()
            return time.perf_counter() - t0

        with ThreadPoolExecutor(args.clients) as pool:
            post_times = list(pool.map(post, batches))
        accepted = time.perf_counter() - start
        while Article.objects.queued().exists():
            time.sleep(0.2)
        total = time.perf_counter() - start
        summary = (Article.objects.filter(status="done").count(), Doc.objects.count(),
                   Doc.objects.filter(size__gt=1).count(),
                   Doc.objects.aggregate(m=Max("size"))["m"])
        print(f"articles: {len(docs)} in {len(batches)} batches of {args.batch}, "
              f"{args.clients} clients, gunicorn 2 workers, 2 RQ workers")
        print(f"accepted (HTTP 202) in {accepted:.1f} s = {len(docs) / accepted:,.0f} articles/s; "
              f"batch post p50 {statistics.median(post_times) * 1000:.0f} ms")
        print(f"end to end (every article has its docId) {total:.1f} s = "
              f"{len(docs) / total:,.0f} articles/s  (goal >= 1,000)")
        print(f"done {summary[0]}, docIds {summary[1]}, clusters {summary[2]}, "
              f"largest {summary[3]}")

        # Single-article latency is measured on an idle system: first let the workers
        # deliver the representative pushes the batch load queued.
        drain = time.perf_counter()
        while RepresentativeOutbox.objects.filter(status="pending").exists():
            time.sleep(0.2)
        print(f"representative pushes drained {time.perf_counter() - drain:.1f} s after "
              f"the last docId")
        latencies = []
        for i, doc in enumerate(docs[: args.singles]):
            body = {**doc, "nid": f"single-{i}", "url": doc["url"] + "?single"}
            t0 = time.perf_counter()
            r = session.post(f"{base}/api/v1/articles", params={"wait": 5}, json=body, timeout=30)
            latencies.append(time.perf_counter() - t0)
            assert r.status_code == 200, r.text
        latencies.sort()
        p50 = latencies[len(latencies) // 2] * 1000
        p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000
        print(f"single ?wait=5 posts: n={len(latencies)} p50 {p50:.1f} ms, p99 {p99:.1f} ms "
              f"(goal p50 <= 20 ms)")
        base_rate = datasketch_baseline(docs[: args.baseline], os.environ["REDIS_URL"])
        print(f"baseline datasketch MinHashLSH (Redis storage): {base_rate:,.0f} inserts/s; "
              f"dedupsite end to end is {len(docs) / total / base_rate:.1f}x (not like for "
              "like: the baseline is one process inserting one article per call, dedupsite "
              "2 web + 2 worker processes with batches)")
    finally:
        _stop(procs)


if __name__ == "__main__":
    main()
