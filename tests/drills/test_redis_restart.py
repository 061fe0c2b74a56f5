"""Drill: Redis is killed in the middle of ingest and comes back empty.

A production-style stack (gunicorn, two `dedup_worker` processes, dedicated
MariaDB and Redis) ingests reposts of known stories and new stories while the
dedicated redis-server is SIGKILLed and restarted without its data (no
persistence: the queue, the indexes, the locks are gone). A crawler retries
every refused batch. Afterwards no accepted article may be missing or stuck,
the index must have been rebuilt from MySQL by a worker, and reposts must get
their story's old docId.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from support import corpus
from support.drill_records import write_record
from tests.drills.client import RetryingClient

pytestmark = [pytest.mark.drill(slow=True)]

STORIES = 40
BATCHES = 30
REQUEUE = (
    "from articles.ingest.jobs import enqueue_processing\n"
    "from articles.models import Article\n"
    "nids = list(Article.objects.queued().values_list('nid', flat=True))\n"
    "for i in range(0, len(nids), 500):\n"
    "    enqueue_processing(nids[i:i + 500])\n"
    "print(len(nids))\n"
)


def ingest_batches() -> tuple[list[list[dict[str, Any]]], dict[str, int]]:
    """Batches of 15 reposts of known stories and 10 new stories; nid -> story of a repost."""
    batches, story_of = [], {}
    for b in range(BATCHES):
        items = []
        for i in range(15):
            k = b * 15 + i
            nid = f"r{b}-{i}"
            story_of[nid] = k % STORIES
            items.append(corpus.article(nid, k % STORIES, copy=1 + (k // STORIES) % 5))
        items += [corpus.article(f"n{b}-{i}", 1000 + b * 10 + i) for i in range(10)]
        batches.append(items)
    return batches, story_of


def supervise(stack, restarted: list[float]) -> None:
    """What systemd's Restart=always does: a worker that quit is started again."""
    for worker in list(stack.workers):
        if not worker.alive:
            stack.workers.remove(worker)
            stack.start_worker()
            restarted.append(time.monotonic())


@pytest.fixture(scope="module")
def drill(stack) -> dict[str, Any]:
    stack.clear()
    stack.start_worker()
    stack.start_worker()
    session = stack.session()
    originals = [corpus.article(f"o{n}", n, hotness=10) for n in range(STORIES)]
    for i in range(0, STORIES, 20):
        response = session.post(f"{stack.base_url}/api/v1/articles",
                                json={"articles": originals[i:i + 20]}, timeout=60)
        assert response.status_code in (200, 202), response.text
    assert stack.wait_until_processed(STORIES, 180) is not None, "the originals were not done"
    old = stack.doc_ids()
    generation_before = stack.scalar("SELECT generation FROM articles_indexstate WHERE id = 1")

    batches, story_of = ingest_batches()
    client = RetryingClient(stack.base_url, stack.api_key, batches, retry_delay=0.3)
    client.start()
    # Kill while jobs wait in the queue: they die with Redis.
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and client.is_alive():
        if client.sent >= 5 and stack.queue_depth() >= 2:
            break
        time.sleep(0.01)
    depth_at_kill = stack.queue_depth()
    queued_at_kill = stack.scalar("SELECT COUNT(*) FROM articles_article WHERE status='queued'")
    sent_at_kill = client.sent
    stack.kill_redis()
    killed_at = time.monotonic()
    time.sleep(3)
    stack.start_redis()
    up_at, up_wall = time.monotonic(), time.time()

    restarted: list[float] = []
    done_series: list[tuple[float, int]] = []
    stable_since, last_counts = time.monotonic(), None
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        supervise(stack, restarted)
        counts = stack.status_counts()
        done_series.append((time.monotonic() - up_at, counts.get("done", 0)))
        if counts != last_counts:
            stable_since, last_counts = time.monotonic(), counts
        settled = not client.is_alive() and stack.queue_depth() == 0
        # The watchdog re-enqueues articles queued for over 30 s, every 30 s: give it time.
        if settled and (not counts.get("queued") or time.monotonic() - stable_since > 75):
            break
        time.sleep(0.5)
    client.join(timeout=5)
    stranded = [row[0] for row in stack.sql(
        "SELECT nid FROM articles_article WHERE status='queued' ORDER BY id")]
    settled_s = time.monotonic() - up_at
    # When every article that still had a job was done (None if some are still queued).
    caught_up = None if stranded else stack.last_processed_at()

    # Only if something is still stuck: the operator's way out, to check the rest.
    requeued = int(stack.python(REQUEUE).split()[-1]) if stranded else 0
    after_requeue_s = stack.wait_until_processed(0, 120) if stranded else 0.0

    outbox_drained_s = stack.wait_until_outbox_drained(90)

    accepted = client.accepted_nids() | {a["nid"] for a in originals}
    doc_ids = stack.doc_ids()
    missing = sorted(accepted - set(doc_ids))
    repost_wrong = sorted(nid for nid, n in story_of.items()
                          if nid in doc_ids and doc_ids[nid] != old[f"o{n}"])
    new_docs = [doc_ids.get(nid) for b in batches for nid in (a["nid"] for a in b)
                if nid.startswith("n")]
    new_wrong = len(new_docs) - len(set(new_docs) - set(old.values()) - {None})
    generation_after = stack.scalar("SELECT generation FROM articles_indexstate WHERE id = 1")
    redis_generation = stack.redis().get("dd:gen")
    outage = [a for a in client.attempts if killed_at <= a.at < up_at + 1]
    refused = [a for a in client.attempts if a.status not in (200, 202)]
    first_ok = min((a.at for a in client.attempts if a.at >= up_at and a.status in (200, 202)),
                   default=None)
    done_after = next((t for t, n in done_series if n > done_series[0][1]), None)
    worker_logs = "".join(w.log.read_text(errors="replace") for w in stack.workers)
    return {
        "stories": STORIES, "accepted": len(accepted), "sent_at_kill": sent_at_kill,
        "depth_at_kill": depth_at_kill, "queued_at_kill": queued_at_kill,
        "down_s": up_at - killed_at, "stranded": stranded, "requeued_by_operator": requeued,
        "settled_s": settled_s, "after_requeue_s": after_requeue_s, "missing": missing,
        "repost_wrong": repost_wrong, "new_wrong": new_wrong, "reposts": len(story_of),
        "generation_changed": generation_after != generation_before,
        "generation_matches": redis_generation is not None
        and redis_generation.decode() == generation_after,
        "rebuild_logged": "rebuilding from the database" in worker_logs,
        "outage_answers": sorted({str(a.status) for a in outage}),
        "outage_error_objects": all(a.error_object for a in outage if a.status == 503),
        "five_hundreds": sum(1 for a in client.attempts if a.status == 500),
        "refused_attempts": len(refused),
        "api_back_s": None if first_ok is None else first_ok - up_at,
        "first_done_after_restart_s": done_after,
        "caught_up_after_restart_s": None if caught_up is None else caught_up - up_wall,
        "workers_restarted": len(restarted), "outbox_drained_s": outbox_drained_s,
        "consistency": stack.consistency(), "failed_jobs": stack.failed_jobs(),
    }


@pytest.fixture(scope="module")
def recorded(drill: dict[str, Any]) -> dict[str, Any]:
    c = drill["consistency"]
    checks = {
        "no accepted article lost": not drill["missing"] and c["done"] == drill["accepted"],
        "no article left queued without its job (no operator needed)": not drill["stranded"],
        "index detected missing and rebuilt by a worker": drill["generation_changed"]
        and drill["generation_matches"],
        "reposts got their story's old docId": not drill["repost_wrong"],
        "new stories got new docIds": drill["new_wrong"] == 0,
        "503 error objects while down, never 500": drill["five_hundreds"] == 0
        and drill["outage_error_objects"],
        "docs consistent (sizes = members, nothing failed)": c["size_mismatches"] == 0
        and c["failed"] == 0 and c["done_without_doc"] == 0,
        "representative outbox drained": c["outbox_pending"] == 0,
    }
    stranded = len(drill["stranded"])
    write_record(
        "redis-restart",
        title="Redis killed mid-ingest, restarted empty",
        fault=f"SIGKILL of redis-server with {drill['depth_at_kill']} jobs in the queue "
              f"({drill['queued_at_kill']} articles queued), restarted empty after "
              f"{drill['down_s']:.1f} s; a crawler retrying refused batches",
        system_did=f"API answered {'/'.join(drill['outage_answers'])} while down "
                   f"({drill['refused_attempts']} refused attempts, {drill['five_hundreds']} × "
                   "500); the index was found missing and rebuilt from MySQL; "
                   f"{drill['workers_restarted']} worker(s) quit on the lost connection and "
                   "were restarted (as a supervisor would); "
                   + ("the watchdog re-enqueued the articles whose jobs died with Redis; "
                      if not stranded else "nothing re-enqueued the articles whose jobs died "
                      "with Redis; ")
                   + f"{drill['reposts'] - len(drill['repost_wrong'])}/{drill['reposts']} reposts "
                   "got their story's old docId",
        lost=(f"no article lost from MySQL, but {stranded} accepted articles stayed queued "
              "(their jobs died with Redis) until an operator re-enqueued them"
              if stranded else "nothing"),
        recovery_s=drill["caught_up_after_restart_s"],
        checks=checks,
        figures={k: v for k, v in drill.items() if k not in ("stranded",)}
        | {"stranded_count": stranded, "stranded_sample": drill["stranded"][:10]},
        findings=(["Articles whose job was lost stayed queued: nothing re-enqueued them."]
                  if stranded else [])
        + ([f"{drill['workers_restarted']} worker process(es) exited when Redis went away: "
            "run `make worker` under a supervisor that restarts it (systemd Restart=always)."]
           if drill["workers_restarted"] else []),
    )
    return checks


def test_no_accepted_article_is_lost(recorded, drill):
    assert not drill["missing"]
    assert recorded["no accepted article lost"], drill["consistency"]


def test_the_index_is_rebuilt_and_reposts_keep_their_old_doc_ids(recorded, drill):
    assert recorded["index detected missing and rebuilt by a worker"]
    assert not drill["repost_wrong"]
    assert drill["new_wrong"] == 0
    assert recorded["docs consistent (sizes = members, nothing failed)"], drill["consistency"]
    assert recorded["representative outbox drained"], drill["consistency"]


def test_the_api_answers_503_error_objects_while_redis_is_down(recorded, drill):
    assert recorded["503 error objects while down, never 500"], drill["outage_answers"]


def test_articles_whose_job_died_with_redis_are_processed_without_an_operator(recorded, drill):
    """The workers' watchdog re-enqueues them (articles/ingest/watchdog.py)."""
    assert not drill["stranded"], f"{len(drill['stranded'])} articles stuck in `queued`"
