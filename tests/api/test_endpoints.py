"""Every endpoint and error code through the real stack (MariaDB, Redis, a real worker)."""

from __future__ import annotations

import json

import pytest

from articles.models import ApiKey, Article, AuditEntry

pytestmark = pytest.mark.django_db(transaction=True)

BODY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长近六成。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")


def article(nid, **extra):
    return {"nid": nid, "url": f"https://n.example/{nid}", "title": "滨江绿道全线贯通",
            "content": BODY, **extra}


def post(client, auth, body, query=""):
    return client.post(f"/api/v1/articles{query}", data=json.dumps(body),
                       content_type="application/json", **auth)


def test_wait_answers_200_with_the_result(client, auth, redis_client):
    response = post(client, auth, article("w1"), "?wait=5")
    assert response.status_code == 200
    assert response.json()["status"] == "done" and response.json()["docId"]
    second = post(client, auth, article("w2", url="https://other.example/w2"), "?wait=5")
    assert second.json()["docId"] == response.json()["docId"]
    assert second.json()["duplicateOf"] == "w1"


def test_a_waiting_post_answers_what_a_later_read_returns(client, auth, redis_client):
    # The inline answer is built from the objects the request assigned: it must be the
    # committed state, the re-elected representative included.
    post(client, auth, article("r1", hotness=10), "?wait=5")
    hotter = post(client, auth, article("r2", url="https://other.example/r2", hotness=50),
                  "?wait=5").json()
    assert hotter["duplicateOf"] == "r2" and hotter["duplicate"] is True
    read = client.get("/api/v1/articles/r2", **auth).json()
    assert read == hotter
    batch = post(client, auth, {"articles": [
        article("r3", url="https://other.example/r3", hotness=1),
        article("r4", url="https://fourth.example/r4", hotness=90)]}, "?wait=5").json()
    for result in batch["results"]:
        assert result == client.get(f"/api/v1/articles/{result['nid']}", **auth).json()
        assert result["duplicateOf"] == "r4"


def test_wait_out_of_range_is_422(client, auth, redis_client):
    response = post(client, auth, article("w1"), "?wait=31")
    assert response.status_code == 422 and "wait" in response.json()["error"]["details"]
    assert not Article.objects.exists()


def test_a_batch_over_500_is_422_and_stores_nothing(client, auth, redis_client):
    response = post(client, auth, {"articles": [article(f"b{i}") for i in range(501)]})
    assert response.status_code == 422
    assert not Article.objects.exists()


def test_a_body_above_the_limit_is_413(client, auth, redis_client, settings):
    settings.API_MAX_BODY_BYTES = 2000
    response = post(client, auth, article("big", content=BODY * 20))
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"
    assert not Article.objects.exists()


def test_wrong_content_type_is_400(client, auth, redis_client):
    response = client.post("/api/v1/articles", data="nid=1", content_type="text/plain", **auth)
    assert response.status_code == 400 and response.json()["error"]["code"] == "malformed"


def test_content_that_is_only_markup_is_422_without_a_title(client, auth, redis_client):
    response = post(client, auth, article("m", content="<p> </p><br/>&nbsp;", title=" "))
    assert response.status_code == 422 and "content" in response.json()["error"]["details"]
    # with a title it is a title-only page (tests/api/test_real_crawls.py)
    assert post(client, auth, article("m", content="<p> </p><br/>&nbsp;")).status_code == 202


def test_the_rate_limit_answers_429_with_retry_after(client, redis_client, one_rate_window):
    key, plaintext = ApiKey.issue("slow crawler", rate_limit_per_minute=2)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"}
    assert client.get("/api/v1/articles/x", **headers).status_code == 404
    assert client.get("/api/v1/articles/x", **headers).status_code == 404
    response = client.get("/api/v1/articles/x", **headers)
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(response["Retry-After"]) <= 60


def test_patch_hotness_validates_and_404s(client, auth, run_worker):
    post(client, auth, article("p1"))
    run_worker()
    bad = client.patch("/api/v1/articles/p1", data=json.dumps({"hotness": -3}),
                       content_type="application/json", **auth)
    assert bad.status_code == 422
    missing = client.patch("/api/v1/articles/nope", data=json.dumps({"hotness": 3}),
                           content_type="application/json", **auth)
    assert missing.status_code == 404
    ok = client.patch("/api/v1/articles/p1", data=json.dumps({"hotness": 7}),
                      content_type="application/json", **auth)
    assert ok.status_code == 200 and Article.objects.get(nid="p1").hotness == 7
    assert AuditEntry.objects.filter(action="hotness", nid="p1").exists()


def test_get_doc_lists_members_and_404s(client, auth, run_worker):
    post(client, auth, {"articles": [article("d1", hotness=1), article("d2", hotness=9)]})
    run_worker()
    doc_id = Article.objects.get(nid="d1").doc.doc_id
    body = client.get(f"/api/v1/docs/{doc_id}", **auth).json()
    assert body["size"] == 2 and body["representative"]["nid"] == "d2"
    assert {m["nid"] for m in body["members"]} == {"d1", "d2"}
    assert client.get("/api/v1/docs/0000000000000000-0000000000000000",
                      **auth).status_code == 404


def test_similar_is_a_dry_run(client, auth, run_worker):
    post(client, auth, article("s1"))
    run_worker()
    count = Article.objects.count()
    query = {"title": "滨江绿道全线贯通", "content": BODY + "（完）"}
    response = client.post("/api/v1/similar", content_type="application/json", **auth,
                           data=json.dumps(query))
    assert response.status_code == 200
    body = response.json()
    assert body["docId"] == Article.objects.get(nid="s1").doc.doc_id
    assert body["matches"][0]["verified"] is True
    assert body["matches"][0]["probability"] > 0.99  # a copy: the model's top level
    assert Article.objects.count() == count
    assert client.post("/api/v1/similar", content_type="application/json", **auth,
                       data=json.dumps({"title": "x"})).status_code == 422


def test_a_changed_body_is_reprocessed_and_recorded(client, auth, run_worker):
    post(client, auth, article("c1"))
    run_worker()
    other = "市图书馆从下月起推出夜间借阅服务，工作日开放时间延长至晚上十点。" * 4
    response = post(client, auth, article("c1", content=other, title="图书馆夜间借阅"))
    assert response.status_code == 202
    run_worker()
    assert Article.objects.get(nid="c1").content == other
    assert AuditEntry.objects.filter(action="body_changed", nid="c1").exists()


def test_a_changed_body_in_a_big_batch_leaves_the_index_under_its_old_fingerprint(
        client, auth, run_worker):
    from articles.index import reindex
    from articles.index.candidates import Indexes
    from articles.tuning.state import active_config

    topics = [f"第{i}号公告：本市第{i}批老旧小区改造项目今日开工，涉及居民{i * 37}户。" * 3
              for i in range(12)]  # a batch above PREWRITE_MIN
    batch = [article(f"b{i}", content=text, url=f"https://b.example/{i}")
             for i, text in enumerate(topics)]
    post(client, auth, {"articles": batch})
    run_worker()
    first = Article.objects.get(nid="b0")
    old_fp = first.content_fp
    batch[0] = article("b0", content="市图书馆从下月起推出夜间借阅服务，工作日开放至十点。" * 4,
                       url="https://b.example/0", title="图书馆夜间借阅")
    batch += [article(f"b{i}", content=f"新的第{i}条消息，与其他条目无关的内容{i}。" * 5,
                      url=f"https://b.example/{i}") for i in range(12, 20)]
    post(client, auth, {"articles": batch})
    run_worker()
    again = Article.objects.get(nid="b0")
    assert again.status == "done" and again.content_fp != old_fp
    indexes = Indexes.open(active_config(), reindex.active_generation())
    assert first.pk not in [i for i, _fp, _d in indexes.content.query(old_fp)]
    assert first.pk in [i for i, _fp, _d in indexes.content.query(again.content_fp)]


def test_the_seed_call_answers_like_the_2018_system(client, api_key, redis_client):
    seed = {"url": "http://www.help.com/a", "title": "滨江绿道全线贯通", "content": BODY,
            "category": "0", "media": "sina", "imageCount": "4"}
    first = client.get("/docId/getDocId", {"json": json.dumps(seed), "key": api_key})
    assert first.status_code == 200
    body = first.json()
    assert set(body) == {"filterReason", "docId", "filterStatus", "status"}
    assert body["filterStatus"] == "good" and body["status"] == "success"
    again = client.post(f"/docId/getDocId?key={api_key}",
                        {"json": json.dumps({**seed, "url": "http://mirror.example/a"})})
    assert again.json()["docId"] == body["docId"]
    assert again.json()["filterStatus"] == "duplicate"
    assert client.get("/docId/getDocId", {"json": json.dumps(seed)}).status_code == 401
    assert client.get("/docId/getDocId", {"json": "{nope", "key": api_key}).status_code == 400


def test_openapi_and_the_browsable_docs_are_served(client, redis_client):
    schema = client.get("/api/openapi.json").json()
    assert "/api/v1/articles" in schema["paths"]
    assert "ArticleIn" in schema["components"]["schemas"]
    assert client.get("/api/docs").status_code == 200
