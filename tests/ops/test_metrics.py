"""GET /metrics: what the stack did, counted across processes in Redis and read back in
Prometheus's text format; who may read it; a store down fails no caller."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from articles.ingest import assign, jobs
from articles.models import Article, ArticleStatus
from dedupsite import metrics

pytestmark = pytest.mark.django_db(transaction=True)

BODY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长近六成。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")
OTHER = ("市气象台今天上午发布寒潮蓝色预警，受强冷空气影响，未来三天全市气温将下降八到十度，"
         "最低气温可达零下五度，并伴有五到六级偏北风。气象部门提醒市民注意防寒保暖。")


def scrape(client, **headers) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples, name, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def post(client, auth, body):
    return client.post("/api/v1/articles", data=json.dumps(body),
                       content_type="application/json", **auth)


def test_metrics_count_what_the_queue_and_the_worker_did(client, auth, redis_client,
                                                         run_worker):
    articles = [{"nid": "m1", "url": "https://a.example/1", "title": "滨江绿道全线贯通",
                 "content": BODY},
                {"nid": "m2", "url": "https://b.example/2", "title": "滨江绿道全线贯通",
                 "content": BODY + "（记者 王明）"},
                {"nid": "m3", "url": "https://c.example/3", "title": "寒潮蓝色预警",
                 "content": OTHER}]
    assert post(client, auth, {"articles": articles}).status_code == 202
    assert post(client, auth, articles[2]).status_code == 202  # the same payload again
    waiting = scrape(client)
    assert value(waiting, "dedupsite_articles_received_total", kind="new") == 3
    assert value(waiting, "dedupsite_articles_received_total", kind="unchanged") == 1
    assert value(waiting, "dedupsite_queue_depth", queue="ingest") >= 1
    assert value(waiting, "dedupsite_articles_queued") == 3
    assert value(waiting, "dedupsite_queue_oldest_age_seconds", queue="ingest") >= 0
    assert value(waiting, "dedupsite_http_requests_total", area="api", status="2xx") == 2
    assert value(waiting, "dedupsite_workers", queue="ingest") == 0

    assert run_worker() >= 1
    done = scrape(client)
    assert value(done, "dedupsite_articles_processed_total", reason="new") == 2
    joined = {labels: v for (name, labels), v in done.items()
              if name == "dedupsite_articles_processed_total" and labels != (("reason", "new"),)}
    assert sum(joined.values()) == 1 and Article.objects.get(nid="m2").matched_by in {
        dict(labels)["reason"] for labels in joined}
    assert value(done, "dedupsite_processing_seconds_count", scope="article") == 3
    assert value(done, "dedupsite_processing_seconds_count", scope="batch") >= 1
    assert value(done, "dedupsite_job_run_seconds_count", queue="ingest", outcome="ok") >= 1
    assert value(done, "dedupsite_job_wait_seconds_count", queue="ingest") >= 1
    assert value(done, "dedupsite_job_wait_seconds_bucket", queue="ingest", le="+Inf") == \
        value(done, "dedupsite_job_wait_seconds_count", queue="ingest")
    assert value(done, "dedupsite_queue_depth", queue="ingest") == 0
    assert value(done, "dedupsite_articles_queued") == 0
    assert value(done, "dedupsite_articles_oldest_queued_age_seconds") == 0
    assert value(done, "dedupsite_index_ready") == 1
    assert value(done, "dedupsite_index_articles") == 3
    assert value(done, "dedupsite_index_redis_memory_bytes") > 0
    assert value(done, "dedupsite_outbox_pending") >= 0
    for store in ("database", "redis", "index_redis", "representatives"):
        assert value(done, "dedupsite_up", store=store) == 1
    # the first scrape was counted by the second
    assert value(done, "dedupsite_http_requests_total", area="metrics", status="2xx") == 1


def test_failures_are_counted_by_stage(redis_client, monkeypatch):
    Article.objects.create(nid="f1", url="https://f.example/1", title="t", content=BODY)

    def broken(nids, **kwargs):
        raise RuntimeError("the engine broke")

    monkeypatch.setattr(assign, "process_articles", broken)
    with pytest.raises(RuntimeError):
        jobs.process_batch(["f1"])  # no RQ job around it: no retries left
    assert Article.objects.get(nid="f1").status == ArticleStatus.FAILED
    raw = metrics.read(metrics.METRICS["dedupsite_article_failures_total"])
    assert raw == {"gave_up": 1.0}


def test_editor_decisions_are_counted_by_kind(client, auth, redis_client, admin_user):
    from articles.editor import actions

    client.post("/api/v1/articles?wait=5", data=json.dumps(
        {"nid": "e1", "url": "https://e.example/1", "title": "滨江绿道", "content": BODY}),
        content_type="application/json", **auth)
    doc = Article.objects.get(nid="e1").doc
    decision = actions.confirm_doc(doc, admin_user)
    assert decision is not None
    counted = metrics.read(metrics.METRICS["dedupsite_editor_decisions_total"])
    assert counted == {f"confirm{metrics.LABEL_SEP}hand": 1.0}


@pytest.mark.parametrize(("remote", "forwarded", "proxies", "expected"), [
    ("127.0.0.1", None, 0, 200),
    ("::1", None, 0, 200),
    ("10.0.0.5", None, 0, 403),
    ("127.0.0.1", "203.0.113.9", 0, 403),  # a proxy TRUSTED_PROXIES does not know
    ("127.0.0.1", "203.0.113.9", 1, 403),  # the proxy says: a remote client
    ("127.0.0.1", "127.0.0.1", 1, 200),
])
def test_without_a_token_only_loopback_callers_read_metrics(client, redis_client, settings,
                                                            remote, forwarded, proxies,
                                                            expected):
    settings.METRICS_TOKEN = ""
    settings.TRUSTED_PROXIES = proxies
    headers = {"REMOTE_ADDR": remote}
    if forwarded:
        headers["HTTP_X_FORWARDED_FOR"] = forwarded
    response = client.get("/metrics", **headers)
    assert response.status_code == expected
    if expected == 403:
        assert response.json()["error"]["code"] == "forbidden"


def test_with_a_token_only_its_bearer_reads_metrics(client, redis_client, settings):
    settings.METRICS_TOKEN = "s3cret-token-for-prometheus"
    assert client.get("/metrics").status_code == 401  # loopback is not enough now
    wrong = client.get("/metrics", HTTP_AUTHORIZATION="Bearer nope")
    assert wrong.status_code == 401 and wrong["WWW-Authenticate"].startswith("Bearer")
    right = client.get("/metrics", REMOTE_ADDR="198.51.100.7",
                       HTTP_AUTHORIZATION="Bearer s3cret-token-for-prometheus")
    assert right.status_code == 200 and b"dedupsite_up" in right.content
    assert client.post("/metrics").status_code == 405


def test_redis_down_fails_no_caller_and_the_scrape_says_so(client, redis_client, settings):
    from dedupsite import redis_store

    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    settings.INDEX_REDIS_URL = settings.REDIS_URL
    settings.RQ_QUEUES = {name: {**queue, "URL": settings.REDIS_URL}
                          for name, queue in settings.RQ_QUEUES.items()}
    redis_store.reset_client()
    metrics.inc("dedupsite_articles_processed_total", reason="new")  # dropped, not raised
    samples = scrape(client)
    assert value(samples, "dedupsite_up", store="redis") == 0
    assert value(samples, "dedupsite_up", store="database") == 1
    assert value(samples, "dedupsite_articles_queued") == 0  # the database still answers
    assert ("dedupsite_queue_depth", (("queue", "ingest"),)) not in samples


def test_every_metric_the_docs_list_is_exported_and_the_other_way_round(client, auth,
                                                                          redis_client):
    import re
    from pathlib import Path

    post(client, auth, {"nid": "d1", "url": "https://d.example/1", "title": "t",
                        "content": BODY})
    exported = {name for name, _labels in scrape(client)}
    families = {re.sub(r"_(bucket|sum|count)$", "", n) for n in exported}
    families |= set(metrics.METRICS)  # counters not yet incremented still count
    doc = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    documented = set(re.findall(r"`(dedupsite_[a-z_]+)`", doc))
    assert families - documented == set(), "exported but not in docs/operations.md"
    assert documented - families == set(), "in docs/operations.md but not exported"


def test_the_watchdog_counts_its_passes_and_repairs(redis_client):
    from articles.ingest import watchdog

    Article.objects.create(nid="lost", url="https://l.example/1", title="t", content=BODY,
                           received_at=timezone.now() - timedelta(minutes=10))
    watchdog.tick()  # the article's job never ran: queued again
    ticks = metrics.read(metrics.METRICS["dedupsite_watchdog_ticks_total"])
    repairs = metrics.read(metrics.METRICS["dedupsite_watchdog_recoveries_total"])
    assert ticks == {"": 1.0}
    assert repairs.get("requeued") == 1.0


def test_a_killed_worker_stops_counting_once_its_registration_expires(client, redis_client):
    import django_rq
    from rq.worker_registration import get_keys, register

    from articles.ops.worker import MeteredWorker

    queue = django_rq.get_queue("ingest")
    worker = MeteredWorker([queue], connection=queue.connection)
    register(worker)
    redis_client.hset(worker.key, "birth", "now")  # what a live worker's heartbeat keeps
    assert value(scrape(client), "dedupsite_workers", queue="ingest") == 1
    redis_client.delete(worker.key)  # its heartbeat expired: the process is gone
    assert worker.key in get_keys(queue=queue)  # RQ's registry still lists it
    assert value(scrape(client), "dedupsite_workers", queue="ingest") == 0
