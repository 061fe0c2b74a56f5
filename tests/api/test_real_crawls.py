"""What real crawls send: mixed batches, title-only pages, re-posts, limits."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from articles.models import Article, AuditEntry

pytestmark = pytest.mark.django_db(transaction=True)

BODY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长近六成。")
OTHER = ("市图书馆从下月起推出夜间借阅服务，工作日开放时间延长至晚上十点，"
         "读者可凭身份证免费办理借书证，并可在线预约自习座位。")


def article(nid: str, content: str = BODY, **extra: object) -> dict[str, object]:
    return {"nid": nid, "url": f"https://n.example/{nid}", "title": "滨江绿道全线贯通",
            "content": content, **extra}


def post(client, auth, body, query=""):
    return client.post(f"/api/v1/articles{query}", data=json.dumps(body, ensure_ascii=False),
                       content_type="application/json", **auth)


def test_a_mixed_batch_stores_the_valid_and_title_only_articles_and_refuses_each_bad_one(
        client, auth, run_worker):
    batch = [
        article("ok1"),
        article("empty", content="", title=""),  # no text at all
        article("video", content="<div class='player'></div>", title="绿道骑行视频"),
        article("badurl", url="ftp://x"),
        article("ok2", content=OTHER, title="图书馆夜间借阅"),
    ]
    response = post(client, auth, {"articles": batch})
    assert response.status_code == 202
    results = response.json()["results"]
    assert [r.get("nid") for r in results] == ["ok1", "empty", "video", "badurl", "ok2"]
    assert [r["status"] for r in results] == ["queued", "invalid", "queued", "invalid",
                                              "queued"]
    assert results[1]["index"] == 1 and "content" in results[1]["error"]["details"]
    assert results[3]["error"] == {
        "code": "invalid", "message": "some fields are invalid",
        "details": {"url": ["must be an absolute http(s) URL"]}}
    run_worker()
    stored = {a.nid: a for a in Article.objects.select_related("doc")}
    assert set(stored) == {"ok1", "video", "ok2"}
    assert all(a.status == "done" and a.doc is not None for a in stored.values())
    assert len({a.doc.doc_id for a in stored.values()}) == 3
    # a title-only page reposted under the same URL is the same docId
    again = post(client, auth, article("video-2", url="https://n.example/video", content="",
                                       title="绿道骑行视频"), "?wait=5").json()
    assert again["docId"] == stored["video"].doc.doc_id and again["matchedBy"] == "url"


def test_atomic_refuses_the_whole_batch_for_one_bad_article(client, auth, redis_client):
    response = post(client, auth, {"articles": [article("a1"), article("a2", url="x")]},
                    "?atomic=true")
    assert response.status_code == 422
    assert list(response.json()["error"]["details"]) == ["articles.1.url"]
    assert not Article.objects.exists()


def test_a_batch_with_only_bad_articles_is_422(client, auth, redis_client):
    response = post(client, auth, {"articles": [article("a1", url="x"), {"nid": 3}]})
    assert response.status_code == 422
    details = response.json()["error"]["details"]
    assert "articles.0.url" in details and "articles.1.nid" in details
    assert not Article.objects.exists()


def test_api_max_batch_is_honoured(client, auth, redis_client, settings):
    settings.API_MAX_BATCH = 3
    refused = post(client, auth, {"articles": [article(f"m{i}") for i in range(4)]})
    assert refused.status_code == 422 and "1 to 3 articles" in refused.json()["error"]["message"]
    assert not Article.objects.exists()
    assert post(client, auth, {"articles": [article(f"m{i}") for i in range(3)]}
                ).status_code == 202


def test_a_repost_changing_only_side_fields_updates_the_row_without_reprocessing(
        client, auth, run_worker):
    post(client, auth, article("r1", imageCount=1, category="city"))
    run_worker()
    before = Article.objects.get(nid="r1")
    response = post(client, auth, article("r1", imageCount=7, category="local", media="晚报"))
    assert response.status_code == 200 and response.json()["status"] == "done"
    after = Article.objects.get(nid="r1")
    assert (after.image_count, after.category, after.media) == (7, "local", "晚报")
    assert after.status == "done" and after.doc_id == before.doc_id
    assert after.processed_at == before.processed_at
    assert not AuditEntry.objects.filter(action="body_changed").exists()
    assert run_worker() == 0  # nothing was queued
    # a changed title is a change that can move the docId: processed again, audited
    assert post(client, auth, article("r1", title="另一个标题")).json()["status"] == "queued"
    assert AuditEntry.objects.filter(action="body_changed", nid="r1").exists()


def test_ingest_counts_what_it_queued_and_names_the_field_of_each_rejected_line(tmp_path):
    path = tmp_path / "in.jsonl"
    lines = [article("i1"), article("i2", content=OTHER), article("i3", url="x"),
             {**article("i4", title="视频"), "content": ""}]
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n{oops\n",
                    encoding="utf-8")
    out, err = StringIO(), StringIO()
    call_command("ingest", str(path), stdout=out, stderr=err)
    assert "Queued 3 articles (3 new, 0 changed); 0 unchanged" in out.getvalue()
    assert "rejected 2 lines" in out.getvalue()
    assert "line 3: url: must be an absolute http(s) URL" in err.getvalue()
    assert "line 5: not JSON" in err.getvalue()
    out = StringIO()
    call_command("ingest", str(path), stdout=out, stderr=StringIO())
    assert "Queued 0 articles (0 new, 0 changed); 3 unchanged" in out.getvalue()


def test_the_seed_call_takes_title_only_pages_by_the_same_rule(client, auth, redis_client):
    def seed(data):
        return client.get("/docId/getDocId", {"json": json.dumps(data, ensure_ascii=False)},
                          **auth).json()

    ok = seed({"url": "https://v.example/1", "title": "绿道骑行视频", "content": "<br>"})
    assert ok["status"] == "success" and ok["docId"]
    refused = seed({"url": "https://v.example/2", "title": "", "content": "<br>"})
    assert refused["status"] == "fail" and "content" in refused["filterReason"]


def test_health_tells_anonymous_callers_only_up_or_down(client, auth, redis_client, settings,
                                                       tmp_path):
    settings.HBASE_URL = "hbase://127.0.0.1:1?table=secret_table_name"
    from articles.representatives import outbox

    outbox.store.cache_clear()
    try:
        anonymous = client.get("/api/v1/health")
        assert anonymous.status_code == 503
        assert anonymous.json()["hbase"] == {"ok": False}
        assert "secret_table_name" not in anonymous.content.decode()
        known = client.get("/api/v1/health", **auth).json()
        assert known["hbase"]["ok"] is False and known["hbase"]["error"]
        # anonymous: up or down per store, nothing else (no versions, names or errors)
        assert all(part == {"ok": part["ok"]} for name, part in anonymous.json().items()
                   if name != "ok")
        assert "vendor" in known["database"] and "depth" in known["queue"]
    finally:
        outbox.store.cache_clear()


def test_the_seed_call_keeps_the_keys_rate_limit_and_last_use(client, redis_client,
                                                             one_rate_window):
    from articles.models import ApiKey

    key, plaintext = ApiKey.issue("seed crawler", rate_limit_per_minute=3)
    statuses = [client.get("/docId/getDocId", {"key": plaintext, "json": json.dumps(
        {"url": f"https://s.example/{i}", "title": "绿道", "content": BODY},
        ensure_ascii=False)}).status_code for i in range(5)]
    assert statuses == [200, 200, 200, 429, 429]
    limited = client.get("/docId/getDocId", {"key": plaintext, "json": "{}"})
    assert limited.json()["status"] == "fail" and 1 <= int(limited["Retry-After"]) <= 60
    assert ApiKey.objects.get(pk=key.pk).last_used_at is not None


def test_one_crawler_cannot_rewrite_anothers_articles_unless_allowed(client, auth, run_worker,
                                                                     admin_client):
    from articles.models import ApiKey

    post(client, auth, article("owned", hotness=3))
    run_worker()
    owner = Article.objects.get(nid="owned").api_key
    assert owner is not None
    other, plaintext = ApiKey.issue("other crawler")
    other_auth = {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"}
    rewrite = article("owned", title="改写的标题", url="https://evil.example/x")
    single = post(client, other_auth, rewrite)
    assert single.status_code == 409 and single.json()["error"]["code"] == "not_owner"
    batch = post(client, other_auth, {"articles": [rewrite, article("mine", content=OTHER)]})
    assert batch.status_code == 202
    first, second = batch.json()["results"]
    assert first["status"] == "conflict" and first["error"]["code"] == "not_owner"
    assert second["nid"] == "mine" and second["status"] == "queued"
    patch = client.patch("/api/v1/articles/owned", data=json.dumps({"hotness": 99}),
                         content_type="application/json", **other_auth)
    assert patch.status_code == 409
    kept = Article.objects.get(nid="owned")
    assert (kept.title, kept.url, kept.hotness) == (
        "滨江绿道全线贯通", "https://n.example/owned", 3)
    assert Article.objects.get(nid="mine").api_key_id == other.pk
    # the admin allows it for this key: now it may, and the audit names the key
    response = admin_client.post(f"/admin/articles/apikey/{other.pk}/change/", {
        "name": other.name, "rate_limit_per_minute": 6000, "may_change_others": "on"})
    assert response.status_code == 302
    assert post(client, other_auth, rewrite).status_code == 202
    entry = AuditEntry.objects.get(action="body_changed", nid="owned")
    assert entry.api_key_id == other.pk and entry.actor_label == "api:other crawler"
