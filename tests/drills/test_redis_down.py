"""Drills: Redis unreachable or emptied, at the API and job level (in-process, seconds).

While Redis is down every API call must answer 503 with the error object (never
500), and nothing a client was told to retry may be lost: an article stored
before its job could be queued, or whose job vanished with an emptied Redis,
must still be processed once Redis is back. The slow drill
test_redis_restart.py does the same with a real server restart under load.
"""

from __future__ import annotations

import json
import socket

import pytest

from articles.models import ApiKey, Article
from dedupsite import redis_store
from support import corpus
from support.drill_records import write_record

pytestmark = [pytest.mark.drill, pytest.mark.django_db(transaction=True)]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens once the socket is closed


@pytest.fixture
def redis_down(settings, redis_client):
    """Point the whole process (indexes, locks, rate limits, queues) at a dead Redis."""
    up = {"REDIS_URL": settings.REDIS_URL, "RQ_QUEUES": settings.RQ_QUEUES}
    dead = f"redis://127.0.0.1:{closed_port()}/0"

    def down() -> None:
        settings.REDIS_URL = dead
        settings.RQ_QUEUES = {name: {**conf, "URL": dead} for name, conf in up["RQ_QUEUES"].items()}
        redis_store.reset_client()

    def back() -> None:
        settings.REDIS_URL, settings.RQ_QUEUES = up["REDIS_URL"], up["RQ_QUEUES"]
        redis_store.reset_client()

    yield down, back
    back()


@pytest.fixture
def unlimited_key(db) -> str:
    """A key without a rate limit: its requests do not touch Redis before the enqueue.
    It may read and change the other key's articles (the drill reads and PATCHes them
    with both keys: what it tests is the outage, not ownership)."""
    _key, plaintext = ApiKey.issue("drill crawler", rate_limit_per_minute=0,
                                   may_change_others=True, may_read_others=True)
    return plaintext


def post(client, key, body, path="/api/v1/articles"):
    return client.post(path, data=json.dumps(body), content_type="application/json",
                       HTTP_AUTHORIZATION=f"Bearer {key}")


def error_code(response) -> str | None:
    try:
        return response.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None


def test_while_redis_is_down_every_api_call_answers_503_with_an_error_object(
        client, api_key, unlimited_key, run_worker, redis_down):
    from django.test import Client

    down, back = redis_down
    post(client, api_key, corpus.article("known", 1))
    run_worker()
    doc_id = Article.objects.get(nid="known").doc.doc_id
    down()
    client = Client(raise_request_exception=False)
    calls = {}
    for key_name, key in (("rate-limited key", api_key), ("unlimited key", unlimited_key)):
        auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
        calls[f"POST article ({key_name})"] = post(client, key, corpus.article(
            f"new-{key_name[:4]}", 2))
        calls[f"GET article ({key_name})"] = client.get("/api/v1/articles/known", **auth)
        calls[f"GET doc ({key_name})"] = client.get(f"/api/v1/docs/{doc_id}", **auth)
        calls[f"POST similar ({key_name})"] = post(client, key, {"content": corpus.story(1)},
                                                   "/api/v1/similar")
        calls[f"PATCH hotness ({key_name})"] = client.patch(
            "/api/v1/articles/known", data=json.dumps({"hotness": 3}),
            content_type="application/json", **auth)
    health = client.get("/api/v1/health")
    back()
    # A 503 tells the client to retry; what it left behind must still be processed.
    stranded = list(Article.objects.queued().values_list("nid", flat=True))
    answers = {name: (r.status_code, error_code(r)) for name, r in calls.items()}
    # Reads that need only MySQL may answer 200; nothing may answer 500.
    wrong = {name: a for name, a in answers.items()
             if not (a == (503, "unavailable") or (a[0] == 200 and "GET" in name))}
    checks = {"every call answered 503 with an error object (or 200 for a MySQL-only read)":
              not wrong, "health answered 503": health.status_code == 503}
    write_record(
        "redis-down-api",
        title="Redis unreachable: the API's answers",
        fault="Redis unreachable (connection refused) for every API call, with a "
              "rate-limited and an unlimited key",
        system_did="; ".join(f"{name}: {status}" for name, (status, _c) in answers.items())
                   + f"; health {health.status_code}",
        lost="nothing",
        recovery_s=None,
        checks=checks,
        figures={"answers": {name: list(a) for name, a in answers.items()},
                 "health": health.status_code,
                 # answered 503 after the commit: the client's retry re-enqueues them
                 "stored_before_the_503": stranded},

    )
    assert not wrong, wrong
    assert health.status_code == 503


def test_the_seed_call_answers_503_not_500_while_redis_is_down(api_key, redis_down):
    """BUG: articles/api/seed.py lets redis.RedisError (and DatabaseError) through: a 500."""
    from urllib.parse import quote

    from django.test import Client

    down, _back = redis_down
    down()
    client = Client(raise_request_exception=False)
    article = corpus.article("seed", 3)
    response = client.get("/docId/getDocId?json=" + quote(json.dumps(
        {"url": article["url"], "title": article["title"], "content": article["content"]})),
        HTTP_AUTHORIZATION=f"Bearer {api_key}")
    assert response.status_code == 503, response.status_code
    assert response.json()["status"] == "fail"


def backdate(nid: str, seconds: float) -> None:
    """Pretend the article arrived `seconds` ago (the watchdog waits before it acts)."""
    from datetime import timedelta

    from django.utils import timezone

    Article.objects.filter(nid=nid).update(
        received_at=timezone.now() - timedelta(seconds=seconds))


def test_a_post_refused_because_the_queue_was_down_is_processed_after_the_client_retries(
        unlimited_key, run_worker, redis_down):
    """The article is committed, the enqueue on commit fails (503: retry); the client's
    retry of the same body must get it queued again (not wait for the watchdog)."""
    from django.test import Client

    down, back = redis_down
    client = Client(raise_request_exception=False)
    article = corpus.article("retried", 4)
    down()
    first = post(client, unlimited_key, article)
    back()
    assert first.status_code == 503 and error_code(first) == "unavailable"
    second = post(client, unlimited_key, article)  # the client retries, as told
    assert second.status_code in (200, 202)
    run_worker()
    assert Article.objects.get(nid="retried").status == "done"


def test_an_article_whose_job_vanished_with_redis_is_processed_once_workers_run_again(
        client, api_key, run_worker, redis_client):
    """Redis restarted empty: the job is gone, the article is queued in MySQL; the
    workers' watchdog rebuilds the index and re-enqueues it."""
    from articles.ingest import watchdog

    post(client, api_key, corpus.article("before", 5))
    run_worker()
    post(client, api_key, corpus.article("stranded", 6))  # stored, its job queued ...
    redis_client.flushall()  # ... and Redis restarts empty: the job is gone
    backdate("stranded", 120)
    report = watchdog.tick()
    run_worker()
    assert report.get("rebuilt") == 1 and report.get("requeued") == 1, report
    assert Article.objects.get(nid="stranded").status == "done"
    post(client, api_key, corpus.article("after", 5, copy=1))  # a repost after the restart
    run_worker()
    assert Article.objects.get(nid="after").doc_id == Article.objects.get(nid="before").doc_id
