"""Claims in /review/: two editors taking the next item get different items; a claim
expires after settings.REVIEW_CLAIM_SECONDS."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from articles.editor import review
from articles.models import Article, ReviewClaim

from .conftest import htmx, login

pytestmark = pytest.mark.django_db


def selected(html: str) -> str:
    """The nid of the selected queue item."""
    item = re.search(r'class="review-item card selected".*?</li>', html, re.S)
    assert item is not None
    return re.search(r'<bdi class="mono">([^<]+)</bdi>', item.group(0)).group(1)


@pytest.fixture
def second_editor(editor) -> User:
    other = User.objects.create_user("editor2")
    other.groups.set(editor.groups.all())
    return other


def queue_ids() -> list[int]:
    return review.most_doubtful(review.review_queue(review.rules()), 25)


def cluster(article_id: int) -> int | None:
    return Article.objects.get(pk=article_id).doc_pk


def first_of_another_cluster(ids: list[int], taken: int) -> int:
    return next(i for i in ids if cluster(i) != cluster(taken))


def test_two_editors_taking_the_next_item_get_different_items(client, corpus, editor,
                                                              second_editor):
    login(client, editor)
    other = login(Client(), second_editor)
    first = client.post("/review/take/")
    assert first.status_code == 302
    second = other.post("/review/take/", follow=True)
    html = second.content.decode()
    assert "This item is yours for 10 minutes" in html
    claims = dict(ReviewClaim.objects.values_list("editor__username", "article__nid"))
    assert set(claims) == {"editor", "editor2"}
    assert claims["editor"] != claims["editor2"]
    assert claims["editor"] == "river-3"  # the most doubtful first
    assert first["Location"] == f"/review/?item={Article.objects.get(nid='river-3').pk}"
    # each lands on their own item; the other's is marked taken
    assert selected(client.get(first["Location"]).content.decode()) == "river-3"
    assert selected(html) == claims["editor2"] == "xss-2"
    assert "taken by editor until" in html and ">yours<" in html


def test_when_every_item_is_taken_the_editor_is_told(client, corpus, editor, second_editor):
    ids = queue_ids()
    for article_id in ids:
        ReviewClaim.objects.create(article_id=article_id, editor=second_editor,
                                   expires_at=timezone.now() + dt.timedelta(minutes=5))
    login(client, editor)
    html = client.post("/review/take/", **htmx("review-queue")).content.decode()
    assert "<html" not in html
    assert "Every listed item is taken by another editor." in html
    assert not ReviewClaim.objects.filter(editor=editor).exists()


def test_a_claim_expires_after_the_configured_time(corpus, editor, second_editor, settings):
    settings.REVIEW_CLAIM_SECONDS = 60
    third = User.objects.create_user("editor3")
    ids = queue_ids()
    start = timezone.now()
    assert review.take_next(editor, ids, now=start) == ids[0]
    claim = ReviewClaim.objects.get(editor=editor)
    assert claim.expires_at - claim.claimed_at == dt.timedelta(seconds=60)
    # within the minute the first item's cluster stays the first editor's
    assert review.take_next(second_editor, ids, now=start + dt.timedelta(seconds=59)) == \
        first_of_another_cluster(ids, ids[0])
    # after it, it is free again
    assert review.take_next(third, ids, now=start + dt.timedelta(seconds=61)) == ids[0]
    assert ReviewClaim.objects.get(article_id=ids[0]).editor == third
    settings.REVIEW_CLAIM_SECONDS = 3600
    ReviewClaim.objects.all().delete()
    review.take_next(editor, ids, now=start + dt.timedelta(seconds=62))
    claim = ReviewClaim.objects.get(editor=editor)
    assert claim.expires_at - claim.claimed_at == dt.timedelta(hours=1)


def test_taking_the_next_item_releases_the_previous_one(corpus, editor):
    ids = queue_ids()
    review.take_next(editor, ids)
    review.take_next(editor, ids)
    assert ReviewClaim.objects.filter(editor=editor).count() == 1


def test_a_claim_lost_to_a_concurrent_insert_moves_on_to_the_next_item(corpus, editor,
                                                                      second_editor,
                                                                      monkeypatch):
    """The other editor's INSERT lands between this editor's read and its own INSERT."""
    ids = queue_ids()
    real = review.active_claims

    def stale_read(article_ids, now=None):
        found = real(article_ids, now)
        ReviewClaim.objects.create(article_id=ids[0], editor=second_editor,
                                   expires_at=timezone.now() + dt.timedelta(minutes=5))
        return found

    monkeypatch.setattr(review, "active_claims", stale_read)
    assert review.take_next(editor, ids) == ids[1]


def test_take_is_for_editors_only(client, corpus, viewer):
    login(client, viewer)
    assert client.post("/review/take/").status_code == 403
    assert client.get("/review/take/").status_code in (403, 405)
    assert 'data-action="take"' not in client.get("/review/").content.decode()
    assert not ReviewClaim.objects.exists()


@pytest.mark.parametrize("value, seconds", [("90", 90), ("0", 1), (None, 600)])
def test_the_claim_time_comes_from_the_environment(value, seconds):
    env = {k: v for k, v in os.environ.items() if k != "REVIEW_CLAIM_SECONDS"}
    if value is not None:
        env["REVIEW_CLAIM_SECONDS"] = value
    out = subprocess.run(
        [sys.executable, "-c", "import dedupsite.settings as s; print(s.REVIEW_CLAIM_SECONDS)"],
        env=env, cwd=Path(__file__).resolve().parents[3], capture_output=True, text=True,
        check=True)
    assert int(out.stdout) == seconds


def test_a_claim_covers_the_whole_cluster(client, corpus, editor, second_editor):
    river = corpus["river"]  # both non-representative members borderline: two queue items
    Article.objects.filter(doc=river).exclude(pk=river.representative_id).update(
        distance=3, matched_by="content", pinned=False)
    ids = queue_ids()
    taken = review.take_next(editor, [i for i in ids if cluster(i) == river.pk] + ids)
    siblings = [i for i in ids if cluster(i) == cluster(taken) and i != taken]
    assert siblings, "the corpus has a cluster with two queue items"
    claims = review.active_claims(ids)
    assert all(claims[i].editor == editor for i in siblings)  # the claim covers them
    # however many editors take after, none gets a member of the held cluster
    others = [second_editor] + [User.objects.create_user(f"e{n}") for n in range(3)]
    for other in others:
        other.groups.set(editor.groups.all())
        got = review.take_next(other, ids)
        assert got is None or cluster(got) != cluster(taken)
    held = list(ReviewClaim.objects.exclude(doc=None).values_list("doc", flat=True))
    assert len(held) == len(set(held))  # one holder per cluster


def test_the_cursor_of_a_fresh_page_skips_a_colleagues_claim(client, corpus, editor,
                                                             second_editor):
    login(client, editor)
    client.post("/review/take/")
    other = login(Client(), second_editor)
    html = other.get("/review/").content.decode()
    assert selected(html) != "river-3"  # the first item is the colleague's
    assert 'claimed-other" id="review-item-' in html.replace("selected ", "")
    mine = client.get("/review/").content.decode()
    assert selected(mine) == "river-3"  # the holder's own cursor stays on it


def test_skip_passes_the_item_on_and_it_comes_back_last(client, corpus, editor, second_editor):
    ids = queue_ids()
    login(client, editor)
    client.post("/review/take/")
    first = ReviewClaim.objects.get(editor=editor)
    html = client.post("/review/pass/skip/", follow=True).content.decode()
    now_held = ReviewClaim.objects.get(editor=editor)
    assert cluster(now_held.article_id) != first.doc_pk  # the next item, another cluster
    assert "yours" in html
    # for this editor the skipped cluster is at the end; others get it as usual
    order = review.routed(editor, ids)
    assert cluster(order[-1]) == first.doc_pk
    assert review.take_next(second_editor, ids) == first.article_id


def test_asking_a_second_editor_routes_the_item_to_another_one(client, corpus, editor,
                                                              second_editor):
    from articles.editor import actions
    from articles.models import ReviewPass

    ids = queue_ids()
    login(client, editor)
    client.post("/review/take/")
    asked = ReviewClaim.objects.get(editor=editor)
    response = client.post("/review/pass/second/", {"note": "两篇的地名不同"}, follow=True)
    assert "Another editor will decide this one." in response.content.decode()
    request = ReviewPass.objects.get(editor=editor)
    assert request.kind == "second" and request.note == "两篇的地名不同"
    # never back to the editor who asked, however often they take
    for _ in range(3):
        got = review.take_next(editor, ids)
        assert got is None or cluster(got) != asked.doc_pk
    review.release(editor)
    # first for a colleague, shown with who asked
    other = login(Client(), second_editor)
    other.post("/review/take/")
    claim = ReviewClaim.objects.get(editor=second_editor)
    assert claim.doc_pk == asked.doc_pk
    page = other.get(f"/review/?item={claim.article_id}").content.decode()
    assert "editor asks for a second editor" in page
    detail = other.get(f"/clusters/{claim.doc.doc_id}/").content.decode()
    assert "editor asked a second editor to decide this cluster." in detail
    assert "两篇的地名不同" in detail
    # the colleague's decision answers the request
    actions.confirm_doc(claim.doc, second_editor)
    request.refresh_from_db()
    assert request.resolved_at is not None


def test_clusters_and_the_cluster_page_say_who_is_reviewing(client, corpus, editor,
                                                           second_editor):
    login(client, editor)
    client.post("/review/take/")
    claim = ReviewClaim.objects.get(editor=editor)
    other = login(Client(), second_editor)
    listing = other.get("/clusters/").content.decode()
    assert "editor is reviewing this" in listing
    page = other.get(f"/clusters/{claim.doc.doc_id}/").content.decode()
    assert "editor is reviewing this cluster (taken until" in page
    own = client.get(f"/clusters/{claim.doc.doc_id}/").content.decode()
    assert "is reviewing this cluster" not in own  # not a warning to the holder


def test_passing_is_for_editors_only_and_kinds_are_checked(client, corpus, editor, viewer):
    login(client, viewer)
    assert client.post("/review/pass/skip/").status_code == 403
    login(client, editor)
    assert client.post("/review/pass/sideways/").status_code == 404


def test_the_poll_marks_items_colleagues_decided_or_took(client, corpus, editor,
                                                         second_editor):
    from articles.editor import actions

    login(client, editor)
    page = client.get("/review/").content.decode()
    shown = re.search(r"shown=([\d,]+)", page).group(1)
    ids = [int(i) for i in shown.split(",")]
    assert len(ids) >= 2
    decided, taken = ids[0], next(i for i in ids if cluster(i) != cluster(ids[0]))
    # a colleague decides one item's cluster and takes another
    actions.confirm_doc(Article.objects.get(pk=decided).doc, second_editor)
    review.take_next(second_editor, [taken])
    answer = client.get(f"/review/news/?since=0&shown={shown}", **htmx("review-news"))
    html = answer.content.decode()
    assert f'id="review-state-{decided}" class="item-state badge state-decided" ' \
           'hx-swap-oob="true">decided by editor2' in html
    assert f'id="review-state-{taken}" class="item-state badge state-taken" ' \
           'hx-swap-oob="true">taken by editor2' in html
    total = review.review_queue(review.rules()).count()
    assert f'<strong id="review-count" data-count="{total}" hx-swap-oob="true">' in html
    assert 'id="nav-review-count"' in html and 'hx-swap-oob="true"' in html
    assert f"shown={shown}" in html  # the next poll asks about the same items


def test_a_decision_in_the_queue_updates_the_navigation_count_at_once(client, corpus,
                                                                     editor):
    login(client, editor)
    river = corpus["river"]
    html = client.post(f"/clusters/{river.doc_id}/confirm/",
                       {"version": river.version, "next": "/review/?pos=0"},
                       **htmx("review-queue")).content.decode()
    total = review.review_queue(review.rules()).count()
    assert f'id="nav-review-count" class="nav-count" data-count="{total}" ' \
           'hx-swap-oob="true"' in html


def test_a_bad_shown_list_is_a_400(client, corpus, editor):
    login(client, editor)
    assert client.get("/review/news/?shown=1,x").status_code == 400
    assert client.get("/review/news/?shown=" + ",".join(["1"] * 500)).status_code == 400
