"""The desk in chromium: a bulk confirm over a filter of 200 clusters with its progress, its
undo as a whole, the keyboard, the /clusters/ banner and the navigation's count."""

from __future__ import annotations

import re
import threading
from datetime import timedelta
from urllib.parse import quote

import pytest
from django.db import connection, transaction
from django.utils import timezone
from playwright.sync_api import expect

from articles.editor import bulk
from articles.editor.forms import ClusterFilterForm
from articles.models import (
    Article,
    ArticleStatus,
    BulkAction,
    BulkStatus,
    Doc,
    DocStatus,
    MatchedBy,
)
from tests.browser import stories
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORD = "夜市"  # in the title of every one of the 200 clusters, and of no other


def make_clusters(count: int, word: str) -> list[Doc]:
    """`count` two-article clusters, written directly (the engine's placement is not what
    these tests are about), plus a few that the filter must leave out."""
    now = timezone.now()
    docs = Doc.objects.bulk_create([
        Doc(doc_id=f"{n:016x}-{n + 7:016x}", size=2, status=DocStatus.AUTO,
            first_seen=now - timedelta(minutes=n), last_seen=now - timedelta(minutes=n))
        for n in range(1, count + 6)])
    articles = []
    for n, doc in enumerate(docs):
        title = f"{word}第{n}条" if n < count else f"其他新闻{n}"
        for copy in range(2):
            articles.append(Article(
                nid=f"bulk-{n}-{copy}", url=f"https://bulk.example/{n}/{copy}", title=title,
                content=f"{title} 正文", status=ArticleStatus.DONE, doc=doc,
                matched_by=MatchedBy.CONTENT if copy else None, distance=1 if copy else None,
                similarity=0.9 if copy else None, hotness=10 - copy))
    Article.objects.bulk_create(articles)
    for doc in docs:
        members = [a for a in articles if a.doc_id == doc.pk]
        doc.anchor, doc.representative = members[0], members[0]
    Doc.objects.bulk_update(docs, ["anchor", "representative"])
    return docs[:count]


def run_in_background(pk: int) -> threading.Thread:
    """The job, as a worker would run it (a thread: the test drives the browser meanwhile;
    the RQ plumbing is tested in tests/editor/dashboard/test_bulk.py)."""
    def work() -> None:
        try:
            bulk.run(pk)
        finally:
            connection.close()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


def test_a_bulk_confirm_of_200_clusters_that_match_a_filter_and_its_undo(page, editor):
    docs = make_clusters(200, WORD)
    log_in(page, "editor", f"/clusters/?q={quote(WORD)}")
    expect(page.locator(".count")).to_have_text("200 clusters")
    page.check("input[name=scope][value=filter]")
    expect(page.locator("#bulk-form")).to_contain_text("all 200 clusters that match this filter")
    page.locator("#bulk-form button[value=confirm]").click()
    status = page.locator("#bulk-status")
    expect(status).to_contain_text("Confirm 200 clusters")
    expect(status).to_contain_text("0 of 200 clusters · waiting for a worker")
    job = BulkAction.objects.get()
    assert job.selection["scope"] == "filter" and len(job.targets) == 200

    # The 101st cluster in the list's order is held by another transaction: the job stops
    # there for a moment, and the page shows how far it got.
    form = ClusterFilterForm({"q": WORD})
    assert form.is_valid()
    order = list(form.filter(Doc.objects.all()).values_list("pk", flat=True))
    assert [pk for pk, _version in job.targets] == order
    with transaction.atomic():
        Doc.objects.select_for_update().get(pk=order[100])
        worker = run_in_background(job.pk)
        expect(status).to_contain_text("100 of 200 clusters · working…", timeout=180_000)
        expect(status.locator("progress")).to_have_attribute("value", "100")
    expect(status).to_contain_text("200 clusters confirmed", timeout=180_000)
    worker.join(180)
    assert Doc.objects.filter(pk__in=order, status=DocStatus.CONFIRMED).count() == 200
    assert not Article.objects.filter(doc__in=docs, pinned=False).exists()
    assert Doc.objects.exclude(pk__in=order).filter(status=DocStatus.CONFIRMED).count() == 0
    # the list below shows them as they are now (reloaded when the job was done)
    expect(page.locator("table.clusters .badge.status-confirmed")).to_have_count(50)

    page.locator("#bulk-status [data-action=bulk-undo] button").click()
    expect(status).to_contain_text("Undo a bulk decision (200 clusters)")
    undo = BulkAction.objects.get(undoes=job)
    run_in_background(undo.pk).join(180)
    expect(status).to_contain_text("200 clusters restored", timeout=60_000)
    assert BulkAction.objects.get(pk=undo.pk).status == BulkStatus.DONE
    assert Doc.objects.filter(pk__in=order, status=DocStatus.AUTO).count() == 200
    assert not Article.objects.filter(doc__in=docs, pinned=True).exists()
    expect(page.locator("table.clusters .badge.status-auto")).to_have_count(50)


def test_an_editor_selects_clusters_with_the_keyboard_and_undoes_the_bulk_action(
        page, editor):
    docs = make_clusters(3, WORD)
    log_in(page, "editor", f"/clusters/?q={quote(WORD)}")
    page.keyboard.press("j")
    page.keyboard.press("x")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("x")
    expect(page.locator("[data-selected-count]")).to_have_text("the 2 selected clusters")
    expect(page.locator("table.clusters tbody tr.current")).to_have_count(1)
    page.keyboard.press("C")
    status = page.locator("#bulk-status")
    expect(status).to_contain_text("Confirm 2 clusters")
    run_in_background(BulkAction.objects.get().pk).join(30)
    expect(status).to_contain_text("2 clusters confirmed", timeout=10_000)
    confirmed = set(Doc.objects.filter(status=DocStatus.CONFIRMED).values_list("pk", flat=True))
    assert confirmed == {docs[0].pk, docs[2].pk}  # the first and the third row
    page.keyboard.press("u")
    expect(status).to_contain_text("Undo a bulk decision (2 clusters)")
    run_in_background(BulkAction.objects.get(action="undo").pk).join(30)
    expect(status).to_contain_text("2 clusters restored", timeout=10_000)
    assert not Doc.objects.filter(status=DocStatus.CONFIRMED).exists()


def test_a_new_duplicate_posted_through_the_api_shows_a_banner_on_clusters(
        page, editor, client, auth, run_worker, settings):
    settings.CLUSTERS_POLL_SECONDS = 1
    stories.load(client, auth, run_worker)
    log_in(page, "editor", "/clusters/")
    page.evaluate("window.openedOnce = true")  # gone if the page is loaded again
    river = Article.objects.get(nid="river-1").doc
    row = page.locator("table.clusters tbody tr", has_text=river.doc_id)
    expect(row.locator("td.num")).to_have_text("3")
    expect(page.locator(".news-banner")).to_have_count(0)
    stories.load(client, auth, run_worker, [stories.article(
        "river-4", "滨江绿道贯通（再转载）", stories.repost(stories.RIVERSIDE),
        media="Evening Post")])
    banner = page.locator(".news-banner")
    expect(banner).to_contain_text("1 cluster received new articles", timeout=15_000)
    expect(row.locator("td.num")).to_have_text("3")  # the list stays as it was
    banner.click()
    expect(row.locator("td.num")).to_have_text("4")
    expect(page.locator(".news-banner")).to_have_count(0)
    assert page.evaluate("window.openedOnce === true")


def test_the_review_count_in_the_navigation_stays_current(page, editor, client, auth,
                                                          run_worker, settings):
    from articles.editor import actions

    settings.NAV_POLL_SECONDS = 1
    stories.load(client, auth, run_worker)
    log_in(page, "editor", "/clusters/")
    badge = page.locator("nav #nav-review-count")
    expect(badge).to_have_text("2")  # river-3 and xss-2 matched by title
    stories.load(client, auth, run_worker, [stories.article(
        "river-4", "江城滨江绿道全线贯通 市民周末骑行人数创新高",
        stories.edited(stories.RIVERSIDE) + "（本报记者 李华）", media="Evening Post")])
    expect(badge).to_have_text("3", timeout=10_000)
    actions.confirm_doc(Article.objects.get(nid="river-1").doc, editor)  # another tab
    expect(badge).to_have_text("1", timeout=10_000)
    assert re.fullmatch(r"\d+ match(es)? to review", badge.get_attribute("title") or "")
