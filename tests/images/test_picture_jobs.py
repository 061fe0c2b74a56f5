"""Picture jobs: a deadline per job (the rest queued again), a read that gives way to
waiting text jobs, and jobs that fail or are lost: their pictures never stay queued."""

from __future__ import annotations

import re
import time

import pytest
from django.contrib.auth.models import User

from articles.images import fetch as fetching
from articles.images import jobs
from articles.models import Article, ArticleImage
from tests.images.conftest import BODY, post
from tests.picture_host import Drip, serve

pytestmark = pytest.mark.django_db(transaction=True)

def test_a_picture_job_stops_at_its_deadline_and_queues_the_rest(
        client, auth, redis_client, loopback_is_public, monkeypatch):
    monkeypatch.setattr(fetching, "PICTURE_DEADLINE_S", 1.0)
    monkeypatch.setattr(jobs, "JOB_DEADLINE_S", 2.5)  # room for two pictures
    with serve({f"/{n}.png": Drip(every_s=0.2) for n in range(4)}) as (base, _hits):
        post(client, auth, {"nid": "slow", "url": "https://n.example/slow", "title": "绿道",
                            "content": BODY, "images": [f"{base}/{n}.png" for n in range(4)]})
        article = Article.objects.get(nid="slow")
        redis_client.delete(*redis_client.keys("rq:queue:images"))  # run the job by hand
        started = time.monotonic()
        assert jobs.fetch_pictures(article.pk) == 0
        assert time.monotonic() - started < 3.5
    assert list(ArticleImage.objects.filter(article=article).order_by("position")
                .values_list("status", "reason")) == [
        ("failed", "timeout"), ("failed", "timeout"), ("queued", ""), ("queued", "")]
    images = jobs.redis_store.queue("images")
    assert [job.args for job in images.get_jobs()] == [(article.pk,)]  # the rest, later


def test_a_picture_job_gives_way_to_a_waiting_text_job(client, auth, redis_client,
                                                       loopback_is_public, monkeypatch):
    """Called outside a worker the job serves no text queue; as a worker of every queue
    it stops a slow read once a text job waits and leaves the picture queued."""
    monkeypatch.setattr(jobs, "_text_waiting", lambda: lambda: True)
    with serve({"/slow.png": Drip(every_s=0.2)}) as (base, _hits):
        post(client, auth, {"nid": "t", "url": "https://n.example/t", "title": "绿道",
                            "content": BODY, "images": [f"{base}/slow.png"]})
        article = Article.objects.get(nid="t")
        started = time.monotonic()
        assert jobs.fetch_pictures(article.pk) == 0
        assert time.monotonic() - started < 2
    assert ArticleImage.objects.get(article=article).status == "queued"
    assert len(jobs.redis_store.queue("images").get_jobs()) == 2  # attach's, and the rest


def test_a_failing_picture_job_fails_its_pictures_and_shows_in_health(
        client, auth, redis_client, run_worker, monkeypatch, settings):
    settings.IMAGE_FETCH_ALLOW_PRIVATE = True

    def broken(url, **kwargs):
        raise RuntimeError("a bug in the fetcher")

    monkeypatch.setattr(fetching, "fetch", broken)
    post(client, auth, {"nid": "f", "url": "https://n.example/f", "title": "绿道",
                        "content": BODY, "images": ["https://i.example/a.png",
                                                    "https://i.example/b.png"]})
    run_worker()
    run_worker()  # the retry
    result = client.get("/api/v1/articles/f", **auth).json()
    assert result["status"] == "done"
    assert [(i["status"], i["reason"]) for i in result["images"]] == [
        ("failed", "job_failed")] * 2
    health = client.get("/api/v1/health", **auth).json()
    assert health["pictureQueue"]["failedJobs"] == 1
    client.force_login(User.objects.create_user("ops", password="pw-ops-123456",
                                                is_staff=True))
    ops = client.get("/ops/").content.decode()  # the images row: 1 failed
    row = re.search(r'<th scope="row">images</th>(.*?)</tr>', ops, re.S)
    assert row is not None
    assert re.findall(r'<td class="num">([^<]*)</td>', row.group(1))[4] == "1"


def test_pictures_of_a_lost_job_are_queued_again_once_then_failed(client, auth, redis_client,
                                                                  settings):
    settings.IMAGE_FETCH_ALLOW_PRIVATE = True
    post(client, auth, {"nid": "l", "url": "https://n.example/l", "title": "绿道",
                        "content": BODY, "images": ["https://i.example/a.png"]})
    article = Article.objects.get(nid="l")
    images = jobs.redis_store.queue("images")
    assert jobs.recover_lost() == 0  # its job waits: held
    images.empty()  # the job lost (a worker killed while running it, Redis emptied)
    assert jobs.recover_lost() == 1
    assert [job.args for job in images.get_jobs()] == [(article.pk,)]
    images.empty()  # lost again
    assert jobs.recover_lost() == 1
    assert ArticleImage.objects.get(article=article).reason == "job_lost"
    assert jobs.recover_lost() == 0
