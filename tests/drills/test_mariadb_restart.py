"""Drill: MariaDB crashes (SIGKILL) during ingest and is restarted.

A production-style stack ingests reposts and new stories while its dedicated
mariadbd is killed and, a few seconds later, restarted on the same data
directory (InnoDB crash recovery). While it is down every API call must answer
503 with the error object, never 500. A crawler retries each refused batch;
before it does, the drill checks that the refused batch was stored entirely or
not at all. In the end every accepted article is done exactly once, reposts
under their story's docId, nothing half-written.
"""

from __future__ import annotations

import json
import signal
import time
from typing import Any
from urllib.parse import quote

import pytest
import requests

from support import corpus
from support.drill_records import write_record
from tests.drills.client import RetryingClient, answer

pytestmark = [pytest.mark.drill(slow=True)]

STORIES = 30
BATCHES = 24


def probe(stack, session: requests.Session, doc_id: str) -> dict[str, tuple[Any, bool]]:
    """One call of every API endpoint: status and whether the body is the error object."""
    base = stack.base_url
    seed = quote(json.dumps({"url": "https://seed.drill.example/1", "title": "t",
                             "content": corpus.story(5000)}))
    calls = {
        "POST /api/v1/articles": lambda: session.post(
            f"{base}/api/v1/articles", json=corpus.article("probe", 5001), timeout=30),
        "GET /api/v1/articles/{nid}": lambda: session.get(f"{base}/api/v1/articles/o1",
                                                          timeout=30),
        "PATCH /api/v1/articles/{nid}": lambda: session.patch(
            f"{base}/api/v1/articles/o1", json={"hotness": 42}, timeout=30),
        "GET /api/v1/docs/{docId}": lambda: session.get(f"{base}/api/v1/docs/{doc_id}",
                                                        timeout=30),
        "POST /api/v1/similar": lambda: session.post(
            f"{base}/api/v1/similar", json={"content": corpus.story(1)}, timeout=30),
        "GET /api/v1/health": lambda: requests.get(f"{base}/api/v1/health", timeout=30),
        "GET /docId/getDocId": lambda: session.get(f"{base}/docId/getDocId?json={seed}",
                                                   timeout=30),
    }
    out = {}
    for name, call in calls.items():
        try:
            response = call()
            attempt = answer(response)
            shaped = attempt.error_object or (
                name.startswith("GET /api/v1/health") and response.status_code == 503) or (
                name.startswith("GET /docId") and response.headers.get(
                    "Content-Type", "").startswith("application/json"))
            out[name] = (response.status_code, shaped)
        except requests.RequestException as exc:
            out[name] = (type(exc).__name__, False)
    return out


@pytest.fixture(scope="module")
def drill(stack) -> dict[str, Any]:
    stack.clear()
    stack.start_worker()
    stack.start_worker()
    session = stack.session()
    originals = [corpus.article(f"o{n}", n, hotness=10) for n in range(STORIES)]
    response = session.post(f"{stack.base_url}/api/v1/articles", json={"articles": originals},
                            timeout=60)
    assert response.status_code in (200, 202), response.text
    assert stack.wait_until_processed(STORIES, 180) is not None
    old = stack.doc_ids()
    story_of: dict[str, int] = {}
    batches = []
    for b in range(BATCHES):
        items = []
        for i in range(12):
            k = b * 12 + i
            story_of[f"r{b}-{i}"] = k % STORIES
            items.append(corpus.article(f"r{b}-{i}", k % STORIES, copy=1 + k // STORIES))
        items += [corpus.article(f"n{b}-{i}", 3000 + b * 8 + i) for i in range(8)]
        batches.append(items)

    client = RetryingClient(stack.base_url, stack.api_key, batches, retry_delay=0.2, pace=0.1)
    client.gate.clear()  # after a refusal, wait until the drill has inspected the database
    client.start()
    deadline = time.monotonic() + 90
    while client.sent < 6 and client.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    stack.kill_mariadb(signal.SIGKILL)
    killed_at = time.monotonic()
    probes = []
    while time.monotonic() - killed_at < 6:
        probes.append(probe(stack, session, old["o0"]))
        time.sleep(0.5)
    stack.start_mariadb()
    up_at, up_wall = time.monotonic(), time.time()
    healthy_at = None
    while time.monotonic() - up_at < 60:
        try:
            if requests.get(f"{stack.base_url}/api/v1/health", timeout=10).status_code == 200:
                healthy_at = time.monotonic()
                break
        except requests.RequestException:
            pass
        time.sleep(0.1)

    # Before the client retries: every refused batch is stored entirely or not at all.
    partial = []
    refused_batches = [b for b in client.batches if b.failed_attempts]
    for batch in refused_batches:
        nids = batch.nids
        marks = ", ".join(["%s"] * len(nids))
        present = stack.scalar(f"SELECT COUNT(*) FROM articles_article WHERE nid IN ({marks})",
                               tuple(nids))
        if present not in (0, len(nids)):
            partial.append((nids[0], present, len(nids)))
    client.gate.set()
    client.join(timeout=300)

    processed_s = stack.wait_until_processed(STORIES + BATCHES * 20, 240)
    caught_up = stack.last_processed_at() if processed_s is not None else None
    outbox_drained_s = stack.wait_until_outbox_drained(120)
    accepted = client.accepted_nids() | {a["nid"] for a in originals}
    doc_ids = stack.doc_ids()
    outage_answers: dict[str, set[str]] = {}
    for round_ in probes:
        for name, (status, _shaped) in round_.items():
            outage_answers.setdefault(name, set()).add(str(status))
    bad_probes = sorted({name for round_ in probes for name, (status, shaped) in round_.items()
                         if status != 503 or not shaped})
    api_probes = [n for n in bad_probes if n.startswith(("POST /api", "GET /api", "PATCH /api"))]
    client_refusals = [a for a in client.attempts if a.status not in (200, 202)]
    return {
        "down_s": up_at - killed_at,
        "api_healthy_after_restart_s": None if healthy_at is None else healthy_at - up_at,
        "caught_up_after_restart_s": None if caught_up is None else caught_up - up_wall,
        "job_retry_backoff_s": [1, 5, 15, 30, 60],
        "outage_answers": {k: sorted(v) for k, v in outage_answers.items()},
        "bad_probes": bad_probes, "bad_api_probes": api_probes,
        "client_refusals": len(client_refusals),
        "client_refusal_answers": sorted({str(a.status) for a in client_refusals}),
        "client_500s": sum(1 for a in client_refusals if a.status == 500),
        "refused_batches": len(refused_batches), "partial_batches": partial,
        "accepted": len(accepted), "missing": sorted(accepted - set(doc_ids))[:20],
        "processed_s": processed_s, "outbox_drained_s": outbox_drained_s,
        "repost_wrong": sorted(n for n, s in story_of.items()
                               if doc_ids.get(n) != old[f"o{s}"])[:20],
        "consistency": stack.consistency(), "failed_jobs": stack.failed_jobs(),
    }


@pytest.fixture(scope="module")
def recorded(drill: dict[str, Any]) -> dict[str, bool]:
    c = drill["consistency"]
    checks = {
        "API answered 503 error objects while down (articles, similar, docs, health)":
            not drill["bad_api_probes"] and drill["client_500s"] == 0,
        "the seed call answered 503 while down": "GET /docId/getDocId" not in drill[
            "bad_probes"],
        "no refused batch half-stored": not drill["partial_batches"],
        "a client that retries loses nothing": not drill["missing"]
        and c["done"] == drill["accepted"] + (c["articles"] - drill["accepted"]),
        "every article done exactly once, reposts under their old docId": c["size_mismatches"]
        == 0 and c["queued"] == 0 and c["failed"] == 0 and not drill["repost_wrong"],
        "outbox drained": c["outbox_pending"] == 0,
    }
    write_record(
        "mariadb-restart",
        title="MariaDB killed during ingest and restarted",
        fault=f"SIGKILL of mariadbd during ingest, restarted after {drill['down_s']:.1f} s "
              "(InnoDB crash recovery); a crawler retrying refused batches",
        system_did="while down: " + "; ".join(
            f"{name} {'/'.join(s)}" for name, s in drill["outage_answers"].items())
        + f". The crawler saw {drill['client_refusals']} refusals "
          f"({'/'.join(drill['client_refusal_answers'])}); "
          f"{drill['refused_batches']} refused batches, {len(drill['partial_batches'])} "
          "half-stored; the API was healthy again "
          f"{drill['api_healthy_after_restart_s'] or float('nan'):.1f} s after the restart; "
          "workers' jobs failed and were retried with back-off (1, 5, 15, 30 s), so the "
          f"backlog was done {drill['caught_up_after_restart_s'] or float('nan'):.0f} s after",
        lost="nothing" if checks["a client that retries loses nothing"] and checks[
            "no refused batch half-stored"] else "see checks",
        recovery_s=drill["caught_up_after_restart_s"],
        checks=checks,
        figures=drill,
        findings=[f"{name} answered {'/'.join(drill['outage_answers'][name])} while MariaDB "
                  "was down" for name in drill["bad_probes"]],
    )
    return checks


def test_the_api_answers_503_error_objects_while_the_database_is_down(recorded, drill):
    assert recorded[
        "API answered 503 error objects while down (articles, similar, docs, health)"], (
        drill["outage_answers"])


def test_the_seed_call_answers_503_while_the_database_is_down(recorded, drill):
    """BUG today: articles/api/seed.py does not catch DatabaseError: a 500."""
    assert recorded["the seed call answered 503 while down"], drill["outage_answers"]


def test_no_batch_is_half_written(recorded, drill):
    assert recorded["no refused batch half-stored"], drill["partial_batches"]


def test_a_client_that_retries_loses_nothing(recorded, drill):
    assert recorded["a client that retries loses nothing"], drill["missing"]
    assert recorded["every article done exactly once, reposts under their old docId"], drill
    assert recorded["outbox drained"], drill["consistency"]
