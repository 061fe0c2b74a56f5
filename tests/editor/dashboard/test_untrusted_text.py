"""Crawled markup is inert on every page."""

from __future__ import annotations

import re

import pytest

from articles.models import Article

from .conftest import doc_of, htmx, login

pytestmark = pytest.mark.django_db


DANGEROUS = ["<script>", 'onmouseover="alert', "<img src=x", "<svg onload", "onerror=alert",
             'href="javascript:']


def assert_inert(html: str) -> None:
    for needle in DANGEROUS:
        assert needle not in html, needle
    # the only scripts are the project's own static files
    assert re.findall(r"<script\b[^>]*>", html) == re.findall(
        r'<script src="/static/[a-z/.]+\.js" defer>', html)
    # every attribute value the crawled text reached stays inside its quotes
    assert '" onmouseover=' not in html


def test_crawled_markup_is_inert_on_every_page(client, corpus, editor):
    login(client, editor)
    doc = doc_of("xss-1")
    Article.objects.filter(nid="xss-2").update(url="javascript:alert(7)")  # not via the API
    pages = {
        "list": client.get("/clusters/"),
        "list-search": client.get("/clusters/", {"q": "script"}, **htmx("cluster-rows")),
        "detail": client.get(f"/clusters/{doc.doc_id}/"),
        "diff": client.get(f"/clusters/{doc.doc_id}/", {"compare": "xss-2"}, **htmx("diff")),
        "review": client.get("/review/"),
        "review-diff": client.get(f"/clusters/{doc.doc_id}/", {"compare": "xss-2"},
                                  **htmx("review-diff")),
        "merge": client.get(f"/clusters/{corpus['river'].doc_id}/", {"merge_q": "script"}),
    }
    for name, response in pages.items():
        assert response.status_code == 200, name
        html = response.content.decode()
        assert_inert(html)
        assert "&quot; onmouseover=&quot;alert(" in html, name  # shown, escaped
    for name in ("list", "detail", "review"):
        assert "&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt;" in pages[name].content.decode()
    # a crawled https URL with markup is escaped inside href; a javascript: URL is no link
    detail = pages["detail"].content.decode()
    assert 'href="https://news.example/xss-1?q=&quot;&gt;&lt;script&gt;' in detail
    assert "javascript:alert(7)" in detail and 'href="javascript' not in detail
