"""An editor's day in a real browser: chromium, the live server, MariaDB, htmx.

Articles go through the API and a real RQ worker (stories.py) before each test.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from articles.models import Article, AuditEntry, Doc, DocStatus
from tests.browser import stories
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def corpus(client, auth, run_worker) -> dict[str, Doc]:
    stories.load(client, auth, run_worker)
    return {key: Article.objects.get(nid=f"{key}-1").doc
            for key in ("river", "library", "museum", "xss")}


def doc_of(nid: str) -> Doc:
    return Article.objects.select_related("doc").get(nid=nid).doc


def test_a_logged_out_visitor_is_sent_to_the_login_page(page, live_server, corpus):
    page.goto("/clusters/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/clusters/$"))
    page.goto(f"/clusters/{corpus['river'].doc_id}/")
    expect(page.locator("input[name=password]")).to_be_visible()
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    response = page.request.post(f"/clusters/{corpus['river'].doc_id}/confirm/",
                                 headers={"X-CSRFToken": token}, max_redirects=0)
    assert response.status == 302
    assert response.headers["location"].startswith("/accounts/login/")
    assert doc_of("river-1").status == DocStatus.AUTO


def test_an_editor_filters_opens_a_cluster_and_reads_the_diff(page, editor, corpus):
    log_in(page, "editor")
    expect(page.locator("table.clusters tbody tr")).to_have_count(4)
    page.fill("input[name=q]", "滨江")  # htmx: the rows are replaced as the editor types
    expect(page.locator("table.clusters tbody tr")).to_have_count(1)
    expect(page).to_have_url(re.compile(r"q=%E6%BB%A8%E6%B1%9F"))
    page.select_option("select[name=status]", "confirmed")
    expect(page.locator(".empty")).to_be_visible()
    page.select_option("select[name=status]", "")
    page.click(f"a.doc-id:has-text('{corpus['river'].doc_id}')")
    expect(page.locator("h1")).to_have_text(corpus["river"].doc_id)
    expect(page.locator("tr.member-row")).to_have_count(3)
    expect(page.locator("tr.rep")).to_contain_text("river-2")  # the hottest

    page.click("tr[data-nid='river-3'] [data-action=compare]")
    expect(page.locator("#diff .side-member")).to_contain_text("river-3")
    expect(page).to_have_url(re.compile(r"compare=river-3"))
    expect(page.locator("#diff ins").first).to_be_visible()
    inserted = page.locator("#diff .side-member ins").all_inner_texts()
    deleted = page.locator("#diff .side-rep del").all_inner_texts()
    assert "骑车、跑步" in inserted and "骑行" in deleted
    expect(page.locator("#diff .kw").first).to_be_visible()


def test_an_editor_confirms_a_cluster(page, editor, corpus):
    log_in(page, "editor", f"/clusters/{corpus['library'].doc_id}/")
    page.fill(".doc-actions input[name=note]", "same story")
    page.click("[data-action=confirm]")
    expect(page.locator(".message.success")).to_contain_text("Confirmed docId")
    expect(page.locator(".badge.status-confirmed")).to_be_visible()
    expect(page.locator(".audit-list")).to_contain_text("same story")
    assert Doc.objects.get(pk=corpus["library"].pk).status == DocStatus.CONFIRMED


def test_an_editor_splits_a_member_and_the_api_reports_its_new_doc_id(page, editor, corpus,
                                                                     api_key):
    river = corpus["river"]
    log_in(page, "editor", f"/clusters/{river.doc_id}/")
    page.click("tr[data-nid='river-3'] [data-action=split]")
    expect(page.locator(".message.success")).to_contain_text("Split river-3 out")
    expect(page.locator("tr.member-row")).to_have_count(2)
    response = page.request.get("/api/v1/articles/river-3",
                                headers={"Authorization": f"Bearer {api_key}"})
    assert response.ok
    new_doc_id = response.json()["docId"]
    assert new_doc_id != river.doc_id
    assert new_doc_id == doc_of("river-3").doc_id
    expect(page.locator(".message.success")).to_contain_text(new_doc_id)
    page.click(f".audit-list a:has-text('{new_doc_id}')")
    expect(page.locator("tr.member-row")).to_have_count(1)


def test_an_editor_merges_two_clusters_picked_by_search(page, editor, corpus):
    museum, library = corpus["museum"], corpus["library"]
    log_in(page, "editor", f"/clusters/{museum.doc_id}/")
    page.fill("#merge-q", "图书馆")
    result = page.locator(".merge-results li", has_text=library.doc_id)
    expect(result).to_be_visible()
    expect(page.locator(".merge-results li")).to_have_count(1)
    result.locator("[data-action=merge]").click()
    page.wait_for_url(f"**/clusters/{library.doc_id}/")
    expect(page.locator("tr.member-row")).to_have_count(4)
    assert doc_of("museum-1") == doc_of("museum-2") == doc_of("library-1")
    assert Doc.objects.get(pk=museum.pk).size == 0


def test_an_editor_chooses_the_representative(page, editor, corpus):
    river = corpus["river"]
    log_in(page, "editor", f"/clusters/{river.doc_id}/")
    page.click("tr[data-nid='river-1'] [data-action=representative]")
    expect(page.locator("tr.rep")).to_contain_text("river-1")
    expect(page.locator(".message.success")).to_contain_text("river-1 is now the representative")
    doc = Doc.objects.get(pk=river.pk)
    assert doc.representative.nid == "river-1" and doc.representative_pinned
    page.click("[data-action=release]")
    expect(page.locator("tr.rep")).to_contain_text("river-2")


def test_an_editor_works_the_review_queue_with_the_keyboard(page, editor, corpus):
    log_in(page, "editor", "/review/")
    count = page.locator("#review-count")
    selected = page.locator(".review-item.selected")
    expect(count).to_have_text("2")
    expect(selected).to_contain_text("river-3")
    expect(page.locator("#review-diff .side-member")).to_contain_text("river-3")

    page.keyboard.press("j")
    expect(selected).to_contain_text("xss-2")
    expect(page.locator("#review-diff .side-member")).to_contain_text("xss-2")
    page.keyboard.press("k")
    expect(selected).to_contain_text("river-3")

    page.keyboard.press("c")  # confirm river-3's cluster: it leaves the queue
    expect(count).to_have_text("1")
    expect(selected).to_contain_text("xss-2")
    assert Doc.objects.get(pk=corpus["river"].pk).status == DocStatus.CONFIRMED

    page.keyboard.press("s")  # split xss-2 out
    expect(count).to_have_text("0")
    expect(page.locator(".empty")).to_contain_text("Nothing to review")
    assert doc_of("xss-2") != corpus["xss"]
    actions = set(AuditEntry.objects.values_list("action", flat=True))
    assert actions == {"confirm", "split"}


def test_a_non_editor_may_look_but_is_refused(page, viewer, corpus):
    river = corpus["river"]
    log_in(page, "viewer", f"/clusters/{river.doc_id}/")
    expect(page.locator(".notice")).to_contain_text("not change")
    expect(page.locator("[data-action=confirm]")).to_have_count(0)
    expect(page.locator("[data-action=split]")).to_have_count(0)
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    response = page.request.post(f"/clusters/{river.doc_id}/split/",
                                 form={"nid": "river-3"}, headers={"X-CSRFToken": token})
    assert response.status == 403
    assert doc_of("river-3") == river
    page.goto("/review/")
    expect(page.locator("#review-count")).to_have_text("2")
    page.keyboard.press("c")  # no forms for a viewer: nothing happens
    expect(page.locator("#review-count")).to_have_text("2")
    assert Doc.objects.get(pk=river.pk).status == DocStatus.AUTO


def test_the_pages_switch_to_chinese(page, editor, corpus):
    log_in(page, "editor", "/review/")
    page.click("button[name=language][value=zh-hans]")
    expect(page.locator("h1")).to_have_text("审核队列")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    page.click("nav >> text=聚类")
    expect(page.locator("h1")).to_have_text("聚类")
    page.click("button[name=language][value=en]")
    expect(page.locator("h1")).to_have_text("Clusters")


def test_a_new_match_appears_in_an_open_review_page_without_a_reload(
        page, editor, corpus, client, auth, run_worker, settings):
    settings.REVIEW_POLL_SECONDS = 1
    log_in(page, "editor", "/review/")
    page.evaluate("window.openedOnce = true")  # gone if the page is loaded again
    expect(page.locator(".news-banner")).to_have_count(0)
    stories.load(client, auth, run_worker, [stories.article(
        "river-4", "江城滨江绿道全线贯通 市民周末骑行人数创新高",
        stories.edited(stories.RIVERSIDE) + "（本报记者 李华）", media="Evening Post")])
    banner = page.locator(".news-banner")
    expect(banner).to_contain_text("1 new match arrived", timeout=15_000)
    expect(page.locator(".review-list")).not_to_contain_text("river-4")  # no jumping list
    banner.click()
    expect(page.locator(".review-list")).to_contain_text("river-4")
    expect(page.locator(".news-banner")).to_have_count(0)
    assert page.evaluate("window.openedOnce === true")
