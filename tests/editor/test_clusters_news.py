"""/clusters/ tells an open page about clusters of its filter that received articles
after it was rendered; the navigation's review count is fetched and polled."""

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


def poll_url(html: str) -> str:
    match = re.search(r'id="clusters-news"[^>]*hx-get="([^"]+)"', html)
    assert match, "no poll on the page"
    return match.group(1).replace("&amp;", "&")


def test_the_list_polls_for_clusters_of_its_filter_that_received_articles(
        editor_client, auth, run_worker, settings):
    settings.CLUSTERS_POLL_SECONDS = 7
    html = editor_client.get("/clusters/").content.decode()
    assert 'hx-trigger="every 7s"' in html and 'hx-push-url="false"' in html
    everything = poll_url(html)
    filtered = poll_url(editor_client.get("/clusters/?q=图书馆").content.decode())
    assert "q=%E5%9B%BE%E4%B9%A6%E9%A6%86" in filtered  # the poll keeps the filter
    assert "received new articles" not in editor_client.get(everything).content.decode()
    # a repost of the river story, posted through the API while the page is open
    stories.load(editor_client, auth, run_worker, [stories.article(
        "river-4", "滨江绿道贯通（再转载）", stories.repost(stories.RIVERSIDE),
        media="Evening Post")])
    assert Article.objects.get(nid="river-4").doc.size == 4
    news = editor_client.get(everything).content.decode()
    assert "1 cluster received new articles" in news
    assert 'hx-get="/clusters/"' in news  # the banner reloads the list, on demand
    assert "received new articles" not in editor_client.get(filtered).content.decode()
    refreshed = poll_url(editor_client.get("/clusters/").content.decode())
    assert "received new articles" not in editor_client.get(refreshed).content.decode()
    assert editor_client.get("/clusters/news/?since=abc").status_code == 400  # not a 500


def test_polling_off(editor_client, settings):
    settings.CLUSTERS_POLL_SECONDS = 0
    assert 'id="clusters-news"' not in editor_client.get("/clusters/").content.decode()


def test_the_navigation_counts_the_review_queue(editor_client, settings):
    from articles.editor import review

    settings.NAV_POLL_SECONDS = 9
    page = editor_client.get("/clusters/").content.decode()
    assert 'hx-get="/nav/counts/" hx-trigger="load"' in page  # fetched after the page
    count = review.review_queue(review.rules()).count()
    assert count > 0
    badge = editor_client.get("/nav/counts/").content.decode()
    assert f'data-count="{count}"' in badge and 'hx-trigger="every 9s"' in badge
    settings.NAV_POLL_SECONDS = 0
    assert "hx-trigger" not in editor_client.get("/nav/counts/").content.decode()


def test_the_navigation_count_is_no_content_for_users_who_may_not_look(client, db):
    from django.contrib.auth.models import User

    User.objects.create_user("reader", password=PASSWORD)
    client.login(username="reader", password=PASSWORD)
    response = client.get("/nav/counts/")
    assert response.status_code == 204 and response.content == b""


def test_the_navigation_count_sends_a_stranger_to_the_login_page(client, db):
    response = client.get("/nav/counts/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
