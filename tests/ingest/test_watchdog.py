from __future__ import annotations

import json
import time
from datetime import UTC, timedelta

import pytest
from django.utils import timezone

from articles.ingest import watchdog
from articles.models import Article

pytestmark = pytest.mark.django_db(transaction=True)

BODY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")


def _allow_a_tick(redis_client) -> None:
    """Forget the watchdog's once-per-period key, as if the period had passed."""
    for key in redis_client.keys("*watchdog*"):
        redis_client.delete(key)


def test_articles_whose_jobs_redis_lost_are_processed_after_the_watchdog_runs(
        client, auth, run_worker, redis_client, settings):
    settings.WATCHDOG_SECONDS = 1
    client.post("/api/v1/articles", content_type="application/json", **auth,
                data=json.dumps({"nid": "a", "url": "https://x.example/a", "title": "绿道",
                                 "content": BODY}))
    run_worker()
    client.post("/api/v1/articles", content_type="application/json", **auth,
                data=json.dumps({"nid": "b", "url": "https://x.example/b", "title": "绿道",
                                 "content": BODY + "（完）"}))
    redis_client.flushdb()  # Redis restarted empty: the index and b's job are gone
    Article.objects.filter(nid="b").update(received_at=timezone.now() - timedelta(minutes=5))
    assert run_worker() == 0
    report = watchdog.tick()
    assert report == {"rebuilt": 1, "requeued": 1, "pushes": 0, "expired": 0,
                      "bodies_cleared": 0, "changes_dropped": 0,
                      "queue_sampled": 1,  # the first sample
                      "bulk_resumed": 0, "pictures": 0, "retraining": 0}
    run_worker()
    a, b = Article.objects.get(nid="a"), Article.objects.get(nid="b")
    assert b.status == "done" and b.doc_id == a.doc_id
    # One worker per period: a second tick within the period does nothing.
    settings.WATCHDOG_SECONDS = 60
    _allow_a_tick(redis_client)
    assert watchdog.tick() == {"rebuilt": 0, "requeued": 0, "pushes": 0, "expired": 0,
                               "bodies_cleared": 0, "changes_dropped": 0,
                               "queue_sampled": 0,  # one a period
                               "bulk_resumed": 0, "pictures": 0, "retraining": 0}
    assert watchdog.tick() == {}


def test_overdue_pushes_are_enqueued_at_once_when_the_scheduled_job_is_stuck(
        client, auth, run_worker, redis_client, settings):
    import django_rq

    from articles.models import OutboxStatus, RepresentativeOutbox

    settings.PUSH_DELAY_MS = 60_000  # as if no RQ scheduler were there to enqueue it
    client.post("/api/v1/articles?wait=5", content_type="application/json", **auth,
                data=json.dumps({"nid": "p", "url": "https://x.example/p", "title": "绿道",
                                 "content": BODY}))
    queue = django_rq.get_queue("push")
    assert queue.count == 0 and len(queue.scheduled_job_registry.get_job_ids()) > 0
    pending = RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING)
    assert pending.count() == 1
    assert watchdog.tick()["pushes"] == 0  # not overdue yet
    pending.update(created_at=timezone.now() - timedelta(minutes=2))
    _allow_a_tick(redis_client)
    assert watchdog.tick()["pushes"] == 1
    assert queue.count >= 1  # enqueued now, the waiting scheduled job notwithstanding
    run_worker()
    assert not pending.exists()


def test_a_backlog_waiting_for_a_worker_is_not_enqueued_again(redis_client, settings):
    import django_rq

    from articles.ingest.intake import ArticleInput, accept_articles

    settings.WATCHDOG_SECONDS = 1
    for part in range(3):  # 1,500 articles in three jobs of 500, no worker running
        accept_articles([ArticleInput(nid=f"n{part}-{i}", url=f"https://x.example/{part}/{i}",
                                      title="绿道", content=f"{BODY} {part} {i}")
                         for i in range(500)])
    Article.objects.update(received_at=timezone.now() - timedelta(minutes=5))
    queue = django_rq.get_queue("ingest")
    assert queue.count == 3

    def held() -> list[str]:
        return [nid for job in queue.get_jobs() for nid in job.args[0]]

    for _tick in range(2):
        _allow_a_tick(redis_client)
        assert watchdog.tick()["requeued"] == 0
        assert queue.count == 3 and len(held()) == len(set(held())) == 1500
    # A job that is really gone (deleted from Redis) is replaced, once.
    lost = queue.get_jobs()[1]
    lost_nids = set(lost.args[0])
    lost.delete()
    for expected in (500, 0):
        _allow_a_tick(redis_client)
        assert watchdog.tick()["requeued"] == expected
    assert queue.count == 3 and len(held()) == len(set(held())) == 1500
    assert lost_nids <= set(held())


def test_a_burst_worker_runs_its_delayed_pushes_before_it_exits(client, auth, redis_client,
                                                                 settings):
    from django.core.management import call_command

    from articles.models import OutboxStatus, RepresentativeOutbox

    settings.PUSH_DELAY_MS = 60_000  # the pushes are scheduled a minute ahead
    for nid in ("w1", "w2", "w3"):
        client.post("/api/v1/articles", content_type="application/json", **auth,
                    data=json.dumps({"nid": nid, "url": f"https://x.example/{nid}",
                                     "title": "绿道", "content": f"{BODY} {nid}"}))
    call_command("dedup_worker", "--burst")
    assert set(Article.objects.values_list("status", flat=True)) == {"done"}
    assert RepresentativeOutbox.objects.count() > 0
    assert not RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING).exists()


def test_a_job_running_far_longer_than_a_batch_counts_as_a_dead_workers(redis_client,
                                                                         settings):
    from datetime import datetime

    import django_rq

    from articles.ingest.intake import ArticleInput, accept_articles

    settings.WATCHDOG_SECONDS = 1
    accept_articles([ArticleInput(nid=f"k{i}", url=f"https://x.example/k/{i}", title="绿道",
                                  content=f"{BODY} {i}") for i in range(20)])
    Article.objects.update(received_at=timezone.now() - timedelta(minutes=5))
    queue = django_rq.get_queue("ingest")
    (job,) = queue.get_jobs()
    # a worker took the job, then was killed: RQ keeps it "started" for minutes
    queue.remove(job)
    job.started_at = datetime.now(UTC)
    job.save()
    # the started registry holds "<job id>:<execution id>", scored by its expiry
    redis_client.zadd(queue.started_job_registry.key,
                      {f"{job.id}:execution-1": time.time() + 600})
    assert queue.started_job_registry.get_job_ids() == [job.id]
    _allow_a_tick(redis_client)
    assert watchdog.tick()["requeued"] == 0  # just started: a live batch
    job.started_at = datetime.now(UTC) - timedelta(minutes=2)
    job.save()
    _allow_a_tick(redis_client)
    assert watchdog.tick()["requeued"] == 20
    assert queue.count == 1 and len(queue.get_jobs()[0].args[0]) == 20
