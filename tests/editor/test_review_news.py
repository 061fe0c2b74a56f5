"""/review/ tells an open page about matches that arrived after it was rendered."""

from __future__ import annotations

import re

import pytest

from articles.models import Article
from tests.browser import stories
from tests.browser.conftest import PASSWORD, editor  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def editor_client(client, auth, run_worker, editor):  # noqa: F811
    stories.load(client, auth, run_worker)
    client.login(username="editor", password=PASSWORD)
    return client


def since_of(html: str) -> int:
    match = re.search(r'id="review-news"[^>]*\?since=(\d+)', html)
    assert match, "no poll on the page"
    return int(match.group(1))


def test_the_page_polls_for_new_matches_and_counts_them(editor_client, auth, run_worker,
                                                        settings):
    settings.REVIEW_POLL_SECONDS = 7
    html = editor_client.get("/review/").content.decode()
    assert 'hx-trigger="every 7s"' in html
    since = since_of(html)
    news = editor_client.get(f"/review/news/?since={since}").content.decode()
    assert "new match" not in news and 'id="review-news"' in news
    # a lightly edited copy under the same title: a title-rule match, a review item
    stories.load(editor_client, auth, run_worker, [stories.article(
        "river-4", "江城滨江绿道全线贯通 市民周末骑行人数创新高",
        stories.edited(stories.RIVERSIDE) + "（本报记者 李华）", media="Evening Post")])
    assert Article.objects.get(nid="river-4").matched_by == "title"
    news = editor_client.get(f"/review/news/?since={since}").content.decode()
    assert "1 new match arrived" in news
    # the banner keeps polling from the same point until the list is refreshed
    assert f"?since={since}" in news
    refreshed = editor_client.get("/review/").content.decode()
    assert since_of(refreshed) > since
    assert "new match" not in editor_client.get(
        f"/review/news/?since={since_of(refreshed)}").content.decode()
    assert editor_client.get("/review/news/?since=abc").status_code == 400  # not a 500


def test_polling_off(editor_client, settings):
    settings.REVIEW_POLL_SECONDS = 0
    html = editor_client.get("/review/").content.decode()
    assert 'id="review-news"' not in html



@pytest.mark.mysql
def test_mysql_sessions_run_without_index_merge_intersections(db):
    """settings.py turns them off: with them MariaDB sorted every review-queue item instead
    of reading (pinned, id) backwards up to the LIMIT (bench/dashboard.py: /nav/counts/)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT @@optimizer_switch")
        assert "index_merge_intersection=off" in cursor.fetchone()[0]
