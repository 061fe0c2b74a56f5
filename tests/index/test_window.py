"""The index's time window: out-of-window articles are not found, expiry is
incremental and safe with concurrent ingest, URLs stay known, rebuilds load the window."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from articles.index import reindex, window
from articles.models import Article, EngineSettings
from fingerprints.stores.block_index import RedisBlockIndex
from fingerprints.stores.key_index import RedisKeyIndex
from fingerprints.stores.url_map import RedisUrlMap
from tests.ingest.test_concurrency import finish_retried_batches, start_workers, variant

BODY = ("江城滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长近六成。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")
OTHER = ("市气象台今天发布寒潮蓝色预警，受强冷空气影响，未来三天全市气温将下降八到十度，"
         "最低气温可达零下五度，并伴有四到五级偏北风。气象部门提醒市民注意防寒保暖，"
         "农业、交通和电力部门做好应对准备，户外作业人员减少高空作业，注意防范道路结冰。")


def test_lookups_skip_ids_below_the_floor_and_expiry_drops_them(redis_client):
    rng = np.random.default_rng(3)
    fps = rng.integers(0, 2**64 - 1, size=200, dtype=np.uint64, endpoint=True)
    blocks = RedisBlockIndex(redis_client, 3, namespace="t:c")
    blocks.bulk_load(np.arange(1, 201), fps)
    keys = RedisKeyIndex(redis_client, namespace="t:x")
    keys.add_many([(i, [i * 7919 % 2**32, i * 104729 % 2**32]) for i in range(1, 201)])
    assert [i for i, _f, _d in blocks.query(int(fps[10]), 0)] == [11]
    assert keys.query_many([[11 * 7919]])[0] == {11}
    blocks.floor = keys.floor = 100
    assert blocks.query(int(fps[10]), 0) == []
    assert blocks.query_probes([[int(fps[10])]], 0) == [[]]
    assert keys.query_many([[11 * 7919]])[0] == set()
    assert [i for i, _f, _d in blocks.query(int(fps[150]), 0)] == [151]
    before = sum(len(redis_client.get(k)) for k in redis_client.scan_iter("t:c:k3:b*"))
    cursor, dropped = 0, 0
    while True:  # a whole pass, a few keys at a time
        cursor, n = blocks.expire_step(cursor, 100, count=50)
        dropped += n
        if cursor == 0:
            break
    assert dropped == 99 * 4
    after = sum(len(redis_client.get(k)) for k in redis_client.scan_iter("t:c:k3:b*"))
    assert before - after == 99 * 4 * 12
    assert len(blocks) == 101
    cursor, dropped = 0, 0
    while True:
        cursor, n = keys.expire_step(cursor, 100, count=50)
        dropped += n
        if cursor == 0:
            break
    assert dropped == 99 * 2
    # records at or above the floor are all still there
    blocks.floor = keys.floor = 0
    assert all(blocks.query(int(fps[i - 1]), 0)[0][0] == i for i in range(100, 201))
    assert keys.query_many([[150 * 7919 % 2**32]])[0] == {150}


pytestmark_db = pytest.mark.django_db(transaction=True)


def post(client, auth, nid, body, url=None, title="滨江绿道贯通"):
    response = client.post(
        "/api/v1/articles", content_type="application/json", **auth,
        data=json.dumps({"nid": nid, "url": url or f"https://n.example/{nid}", "title": title,
                         "content": body}))
    assert response.status_code in (200, 202), response.content


def set_window(days):
    settings = EngineSettings.load()
    settings.index_window_days = days
    settings.save()
    window.forget_floor()


def age(nid, days):
    Article.objects.filter(nid=nid).update(received_at=timezone.now() - timedelta(days=days))
    window.forget_floor()


@pytestmark_db
def test_an_article_older_than_the_window_is_not_found_a_newer_one_is(client, auth,
                                                                       run_worker):
    post(client, auth, "old", BODY)
    post(client, auth, "new", OTHER, title="寒潮蓝色预警")
    run_worker()
    age("old", 40)
    set_window(30)
    assert window.floor() == Article.objects.get(nid="old").pk + 1
    post(client, auth, "old-repost", BODY + "（完）")
    post(client, auth, "new-repost", OTHER + "（完）", title="寒潮蓝色预警")
    run_worker()
    rows = {a.nid: a for a in Article.objects.all()}
    assert rows["old-repost"].doc_id != rows["old"].doc_id  # outside the window: new docId
    assert rows["new-repost"].doc_id == rows["new"].doc_id
    # with the window off, the old article is found again
    set_window(0)
    post(client, auth, "old-repost-2", BODY + "（记者 王明）")
    run_worker()
    assert Article.objects.get(nid="old-repost-2").doc_id in {rows["old"].doc_id,
                                                            rows["old-repost"].doc_id}


@pytestmark_db
def test_a_url_older_than_the_window_still_joins_its_doc(client, auth, run_worker,
                                                        redis_client, settings):
    post(client, auth, "old", BODY, url="https://n.example/story")
    run_worker()
    age("old", 40)
    set_window(30)
    generation = reindex.active_generation()
    names = reindex.namespaces(generation)
    urls = RedisUrlMap(redis_client, namespace=names["u"])
    assert urls.records() == 1
    while not window.expire(generation, names)["pass_complete"]:
        pass
    assert urls.records() == 0  # expired from Redis with the window
    post(client, auth, "again", OTHER, url="https://n.example/story", title="寒潮")
    run_worker()
    again = Article.objects.get(nid="again")
    assert (again.doc_id, again.matched_by) == (Article.objects.get(nid="old").doc_id, "url")
    answer = client.post("/api/v1/similar", content_type="application/json", **auth,
                         data=json.dumps({"title": "x", "content": OTHER,
                                          "url": "https://n.example/story"})).json()
    assert any(m["matchedBy"] == "url" for m in answer["matches"])


@pytestmark_db
def test_rebuild_index_loads_only_the_window(client, auth, run_worker, redis_client):
    post(client, auth, "old", BODY)
    post(client, auth, "new", OTHER, title="寒潮蓝色预警")
    run_worker()
    age("old", 40)
    set_window(30)
    reindex.build()
    names = reindex.namespaces(reindex.active_generation())
    ids = set()
    for key in redis_client.scan_iter(f"{names['c']}:*:b*"):
        data = redis_client.get(key)
        ids.update(np.frombuffer(data, dtype=[("fp", "<u8"), ("id", "<u4")])["id"].tolist())
    assert ids == {Article.objects.get(nid="new").pk}


@pytest.mark.mysql
@pytestmark_db
def test_expiry_during_concurrent_ingest_loses_nothing_and_splits_no_story(client, auth,
                                                                           redis_client):
    # 40 old articles of another story, outside the window, then 200 reposts of one
    # story raced by three worker processes while expiry passes run again and again
    for n in range(40):
        post(client, auth, f"o{n}", OTHER + f"（第{n}期）", title="寒潮")
    Article.objects.update(received_at=timezone.now() - timedelta(days=40))
    set_window(30)
    for n in range(200):
        post(client, auth, f"v{n}", variant(n), url=f"https://site{n}.example/a",
             title="前三季度工业增加值增长5.8%")
    stop = threading.Event()
    passes = []

    def expire_loop():
        from django.db import connection
        while not stop.is_set():
            generation = reindex.active_generation()
            if generation:
                passes.append(window.expire(generation, reindex.namespaces(generation),
                                            keys_per_step=200))
            # a pause between passes: a loop without one takes a core from the three
            # workers it races (a pass every 20 ms still lands between their batches)
            stop.wait(0.02)
        connection.close()

    thread = threading.Thread(target=expire_loop)
    thread.start()
    workers = start_workers(3)
    try:
        for worker in workers:
            _out, err = worker.communicate(timeout=600)
            assert worker.returncode == 0, err.decode()[-2000:]
    finally:
        stop.set()
        thread.join()
    finish_retried_batches()
    assert passes
    fresh = Article.objects.filter(nid__startswith="v")
    assert fresh.filter(status="done").count() == 200
    assert fresh.values("doc_id").distinct().count() == 1
    # the out-of-window records are gone from Redis, the window's are all there
    names = reindex.namespaces(reindex.active_generation())
    while not window.expire(reindex.active_generation(), names)["pass_complete"]:
        pass
    ids = set()
    for key in redis_client.scan_iter(f"{names['c']}:*:b*"):
        ids.update(np.frombuffer(redis_client.get(key),
                                 dtype=[("fp", "<u8"), ("id", "<u4")])["id"].tolist())
    assert ids == set(fresh.values_list("id", flat=True))
