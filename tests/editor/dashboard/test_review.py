"""/review/: the borderline queue."""

from __future__ import annotations

import re

import pytest

from articles.models import Article, Doc

from .conftest import at_version, doc_of, htmx, login

pytestmark = pytest.mark.django_db


def queued(html: str) -> list[str]:
    return re.findall(r'data-diff-url="/clusters/[^/]+/\?compare=([^"]+)"', html)


def test_the_review_queue_lists_borderline_matches_and_counts_down(client, corpus, editor):
    login(client, editor)
    html = client.get("/review/").content.decode()
    assert re.search(r'id="review-count" data-count="2"', html)
    # exact copies (library-2, museum-2, river-2) have nothing to look at; river-1 and
    # xss-1 founded their docIds
    assert queued(html) == ["river-3", "xss-2"]
    assert "matched by title" in html
    assert "Differences from the representative" in html  # the selected item's diff

    xss_doc = doc_of("xss-2")
    response = client.post(f"/clusters/{xss_doc.doc_id}/confirm/",
                           at_version(xss_doc, next="/review/?pos=0"),
                           **htmx("review-queue"))
    html = response.content.decode()
    assert "<html" not in html
    assert 'data-count="1"' in html and queued(html) == ["river-3"]

    response = client.post(f"/clusters/{corpus['river'].doc_id}/split/",
                           at_version(corpus["river"], nid="river-3", next="/review/?pos=0"))
    assert response.status_code == 302 and response["Location"] == "/review/?pos=0"
    html = client.get("/review/").content.decode()
    assert 'data-count="0"' in html and "Nothing to review" in html


def test_a_large_cluster_or_a_near_threshold_match_is_queued(client, corpus, editor):
    Article.objects.filter(nid="library-2").update(distance=2)
    login(client, editor)
    html = client.get("/review/").content.decode()
    assert "library-2" in queued(html) and "distance near the threshold" in html
    Article.objects.filter(nid="library-2").update(distance=0)
    Article.objects.filter(nid="museum-2").update(similarity=0.6)
    html = client.get("/review/").content.decode()
    assert queued(html) == ["museum-2", "river-3", "xss-2"]  # the least similar first
    assert "low similarity" in html
    Article.objects.filter(nid="museum-2").update(similarity=1.0)
    from articles.editor import review

    Doc.objects.filter(pk=corpus["museum"].pk).update(size=review.rules().cluster_size)
    html = client.get("/review/").content.decode()
    assert "museum-2" in queued(html) and "large cluster" in html


def test_the_review_item_position_is_kept_within_the_queue(client, corpus, editor):
    login(client, editor)
    html = client.get("/review/", {"pos": 1}).content.decode()
    assert re.search(r'class="review-item card selected"[^>]*\n\s*data-index="1"', html)
    html = client.get("/review/", {"pos": 99}).content.decode()
    assert re.search(r'class="review-item card selected"[^>]*\n\s*data-index="1"', html)
    # a position that is not a whole number is refused, with a message, not a 500
    refused = client.get("/review/", {"pos": "x"})
    assert refused.status_code == 400 and b"pos must be a whole number" in refused.content


def test_a_next_url_off_site_is_ignored(client, corpus, editor):
    login(client, editor)
    response = client.post(f"/clusters/{corpus['river'].doc_id}/confirm/",
                           at_version(corpus["river"], next="https://evil.example/review/"))
    assert response["Location"] == f"/clusters/{corpus['river'].doc_id}/"
