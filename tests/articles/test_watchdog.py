from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from articles import watchdog
from articles.models import Article

pytestmark = pytest.mark.django_db(transaction=True)

BODY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")


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
    assert report == {"rebuilt": 1, "requeued": 1, "pushes": 0}
    run_worker()
    a, b = Article.objects.get(nid="a"), Article.objects.get(nid="b")
    assert b.status == "done" and b.doc_id == a.doc_id
    # One worker per period: a second tick within the period does nothing.
    settings.WATCHDOG_SECONDS = 60
    redis_client.delete(*redis_client.keys("*watchdog*"))
    assert watchdog.tick() == {"rebuilt": 0, "requeued": 0, "pushes": 0}
    assert watchdog.tick() == {}
