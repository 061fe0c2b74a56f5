"""The crawler's path through the real API, a real RQ worker, the real database and Redis."""

from __future__ import annotations

import json

import pytest

from articles.models import Article, Doc
from fingerprints.rule.comparison import COMPARISONS
from fingerprints.rule.vector_model import shipped_vector_model

# dialect: the whole write path: bulk INSERT, row locks, the batch UPDATE, unsigned columns
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.dialect]

BODY = (
    "江城滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
    "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长近六成。"
    "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。"
    "市园林局有关负责人说，滨江绿道是城市更新的重点项目之一，下一步将与城区慢行系统衔接。"
)
OTHER = (
    "市图书馆从下月起推出夜间借阅服务，工作日开放时间延长至晚上十点，并在一楼大厅设置自助借还机。"
    "图书馆馆长表示，过去一年读者问卷显示，超过七成受访者希望在下班后也能借书。"
    "此外，图书馆还将每月举办两场晚间读书会，邀请本地作家和学者与读者交流。"
    "馆方提醒，夜间时段仅开放一至三层阅览区，古籍和特藏文献仍需在白天预约查阅。"
)


def post(client, auth, body, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return client.post(f"/api/v1/articles?{query}", data=json.dumps(body),
                       content_type="application/json", **auth)


def article(nid, content, **extra):
    return {"nid": nid, "url": f"https://news.example/{nid}", "title": "滨江绿道全线贯通",
            "content": content, **extra}


def test_it_queues_an_article_and_a_worker_gives_it_a_doc_id(client, auth, run_worker):
    response = post(client, auth, article("a1", BODY))
    assert response.status_code == 202
    assert response.json() == {
        "nid": "a1", "status": "queued", "docId": None, "duplicate": False, "matchedBy": None,
        "duplicateOf": None, "distance": None, "similarity": None, "matchProbability": None,
        "matchExplanation": None, "failureReason": None, "images": [],
    }
    assert Article.objects.get(nid="a1").status == "queued"

    assert run_worker() == 3  # the ingest job, then a push job per outbox slice (PUSH_JOBS=2)

    result = client.get("/api/v1/articles/a1", **auth).json()
    assert result["status"] == "done"
    assert result["docId"] == Doc.objects.get().doc_id
    assert len(result["docId"]) == 33 and result["docId"][16] == "-"
    assert result["duplicate"] is False
    assert result["duplicateOf"] == "a1"


def test_the_same_text_under_two_nids_gets_one_doc_id(client, auth, run_worker):
    post(client, auth, article("a1", BODY))
    run_worker()
    post(client, auth, article("a2", BODY, url="https://mirror.example/a2"))
    run_worker()
    first = client.get("/api/v1/articles/a1", **auth).json()
    second = client.get("/api/v1/articles/a2", **auth).json()
    assert second["docId"] == first["docId"]
    assert second["duplicate"] is True
    assert second["matchedBy"] in {"title", "content"}
    assert second["distance"] == 0
    assert Doc.objects.get(doc_id=first["docId"]).size == 2
    # the match model's probability and how its weights add up; none for a new docId
    assert first["matchProbability"] is None and first["matchExplanation"] is None
    # (the default model on the comparison vector: every comparison with its measure,
    # and a calibrated probability instead of the logistic of the weight)
    explained = second["matchExplanation"]
    model = shipped_vector_model()
    assert (explained["model"], explained["prior"]) == (model.version, model.prior)
    assert [w["comparison"] for w in explained["weights"]] == list(COMPARISONS)
    jaccard = explained["weights"][0]
    assert (jaccard["level"], jaccard["value"]) == (">= 0.95", 1.0) and jaccard["weight"] > 0
    total = explained["prior"] + sum(w["weight"] for w in explained["weights"])
    assert explained["matchWeight"] == pytest.approx(total, abs=1e-6)
    assert second["matchProbability"] == pytest.approx(explained["probability"])
    assert second["matchProbability"] > 0.99
    members = client.get(f"/api/v1/docs/{first['docId']}", **auth).json()["members"]
    assert {m["nid"]: m["matchProbability"] for m in members} == {
        "a1": None, "a2": second["matchProbability"]}
    # a canonical-URL match is a hard rule: probability 1, no weights
    post(client, auth, {**article("a3", OTHER), "url": "https://mirror.example/a2?utm_source=x"})
    run_worker()
    by_url = client.get("/api/v1/articles/a3", **auth).json()
    assert by_url["matchedBy"] == "url" and by_url["matchProbability"] == 1.0
    assert by_url["matchExplanation"] == {"rule": "url", "model": None, "prior": None,
                                          "matchWeight": None, "probability": None,
                                          "weights": []}


def test_a_different_text_gets_a_new_doc_id(client, auth, run_worker):
    post(client, auth, article("a1", BODY))
    post(client, auth, {**article("b1", OTHER), "title": "图书馆推出夜间借阅服务"})
    run_worker()
    first = client.get("/api/v1/articles/a1", **auth).json()
    other = client.get("/api/v1/articles/b1", **auth).json()
    assert first["status"] == other["status"] == "done"
    assert other["docId"] != first["docId"]
    assert other["duplicate"] is False
    assert Doc.objects.count() == 2


def test_an_unknown_nid_is_404(client, auth):
    response = client.get("/api/v1/articles/nope", **auth)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("header", [None, "Bearer wrong", "Bearer dd_abcd1234_nope", "Basic x"])
def test_a_request_without_a_valid_key_is_401(client, header, redis_client):
    extra = {"HTTP_AUTHORIZATION": header} if header else {}
    response = client.post("/api/v1/articles", data=json.dumps(article("x", BODY)),
                           content_type="application/json", **extra)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert not Article.objects.exists()


def test_a_revoked_key_is_refused(client, auth, redis_client):
    from django.utils import timezone

    from articles.models import ApiKey

    ApiKey.objects.update(revoked_at=timezone.now())
    assert client.get("/api/v1/articles/a1", **auth).status_code == 401


def test_a_key_revoked_in_admin_is_refused_at_once_despite_the_key_cache(
        client, auth, redis_client, settings):
    from django.utils import timezone

    from articles.models import ApiKey

    settings.API_KEY_CACHE_SECONDS = 60
    assert client.get("/api/v1/articles/a1", **auth).status_code == 404  # key now cached
    # a write that bypasses the model is only seen once the cache entry expires...
    ApiKey.objects.update(rate_limit_per_minute=7)
    assert client.get("/api/v1/articles/a1", **auth).status_code == 404
    # ...while saving the key (the admin form, the revoke action) drops the cache
    key = ApiKey.objects.get()
    key.revoked_at = timezone.now()
    key.save()
    assert client.get("/api/v1/articles/a1", **auth).status_code == 401
    settings.API_KEY_CACHE_SECONDS = 0
    ApiKey.objects.update(revoked_at=None)
    assert client.get("/api/v1/articles/a1", **auth).status_code == 404


def test_posting_the_same_nid_again_is_idempotent(client, auth, run_worker):
    post(client, auth, article("a1", BODY))
    run_worker()
    again = post(client, auth, article("a1", BODY))
    assert again.status_code == 200
    assert again.json()["status"] == "done"
    assert Article.objects.count() == 1
    assert run_worker() == 0


def test_a_batch_is_stored_together_and_processed(client, auth, run_worker):
    body = {"articles": [article("a1", BODY), article("a2", BODY + "（完）"),
                         {**article("b1", OTHER), "title": "图书馆夜间借阅"}]}
    response = post(client, auth, body)
    assert response.status_code == 202
    assert [r["nid"] for r in response.json()["results"]] == ["a1", "a2", "b1"]
    run_worker()
    docs = {a.nid: a.doc.doc_id for a in Article.objects.select_related("doc")}
    assert docs["a1"] == docs["a2"] != docs["b1"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"nid": "x", "url": "https://a.example/x"}, "content"),
        ({"nid": "", "url": "https://a.example/x", "content": "text"}, "nid"),
        ({"nid": "x", "url": "not a url", "content": "text"}, "url"),
        ({"nid": "x", "url": "https://a.example/x", "content": "t", "hotness": -1}, "hotness"),
        ({"nid": "x", "url": "https://a.example/x", "content": "a\x00b"}, "content"),
    ],
)
def test_invalid_fields_get_a_422_per_field(client, auth, body, field, redis_client):
    response = post(client, auth, body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert field in error["details"]
    assert not Article.objects.exists()


def test_malformed_json_is_400(client, auth, redis_client):
    response = client.post("/api/v1/articles", data="{not json", content_type="application/json",
                           **auth)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "malformed"


def test_health_reports_the_stores(client, redis_client):
    body = client.get("/api/v1/health").json()
    assert body["ok"] is True
    assert body["database"]["ok"] and body["redis"]["ok"]


def test_the_seed_papers_short_pair_shares_a_doc_id(client, auth, run_worker):
    # the 2018 seed paper's demonstration pair: a SimHash of a few words is noise (14
    # bits apart here); the key index finds the pair, the short-text rule accepts it
    post(client, auth, {"nid": "seed-a", "url": "https://a.example/1", "title": "计算机应用与软件",
                        "content": "海量网络文本去重系统实验测试，这是一段测试文本的内容。"})
    run_worker()
    post(client, auth, {"nid": "seed-b", "url": "https://b.example/2", "title": "计算机应用和软件2",
                        "content": "海量网络文本去重系统实验检测，这是一段相似的测试文本的内容。"})
    run_worker()
    a = client.get("/api/v1/articles/seed-a", **auth).json()
    b = client.get("/api/v1/articles/seed-b", **auth).json()
    assert a["docId"] == b["docId"] and b["duplicate"] is True
    # the same bulletin for another city is another article
    post(client, auth, {"nid": "bj", "url": "https://a.example/3", "title": "天气",
                        "content": "北京今日最高气温30度，空气质量良。"})
    post(client, auth, {"nid": "sh", "url": "https://a.example/4", "title": "天气",
                        "content": "上海今日最高气温30度，空气质量良。"})
    run_worker()
    bj = client.get("/api/v1/articles/bj", **auth).json()
    sh = client.get("/api/v1/articles/sh", **auth).json()
    assert bj["docId"] != sh["docId"]
