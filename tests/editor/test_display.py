"""Look-alike and direction tricks in crawled URLs and text are shown for what they are."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User

from articles.models import Article
from articles.templatetags.dashboard import display_url

BODY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")


@pytest.mark.parametrize(("url", "shown"), [
    ("https://bbc.co.uk\u2215news.evil.com/a", "https://bbc.co.xn--uknews-qe3c.evil.com/a"),
    ("https://\u0430pple.com/x", "https://xn--pple-43d.com/x"),  # Cyrillic а
    ("https://例子.测试/路径", "https://xn--fsqu00a.xn--0zwm56d/路径"),
    ("https://news.example/a", "https://news.example/a"),
    ("not a url", "not a url"),
])
def test_hosts_are_shown_in_punycode(url: str, shown: str) -> None:
    assert display_url(url) == shown


@pytest.mark.django_db(transaction=True)
def test_the_cluster_page_shows_the_real_host_and_isolates_crawled_text(client, auth,
                                                                         run_worker):
    for nid, url in (("s1", "https://bbc.co.uk\u2215news.evil.com/a"),
                     ("s2", "https://n.example/s2")):
        client.post("/api/v1/articles", content_type="application/json", **auth,
                    data=json.dumps({"nid": nid, "url": url, "title": "\u202e绿道贯通",
                                     "content": BODY, "media": "晚报"}))
    run_worker()
    client.force_login(User.objects.create_user("v", password="x" * 20, is_staff=True))
    doc = Article.objects.get(nid="s1").doc
    html = client.get(f"/clusters/{doc.doc_id}/").content.decode()
    assert "bbc.co.xn--uknews-qe3c.evil.com" in html
    # the link target keeps the URL as crawled; the text a reader sees never shows it
    assert html.count("bbc.co.uk\u2215news") == 1
    assert 'href="https://bbc.co.uk\u2215news.evil.com/a"' in html
    assert '<div class="title" dir="auto">\u202e绿道贯通' in html
    assert "<bdi>晚报</bdi>" in html and '<bdi class="mono">s1</bdi>' in html
