"""The hottest member of every docId, delivered to HBase through the outbox.

No HBase server can be installed here: these tests run the real happybase
client against support/hbase_server.py, a small server implementing HBase's
Thrift (v1) interface with in-memory tables.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from articles.models import Doc, OutboxStatus, RepresentativeOutbox
from articles.representatives import outbox
from articles.representatives.stores import HBaseStore, StoreUnavailable
from support.hbase_server import spawn_server_process

# dialect: the election's bulk SQL and row locks
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.dialect]

BODY = (
    "江城滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
    "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长近六成。"
    "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。"
)


@pytest.fixture
def hbase(settings, tmp_path):
    with spawn_server_process(port=0, data_path=tmp_path / "hbase.log") as server:
        settings.HBASE_URL = f"{server.url}?table=dedup_docs&timeout=2000"
        outbox.store.cache_clear()
        yield server
    outbox.store.cache_clear()


def post(client, auth, nid, hotness, body=BODY, media="Daily"):
    response = client.post(
        "/api/v1/articles", content_type="application/json", **auth,
        data=json.dumps({"nid": nid, "url": f"https://n.example/{nid}", "title": "滨江绿道贯通",
                         "content": body, "hotness": hotness, "media": media}),
    )
    assert response.status_code in (200, 202), response.content


def stored(doc_id):
    return outbox.store().get(doc_id)


def test_the_first_member_is_pushed_and_a_hotter_one_replaces_it(client, auth, run_worker,
                                                                hbase):
    assert isinstance(outbox.store(), HBaseStore)
    post(client, auth, "a", hotness=10)
    run_worker()
    doc = Doc.objects.get()
    row = stored(doc.doc_id)
    assert row["nid"] == "a" and row["clusterSize"] == 1 and row["content"] == BODY

    post(client, auth, "b", hotness=50)
    post(client, auth, "c", hotness=20)
    run_worker()
    row = stored(doc.doc_id)
    assert row["nid"] == "b"
    assert row["clusterSize"] == 3
    assert RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING).count() == 0


def test_a_hotness_patch_re_elects(client, auth, run_worker, hbase):
    post(client, auth, "a", hotness=10)
    post(client, auth, "b", hotness=20)
    run_worker()
    doc_id = Doc.objects.get().doc_id
    assert stored(doc_id)["nid"] == "b"
    response = client.patch("/api/v1/articles/a", data=json.dumps({"hotness": 99}),
                            content_type="application/json", **auth)
    assert response.status_code == 200
    assert response.json()["duplicateOf"] == "a"
    run_worker()
    assert stored(doc_id)["nid"] == "a"
    assert stored(doc_id)["hotness"] == 99.0


def test_media_weight_counts_in_the_election(client, auth, run_worker, hbase):
    from articles.models import MediaWeight

    MediaWeight.objects.create(media="Wire", weight=5)
    post(client, auth, "a", hotness=30, media="Blog")
    post(client, auth, "b", hotness=10, media="Wire")
    run_worker()
    assert stored(Doc.objects.get().doc_id)["nid"] == "b"


def test_nothing_is_lost_while_hbase_is_down(client, auth, run_worker, hbase):
    post(client, auth, "a", hotness=10)
    run_worker()
    doc_id = Doc.objects.get().doc_id

    hbase.stop()
    with pytest.raises(StoreUnavailable):
        outbox.store().ping()
    post(client, auth, "b", hotness=40)
    client.patch("/api/v1/articles/a", data=json.dumps({"hotness": 60}),
                 content_type="application/json", **auth)
    run_worker()  # the ingest job succeeds; the push fails and is scheduled for retry
    pending = RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING)
    assert pending.count() >= 2
    assert pending.filter(attempts__gt=0).exists()

    hbase.start()
    outbox.push_pending()
    assert RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING).count() == 0
    row = stored(doc_id)
    assert row["nid"] == "a" and row["hotness"] == 60.0 and row["clusterSize"] == 2


def test_an_older_state_never_overwrites_a_newer_one(client, auth, run_worker, hbase):
    post(client, auth, "a", hotness=10)
    run_worker()
    doc = Doc.objects.get()
    newer = stored(doc.doc_id)
    assert not outbox.store().put_if_newer(
        doc.doc_id, {**newer, "nid": "stale"}, version=doc.rep_version - 1)
    assert stored(doc.doc_id)["nid"] == "a"


def test_sync_repairs_deleted_altered_and_added_rows(client, auth, run_worker, hbase):
    other = "完全不同的一篇文章，讲的是图书馆夜间借阅服务的开通和读书会安排。" * 5
    longer = BODY.replace("江城", "海城") + "另一条新闻的结尾。" * 20
    for n, body in enumerate([BODY, longer, other]):
        post(client, auth, f"n{n}", hotness=n, body=body)
    run_worker()
    docs = list(Doc.objects.order_by("id"))
    store = outbox.store()
    store.delete(docs[0].doc_id)
    altered = stored(docs[-1].doc_id)
    store.put(docs[-1].doc_id, {**altered, "title": "tampered"})
    store.put("ffffffffffffffff-ffffffffffffffff", {**altered, "nid": "ghost"})

    out = StringIO()
    call_command("sync_representatives", stdout=out, stderr=StringIO())
    assert f"Checked {len(docs)} docIds: 1 missing, 1 stale, 1 orphaned" in out.getvalue()
    assert stored(docs[0].doc_id)["nid"] == docs[0].representative.nid
    assert stored(docs[-1].doc_id)["title"] != "tampered"
    assert stored("ffffffffffffffff-ffffffffffffffff") is None

    out = StringIO()
    call_command("sync_representatives", stdout=out, stderr=StringIO())
    assert "0 missing, 0 stale, 0 orphaned" in out.getvalue()


def test_the_local_store_is_the_default(client, auth, run_worker, settings, tmp_path):
    settings.HBASE_URL = ""
    settings.LOCAL_REPRESENTATIVE_STORE = tmp_path / "reps.sqlite3"
    outbox.store.cache_clear()
    post(client, auth, "a", hotness=10)
    run_worker()
    assert stored(Doc.objects.get().doc_id)["nid"] == "a"
    outbox.store.cache_clear()


def test_editor_choice_split_and_merge_reach_hbase_and_a_dissolved_doc_is_deleted(
        client, auth, run_worker, hbase):
    from articles.editor import actions
    from articles.models import Article

    other = ("市图书馆从下月起推出夜间借阅服务，工作日开放时间延长至晚上十点，"
             "并在一楼大厅设置自助借还机。") * 3
    post(client, auth, "a", hotness=10)
    post(client, auth, "b", hotness=50)
    post(client, auth, "c", hotness=30)
    post(client, auth, "x", hotness=5, body=other)
    run_worker()
    doc = Article.objects.get(nid="a").doc
    other_doc = Article.objects.get(nid="x").doc
    assert stored(doc.doc_id)["nid"] == "b"

    actions.choose_representative(Article.objects.get(nid="a"), None)  # the editor's choice
    run_worker()
    assert stored(doc.doc_id)["nid"] == "a"
    post(client, auth, "d", hotness=99)  # hotter, but the editor's choice wins
    run_worker()
    assert stored(doc.doc_id)["nid"] == "a" and stored(doc.doc_id)["clusterSize"] == 4

    new = actions.split_article(Article.objects.get(nid="a"), None)  # the chosen one leaves
    run_worker()
    assert stored(new.doc_id)["nid"] == "a" and stored(new.doc_id)["clusterSize"] == 1
    assert stored(doc.doc_id)["nid"] == "d"  # re-elected by hotness: the pin left with a
    assert stored(doc.doc_id)["clusterSize"] == 3

    actions.merge_docs(other_doc, doc, None)  # x's doc dissolves into doc
    run_worker()
    assert stored(other_doc.doc_id) is None
    assert stored(doc.doc_id)["clusterSize"] == 4
    assert RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING).count() == 0


def test_a_push_job_delivers_a_bounded_chunk_and_enqueues_its_successor(
        client, auth, run_worker):
    import django_rq

    from articles.ingest.assign import process_articles

    topics = ["苹果公司发布新款手机，售价比上一代上涨两成。",
              "足球联赛今晚开赛，主队迎战去年冠军。",
              "台风预计明天登陆沿海，气象台发布橙色预警。",
              "央行宣布下调存款准备金率零点五个百分点。",
              "博物馆新展开幕，展出三百件出土青铜器。"]
    for i, topic in enumerate(topics):
        client.post("/api/v1/articles", content_type="application/json", **auth,
                    data=json.dumps({"nid": f"t{i}", "url": f"https://t.example/{i}",
                                     "title": topic[:6], "content": topic * 6}))
    process_articles([f"t{i}" for i in range(5)])
    assert RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING).count() == 5
    assert outbox.push_pending(0, 1, limit=2, rounds=1) == 2
    assert RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING).count() == 3
    successors = [job for job in django_rq.get_queue("push").get_jobs()
                  if job.func_name.endswith("push_pending") and job.args[:2] == (0, 1)]
    assert len(successors) == 1
    run_worker()
    assert RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING).count() == 0
    assert all(stored(d.doc_id) is not None for d in Doc.objects.all())


def test_pushes_wait_for_the_delay_and_one_job_carries_every_change_meanwhile(
        client, auth, redis_client, settings):
    import time

    import django_rq
    from rq import SimpleWorker

    settings.PUSH_DELAY_MS = 300
    for nid in ("d1", "d2", "d3"):
        post(client, auth, nid, hotness=10, body=BODY + nid * 3)
        client.get(f"/api/v1/articles/{nid}", **auth)
    from articles.ingest.assign import process_articles

    process_articles(["d1", "d2", "d3"])
    queue = django_rq.get_queue("push")
    assert queue.count == 0  # nothing enqueued yet: scheduled
    assert len(queue.scheduled_job_registry.get_job_ids()) == settings.PUSH_JOBS
    time.sleep(0.4)
    worker = SimpleWorker([queue], connection=queue.connection)
    worker.work(burst=True, with_scheduler=True)  # the scheduler enqueues what is due
    assert RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING).count() == 0
    assert all(stored(d.doc_id) is not None for d in Doc.objects.all())
