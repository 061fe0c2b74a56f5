"""Load drill: a steady ingest rate for minutes against a production-style server.

    .venv/bin/python bench/load.py [--duration 300] [--rate 10] [--batch 10]

Starts its own stack (support/stack.py: dedicated MariaDB and Redis from
scripts/testenv.py's machinery, gunicorn with 2 workers, 2 `dedup_worker`
processes as `make worker` runs them, DEBUG off) so that it never touches
anybody's database, then posts batches of articles (new stories and reposts
of earlier ones) on 127.0.0.1 at a fixed rate from a bounded pool of client
threads (open loop: a request is sent at its scheduled time whatever the
previous ones did; at most `--concurrency` in flight, at most rate × duration
requests in all).

Reports throughput, p50/p99 latency, errors by status, the queue depth over
time, the load average, whether every accepted article got a docId and whether
reposts share their story's docId (and stories stay apart). The
figures go to stdout and to $DRILLS_DIR/load.json (default var/drills/; `--name`
changes the name), which scripts/drills_report.py renders into
docs/results/drills.md. Exit status 1 when an accepted article has no docId, a
5xx was answered, the queue did not drain, or reposts did not share their
story's docId.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from support import corpus  # noqa: E402  (needs ROOT on sys.path)
from support.drill_records import drills_dir, percentile  # noqa: E402
from support.stack import Stack  # noqa: E402


class Load:
    """Builds the batches: mostly new stories, `repost_share` reposts of earlier ones."""

    def __init__(self, batch: int, repost_share: float, seed: int = 7) -> None:
        self.batch = batch
        self.repost_share = repost_share
        self.rng = random.Random(seed)
        self.stories = 0
        self.copies: Counter[int] = Counter()
        self.story_of: dict[str, int] = {}  # nid -> story: reposts must share its docId
        self.lock = threading.Lock()

    def next_batch(self, index: int) -> list[dict[str, Any]]:
        with self.lock:
            items = []
            for i in range(self.batch):
                nid = f"L{index}-{i}"
                if self.stories > 20 and self.rng.random() < self.repost_share:
                    n = self.rng.randrange(self.stories)
                    self.copies[n] += 1
                    items.append(corpus.article(nid, 100_000 + n, copy=self.copies[n]))
                else:
                    n = self.stories
                    items.append(corpus.article(nid, 100_000 + n))
                    self.stories += 1
                self.story_of[nid] = n
            return items


def run(args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(args.workdir or ROOT / "var" / "load-run")
    stack = Stack(workdir, web_workers=2, rate_limit=0)
    print("starting MariaDB, Redis, gunicorn (2 workers) ...", flush=True)
    stack.start()
    try:
        for _ in range(2):
            stack.start_worker()  # like `make worker`: every queue, with the scheduler
        return drive(stack, args)
    finally:
        stack.stop()


def drive(stack: Stack, args: argparse.Namespace) -> dict[str, Any]:
    load = Load(args.batch, args.reposts)
    total_requests = min(args.max_requests, int(args.rate * args.duration))
    latencies: list[float] = []
    lateness: list[float] = []
    statuses: Counter[str] = Counter()
    accepted: list[str] = []
    results_lock = threading.Lock()
    local = threading.local()
    url = f"{stack.base_url}/api/v1/articles"

    def session() -> requests.Session:
        if not hasattr(local, "session"):
            local.session = stack.session()
        return local.session

    def send(index: int, due: float) -> None:
        batch = load.next_batch(index)
        started = time.monotonic()
        try:
            response = session().post(url, json={"articles": batch}, timeout=60)
            status = str(response.status_code)
        except requests.RequestException as exc:
            status = type(exc).__name__
        elapsed = time.monotonic() - started
        with results_lock:
            latencies.append(elapsed)
            lateness.append(started - due)
            statuses[status] += 1
            if status in ("200", "202"):
                accepted.extend(a["nid"] for a in batch)

    samples: list[dict[str, Any]] = []
    stop_sampling = threading.Event()
    t0 = time.monotonic()

    def sample() -> None:
        while not stop_sampling.is_set():
            try:
                counts = stack.status_counts()
                samples.append({"t": round(time.monotonic() - t0, 1),
                                "ingestJobs": int(stack.redis().llen("rq:queue:ingest")),
                                "queuedArticles": counts.get("queued", 0),
                                "done": counts.get("done", 0),
                                "load1": round(os.getloadavg()[0], 2)})
            except Exception as exc:  # noqa: BLE001  (a sample is not worth the run)
                samples.append({"t": round(time.monotonic() - t0, 1), "error": str(exc)})
            stop_sampling.wait(args.sample_every)

    load_before = os.getloadavg()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    print(f"sending {total_requests} requests of {args.batch} articles at {args.rate}/s "
          f"for {args.duration} s ...", flush=True)
    with ThreadPoolExecutor(args.concurrency) as pool:
        in_flight = threading.BoundedSemaphore(args.concurrency)
        for index in range(total_requests):
            due = t0 + index / args.rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            in_flight.acquire()  # bounded: never more than `concurrency` requests open
            future = pool.submit(send, index, due)
            future.add_done_callback(lambda _f: in_flight.release())
            if index and index % max(1, int(args.rate * 30)) == 0:
                print(f"  {time.monotonic() - t0:5.0f} s: {index} requests, "
                      f"{samples[-1] if samples else ''}", flush=True)
    send_s = time.monotonic() - t0
    load_after_sending = os.getloadavg()

    drained_s = stack.wait_until_processed(len(accepted), args.drain_timeout)
    end_to_end_s = time.monotonic() - t0
    outbox_s = stack.wait_until_outbox_drained(120)
    stop_sampling.set()
    sampler.join(timeout=10)

    with_doc = 0
    for start in range(0, len(accepted), 1000):
        chunk = accepted[start:start + 1000]
        marks = ", ".join(["%s"] * len(chunk))
        with_doc += stack.scalar(
            f"SELECT COUNT(*) FROM articles_article WHERE status = 'done' AND doc_id IS NOT "
            f"NULL AND nid IN ({marks})", tuple(chunk))
    # Near-duplicates under one docId, different stories apart (accepted articles only).
    doc_of = stack.doc_ids()
    docs_of_story: dict[int, set[str | None]] = {}
    for nid in accepted:
        docs_of_story.setdefault(load.story_of[nid], set()).add(doc_of.get(nid))
    split = sum(1 for docs in docs_of_story.values() if len(docs) > 1)
    story_doc = [next(iter(d)) for d in docs_of_story.values() if len(d) == 1]
    merged = len(story_doc) - len(set(story_doc))
    consistency = stack.consistency()
    ms = [x * 1000 for x in latencies]
    errors = {k: v for k, v in statuses.items() if k not in ("200", "202")}
    return {
        "duration_s": args.duration, "rate_per_s": args.rate, "batch": args.batch,
        "concurrency": args.concurrency, "reposts_share": args.reposts,
        "requests": sum(statuses.values()), "statuses": dict(statuses),
        "errors": sum(errors.values()), "five_xx": sum(v for k, v in errors.items()
                                                      if k.startswith("5")),
        "articles_accepted": len(accepted), "articles_with_doc_id": with_doc,
        "articles_without_doc_id": len(accepted) - with_doc,
        "send_s": round(send_s, 1),
        "ingest_articles_per_s": round(len(accepted) / send_s, 1),
        "requests_per_s": round(sum(statuses.values()) / send_s, 2),
        "end_to_end_s": round(end_to_end_s, 1),
        "processed_articles_per_s": round(len(accepted) / end_to_end_s, 1),
        "drained_after_sending_s": None if drained_s is None else round(drained_s, 1),
        "outbox_drained_s": None if outbox_s is None else round(outbox_s, 1),
        "latency_ms": {"p50": round(percentile(ms, 0.5) or 0, 1),
                       "p90": round(percentile(ms, 0.9) or 0, 1),
                       "p99": round(percentile(ms, 0.99) or 0, 1),
                       "max": round(max(ms, default=0), 1)},
        "send_lateness_ms_p99": round((percentile(lateness, 0.99) or 0) * 1000, 1),
        "max_queued_articles": max((s.get("queuedArticles", 0) for s in samples), default=0),
        "max_ingest_jobs": max((s.get("ingestJobs", 0) for s in samples), default=0),
        "queue_samples": samples,
        "docs": consistency["docs"], "stories": len(docs_of_story),
        "stories_split": split, "stories_merged": merged, "consistency": consistency,
        "machine": {"cpus": os.cpu_count(), "load_before": [round(x, 2) for x in load_before],
                    "load_after_sending": [round(x, 2) for x in load_after_sending]},
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def summary(r: dict[str, Any]) -> str:
    lat = r["latency_ms"]
    lines = [
        f"load: {r['requests']} requests of {r['batch']} articles at {r['rate_per_s']}/s for "
        f"{r['send_s']} s (concurrency {r['concurrency']}), gunicorn 2 workers, "
        "2 dedup_worker processes",
        f"accepted {r['articles_accepted']} articles = {r['ingest_articles_per_s']} articles/s; "
        f"latency p50 {lat['p50']} ms, p90 {lat['p90']} ms, p99 {lat['p99']} ms, "
        f"max {lat['max']} ms",
        f"errors {r['errors']} ({r['statuses']}), 5xx {r['five_xx']}",
        f"every article done {r['end_to_end_s']} s after the start "
        f"({r['processed_articles_per_s']} articles/s end to end; drained "
        f"{r['drained_after_sending_s']} s after sending stopped); queue max "
        f"{r['max_ingest_jobs']} jobs / {r['max_queued_articles']} articles waiting",
        f"docId for every accepted article: {r['articles_with_doc_id']}/"
        f"{r['articles_accepted']} ({r['docs']} docIds for {r['stories']} stories; "
        f"{r['stories_split']} stories split, {r['stories_merged']} merged)",
        f"machine: {r['machine']['cpus']} cores, load average before "
        f"{r['machine']['load_before']}, after sending {r['machine']['load_after_sending']}",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=300, help="seconds of sending")
    parser.add_argument("--rate", type=float, default=10, help="requests per second")
    parser.add_argument("--batch", type=int, default=10, help="articles per request")
    parser.add_argument("--reposts", type=float, default=0.3, help="share of reposts")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight, max")
    parser.add_argument("--max-requests", type=int, default=20_000, help="hard cap")
    parser.add_argument("--drain-timeout", type=float, default=600)
    parser.add_argument("--sample-every", type=float, default=5)
    parser.add_argument("--workdir", help="logs and local stores (default var/load-run)")
    parser.add_argument("--name", default="load", help="record name: $DRILLS_DIR/NAME.json")
    parser.add_argument("--no-record", action="store_true", help="do not write the record")
    args = parser.parse_args()
    result = run(args)
    print(summary(result))
    if not args.no_record:
        path = drills_dir() / f"{args.name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=2) + "\n")
        print(f"figures: {path}")
    ok = (result["articles_without_doc_id"] == 0 and result["five_xx"] == 0
          and result["drained_after_sending_s"] is not None
          and not result["stories_split"] and not result["stories_merged"])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
