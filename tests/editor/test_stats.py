from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User

pytestmark = pytest.mark.django_db(transaction=True)

BODY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")


def test_stats_is_for_staff_only(client, db):
    assert client.get("/stats/").status_code == 302
    User.objects.create_user("reader", password="pw-long-enough-1")
    client.login(username="reader", password="pw-long-enough-1")
    response = client.get("/stats/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_stats_draws_the_charts_with_escaped_labels(client, auth, run_worker):
    for nid in ("a", "b", "c"):
        client.post("/api/v1/articles", content_type="application/json", **auth,
                    data=json.dumps({"nid": nid, "url": f"https://x.example/{nid}",
                                     "title": "绿道贯通", "content": BODY,
                                     "media": "<script>alert(1)</script>"}))
    run_worker()
    User.objects.create_user("staff", password="pw-long-enough-1", is_staff=True)
    client.login(username="staff", password="pw-long-enough-1")
    response = client.get("/stats/")
    assert response.status_code == 200
    body = response.content.decode()
    assert body.count("<svg") == 5
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;: 0.67</title>" in body  # 2 of 3 are dups
