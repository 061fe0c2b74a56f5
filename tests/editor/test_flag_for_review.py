"""needs_review: set by the admin's "Flag for review" action; the queue then shows the doc."""

from __future__ import annotations

import json

import pytest

from articles.editor import review
from articles.models import Article, AuditEntry, Doc, DocStatus, EngineSettings

pytestmark = pytest.mark.django_db(transaction=True)

BODIES = {
    "f": ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
          "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。"),
    "c": ("市图书馆新馆明日开放，藏书一百二十万册，设有古籍修复室和少儿阅读区。"
          "新馆每天开放十二小时，读者可凭身份证免费办理借书证，并可在线预约座位。"),
}


def test_flagged_docs_enter_the_review_queue_and_confirmed_ones_are_left_alone(
        client, admin_client, auth, run_worker):
    for nid, tail in (("f1", ""), ("f2", "（完）"), ("c1", "记者 王五"), ("c2", "编辑 李四")):
        client.post("/api/v1/articles", content_type="application/json", **auth,
                    data=json.dumps({"nid": nid, "url": f"https://x.example/{nid}",
                                     "title": "",
                                     "content": f"{BODIES[nid[0]]}{tail}"}))
    run_worker()
    flagged = Article.objects.get(nid="f2").doc
    other = Article.objects.get(nid="c2").doc
    assert flagged.size == other.size == 2 and flagged.pk != other.pk
    Doc.objects.filter(pk=other.pk).update(status=DocStatus.CONFIRMED)
    # strict review rules: without the flag nothing is borderline
    EngineSettings.objects.filter(pk=EngineSettings.load().pk).update(
        review_distance=8, review_similarity=0.0, review_cluster_size=100)
    rules = review.rules()
    assert not review.review_queue(rules).exists()

    response = admin_client.post("/admin/articles/doc/", {
        "action": "flag_for_review", "_selected_action": [flagged.pk, other.pk]})
    assert response.status_code == 302
    assert Doc.objects.get(pk=flagged.pk).status == DocStatus.NEEDS_REVIEW
    assert Doc.objects.get(pk=other.pk).status == DocStatus.CONFIRMED
    assert list(review.review_queue(rules).values_list("nid", flat=True)) == ["f2"]
    assert "flagged" in review.reasons(Article.objects.get(nid="f2"), rules)
    audit = AuditEntry.objects.get(action="flag_for_review")
    assert audit.doc_id == flagged.doc_id and audit.actor is not None
