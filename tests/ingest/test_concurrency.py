"""Race-freedom and rebuildability of the docId assignment, with real worker processes."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from articles.models import Article, Doc

ROOT = Path(__file__).resolve().parents[2]

BASE = (
    "国家统计局今天发布数据显示，前三季度全国规模以上工业增加值同比增长百分之五点八，"
    "其中高技术制造业增加值增长百分之九点六，明显快于全部规模以上工业。分行业看，"
    "电子信息、新能源汽车和光伏设备等行业保持较快增长，传统行业生产稳中有升。"
    "统计局新闻发言人表示，国民经济延续恢复向好态势，但外部环境依然复杂严峻，"
    "国内需求仍显不足，下一步要加大宏观政策调控力度，着力扩大有效需求，巩固增强经济回升向好势头。"
    "发言人还指出，就业形势总体稳定，城镇调查失业率逐月回落，居民消费价格温和上涨。"
)
SUFFIXES = ["（完）", "责任编辑：张三", "来源：新华网", "本文转自人民网", "点击查看更多",
            "记者 李四 报道", "（原标题：工业增加值增长）", "欢迎关注我们的公众号"]


def variant(n: int) -> str:
    rng = random.Random(n)
    text = BASE
    if rng.random() < 0.5:
        text = rng.choice(SUFFIXES) + "\n" + text
    if rng.random() < 0.7:
        text = text + "\n" + rng.choice(SUFFIXES)
    return text


def database_url() -> str:
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    host = f"{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 3306}"
    return f"mysql://{s['USER']}:{s['PASSWORD']}@{host}/{s['NAME']}"


def finish_retried_batches() -> None:
    """A batch that hit a transient error (a lock wait, a deadlock victim) is retried by
    RQ's scheduler after a back-off, when burst workers have already quit: the watchdog's
    re-enqueue stands in for that here, and one more burst worker takes it. Only
    articles whose batch has its retry scheduled: one left queued with no retry waiting
    for it would be lost, and fails the test."""
    queued = set(Article.objects.filter(status="queued").values_list("nid", flat=True))
    if not queued:
        return
    from articles.ingest.intake import requeue_stale
    from articles.ingest.jobs import pending_nids

    held = pending_nids(running_for_less_than_s=0)  # the burst workers have quit
    assert queued <= held, sorted(queued - held)
    requeue_stale(older_than_seconds=0)
    for worker in start_workers(1):
        worker.communicate(timeout=300)


def start_workers(count: int) -> list[subprocess.Popen]:
    env = {**os.environ, "DATABASE_URL": database_url(), "REDIS_URL": settings.REDIS_URL,
           "DJANGO_SETTINGS_MODULE": "dedupsite.settings"}
    return [
        subprocess.Popen(
            [sys.executable, "manage.py", "rqworker", "ingest", "push", "default", "--burst",
             "--worker-class", "rq.worker.SimpleWorker"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        for _ in range(count)
    ]


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_200_near_duplicates_raced_by_4_worker_processes_get_one_doc_id(client, auth,
                                                                         redis_client):
    for n in range(200):
        response = client.post(
            "/api/v1/articles", content_type="application/json", **auth,
            data=json.dumps({"nid": f"v{n}", "url": f"https://site{n}.example/a",
                             "title": "前三季度工业增加值增长5.8%", "content": variant(n)}),
        )
        assert response.status_code == 202
    workers = start_workers(4)
    for worker in workers:
        _out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err.decode()[-2000:]
    finish_retried_batches()
    assert Article.objects.filter(status="done").count() == 200
    docs = set(Article.objects.values_list("doc__doc_id", flat=True))
    assert len(docs) == 1
    assert Doc.objects.get(doc_id=docs.pop()).size == 200


@pytest.mark.django_db(transaction=True)
def test_after_redis_is_emptied_rebuild_index_gives_the_old_doc_ids(client, auth, run_worker,
                                                                   redis_client):
    from django.core.management import call_command

    def post(nid: str, n: int) -> None:
        client.post("/api/v1/articles", content_type="application/json", **auth,
                    data=json.dumps({"nid": nid, "url": f"https://a.example/{nid}",
                                     "title": "工业增加值", "content": variant(n)}))

    post("first", 1)
    run_worker()
    old = Article.objects.get(nid="first").doc.doc_id
    redis_client.flushdb()
    call_command("rebuild_index", stdout=StringIO(), stderr=StringIO())
    post("later", 2)
    run_worker()
    assert Article.objects.get(nid="later").doc.doc_id == old


@pytest.mark.dialect  # rebuild_index --recompute: a dialect's own UPDATE ... JOIN
@pytest.mark.django_db(transaction=True)
def test_rebuild_index_recompute_re_extracts_stored_features(client, auth, run_worker,
                                                             redis_client):
    """After an upgrade that changes extraction, ``rebuild_index --recompute`` makes
    every stored article's features with the new code; docIds stay."""
    from django.core.management import call_command

    from fingerprints.rule import extract
    from fingerprints.rule.features import Features

    title, body = "打着雅好幌子一百五十次收受钱财_赤峰新闻网", variant(5)
    client.post("/api/v1/articles", content_type="application/json", **auth,
                data=json.dumps({"nid": "old", "url": "https://a.example/old",
                                 "title": title, "content": body}))
    run_worker()
    article = Article.objects.get(nid="old")
    doc_id = article.doc.doc_id
    fresh = extract(title, body)
    assert Features.from_bytes(bytes(article.features)) == fresh
    # what an older release stored: the title fingerprint and key of the whole title
    stale = extract("打着雅好幌子一百五十次收受钱财 赤峰新闻网", body)
    assert stale.title_key != fresh.title_key
    Article.objects.filter(pk=article.pk).update(features=stale.to_bytes(),
                                                 title_fp=stale.title_fp)
    out = StringIO()
    call_command("rebuild_index", "--recompute", stdout=out, stderr=StringIO())
    assert "Re-extracted and indexed 1 articles." in out.getvalue()
    article.refresh_from_db()
    assert Features.from_bytes(bytes(article.features)) == fresh
    assert article.title_fp == fresh.title_fp and article.doc.doc_id == doc_id
    # without --recompute the stored features are indexed as they are
    Article.objects.filter(pk=article.pk).update(features=stale.to_bytes())
    call_command("rebuild_index", stdout=StringIO(), stderr=StringIO())
    article.refresh_from_db()
    assert Features.from_bytes(bytes(article.features)) == stale


@pytest.mark.django_db(transaction=True)
def test_a_worker_notices_an_empty_index_and_rebuilds_it_itself(client, auth, run_worker,
                                                                redis_client):
    client.post("/api/v1/articles", content_type="application/json", **auth,
                data=json.dumps({"nid": "first", "url": "https://a.example/1",
                                 "title": "工业增加值", "content": variant(3)}))
    run_worker()
    old = Article.objects.get(nid="first").doc.doc_id
    redis_client.flushdb()  # Redis restarted empty
    client.post("/api/v1/articles", content_type="application/json", **auth,
                data=json.dumps({"nid": "later", "url": "https://a.example/2",
                                 "title": "工业增加值", "content": variant(4)}))
    run_worker()
    assert Article.objects.get(nid="later").doc.doc_id == old


@pytest.mark.django_db(transaction=True)
def test_a_batch_planned_for_a_switched_generation_changes_nothing(client, auth, run_worker,
                                                                  redis_client, monkeypatch):
    from articles.index import reindex
    from articles.index.candidates import IndexUnavailable
    from articles.ingest import assign

    client.post("/api/v1/articles", content_type="application/json", **auth,
                data=json.dumps({"nid": "first", "url": "https://a.example/1",
                                 "title": "工业增加值", "content": variant(5)}))
    run_worker()
    client.post("/api/v1/articles", content_type="application/json", **auth,
                data=json.dumps({"nid": "later", "url": "https://a.example/2",
                                 "title": "工业增加值", "content": variant(6)}))
    planned = reindex.ensure_index()

    def switch_meanwhile(state=None):
        # the batch read generation `planned`; a switch lands before it takes its locks
        redis_client.set(reindex.generation_key(), "switched")
        return planned

    monkeypatch.setattr(reindex, "ensure_index", switch_meanwhile)
    with pytest.raises(IndexUnavailable):
        assign.process_articles(["later"])
    later = Article.objects.get(nid="later")
    assert (later.status, later.doc_id) == ("queued", None)
    assert not redis_client.keys("*lock*")  # no lock left behind
    monkeypatch.undo()
    redis_client.set(reindex.generation_key(), planned)
    run_worker()
    assert Article.objects.get(nid="later").doc_id == Article.objects.get(nid="first").doc_id
