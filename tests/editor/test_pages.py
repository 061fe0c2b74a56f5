from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User

pytestmark = pytest.mark.django_db(transaction=True)

CONTENT = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
           "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")


def test_clusters_needs_a_login(client):
    response = client.get("/clusters/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_the_login_page_renders(client):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b'name="password"' in response.content


def test_a_logged_in_user_sees_the_cluster_with_its_members_escaped(client, auth, run_worker):
    title = '<script>alert(1)</script>" onmouseover="x'
    for nid in ("p1", "p2"):
        client.post("/api/v1/articles", content_type="application/json", **auth,
                    data=json.dumps({"nid": nid, "url": f"https://a.example/{nid}",
                                     "title": title, "content": CONTENT}))
    run_worker()
    User.objects.create_user("editor", password="pw-12345-long", is_staff=True)
    client.login(username="editor", password="pw-12345-long")
    from articles.models import Doc

    doc = Doc.objects.get()
    page = client.get("/clusters/")
    assert page.status_code == 200
    html = page.content.decode()
    assert doc.doc_id in html
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html

    detail = client.get(f"/clusters/{doc.doc_id}/")
    assert detail.status_code == 200
    html = detail.content.decode()
    assert "p1" in html and "p2" in html
    assert "<script>alert(1)</script>" not in html
