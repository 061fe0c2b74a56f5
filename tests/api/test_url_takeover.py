"""Another crawler cannot take over a story through its URL: a URL
match across API keys is not a match by itself; the article is verified like any
content match, unless the admin lets its key change other keys' articles."""

from __future__ import annotations

import pytest

from articles.models import ApiKey, Article

from .test_real_crawls import BODY, OTHER, article, post

pytestmark = pytest.mark.django_db(transaction=True)

URL = "https://n.example/story-7"


def _second_key(**fields: object) -> tuple[ApiKey, dict[str, str]]:
    key, plaintext = ApiKey.issue("second crawler", **fields)
    return key, {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"}


def test_another_keys_text_under_a_known_url_gets_its_own_doc(client, auth, run_worker):
    post(client, auth, article("a-1", url=URL, hotness=1))
    run_worker()
    story = Article.objects.get(nid="a-1").doc
    _key, other = _second_key()
    post(client, other, article("ｂ-1", content=OTHER, url=URL, hotness=100))
    run_worker()
    intruder = Article.objects.get(nid="ｂ-1")
    assert intruder.doc_id != story.pk and intruder.matched_by != "url"
    story.refresh_from_db()
    assert story.representative.nid == "a-1" and story.size == 1


def test_another_keys_copy_under_the_url_joins_by_its_text(client, auth, run_worker):
    post(client, auth, article("a-2", url=URL))
    run_worker()
    _key, other = _second_key()
    post(client, other, article("b-2", url=URL))  # the same text: a repost, verified
    run_worker()
    copy, original = Article.objects.get(nid="b-2"), Article.objects.get(nid="a-2")
    assert copy.doc_id == original.doc_id
    assert copy.matched_by in ("title", "content")


def test_a_key_the_admin_trusts_joins_by_url(client, auth, run_worker):
    post(client, auth, article("a-3", url=URL))
    run_worker()
    _key, trusted = _second_key(may_change_others=True)
    post(client, trusted, article("c-3", content=OTHER, url=URL))
    run_worker()
    joined = Article.objects.get(nid="c-3")
    assert joined.doc_id == Article.objects.get(nid="a-3").doc_id
    assert joined.matched_by == "url"


def test_one_keys_own_recrawl_still_joins_by_url(client, auth, run_worker):
    post(client, auth, article("a-4", url=URL, content=BODY))
    run_worker()
    post(client, auth, article("a-4-again", url=URL, content=OTHER))
    run_worker()
    assert Article.objects.get(nid="a-4-again").matched_by == "url"
