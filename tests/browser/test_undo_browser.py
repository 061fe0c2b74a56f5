"""Undo in the browser: from the message after a decision, from the history, and with
the keyboard in the review queue."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from articles.editor import actions
from articles.models import Article, Doc, DocStatus, EditorLink
from articles.representatives import outbox
from tests.browser import stories
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def corpus(client, auth, run_worker) -> dict[str, Doc]:
    stories.load(client, auth, run_worker)
    return {key: Article.objects.get(nid=f"{key}-1").doc
            for key in ("river", "library", "museum", "xss")}


def test_an_editor_undoes_a_split_from_the_message(page, editor, corpus, api_key):
    river = corpus["river"]
    log_in(page, "editor", f"/clusters/{river.doc_id}/")
    page.click("tr[data-nid='river-3'] [data-action=split]")
    toast = page.locator(".message.toast")
    expect(toast).to_contain_text("Split river-3 out")
    expect(page.locator("tr.member-row")).to_have_count(2)
    toast.locator("[data-action=undo] button").click()
    expect(page.locator(".message.success")).to_contain_text("Undone: split an article out")
    expect(page.locator("tr.member-row")).to_have_count(3)
    response = page.request.get("/api/v1/articles/river-3",
                                headers={"Authorization": f"Bearer {api_key}"})
    assert response.json()["docId"] == river.doc_id
    article = Article.objects.get(nid="river-3")
    assert (article.doc_id, article.pinned, article.matched_by) == (river.pk, False, "title")


def test_an_editor_undoes_a_merge_from_the_history(page, editor, corpus):
    museum, library = corpus["museum"], corpus["library"]
    log_in(page, "editor", f"/clusters/{museum.doc_id}/")
    page.fill("#merge-q", "图书馆")
    page.locator(".merge-results li", has_text=library.doc_id).locator(
        "[data-action=merge]").click()
    page.wait_for_url(f"**/clusters/{library.doc_id}/")
    expect(page.locator("tr.member-row")).to_have_count(4)
    page.goto(f"/clusters/{library.doc_id}/")  # the message is gone; the history stays
    expect(page.locator(".message")).to_have_count(0)
    page.locator(".audit-list [data-action=undo-history] button").first.click()
    page.wait_for_url(f"**/clusters/{museum.doc_id}/")
    expect(page.locator("tr.member-row")).to_have_count(2)
    expect(page.locator(".audit-list")).to_contain_text("undid a decision")
    assert Doc.objects.get(pk=library.pk).size == 2
    assert Doc.objects.get(pk=library.pk).status == library.status


def test_u_undoes_the_last_decision_in_the_review_queue(page, editor, corpus):
    log_in(page, "editor", "/review/")
    count = page.locator("#review-count")
    expect(count).to_have_text("2")
    page.keyboard.press("c")
    expect(count).to_have_text("1")
    page.keyboard.press("u")
    expect(count).to_have_text("2")
    expect(page.locator(".message.success")).to_contain_text("Undone: confirmed the cluster")
    assert Doc.objects.get(pk=corpus["river"].pk).status == DocStatus.AUTO


def test_the_undo_beside_the_message_goes_after_the_configured_time(page, editor, corpus,
                                                                    settings):
    settings.UNDO_TOAST_SECONDS = 4  # the default is 30
    river = corpus["river"]
    log_in(page, "editor", f"/clusters/{river.doc_id}/")
    page.click("[data-action=confirm]")
    toast_undo = page.locator(".messages [data-action=undo]")
    expect(toast_undo).to_have_count(1)
    expect(toast_undo).to_have_count(0, timeout=12_000)
    expect(page.locator(".message.success")).to_contain_text("Confirmed docId")
    # the history still offers it
    page.locator(".audit-list [data-action=undo-history] button").first.click()
    expect(page.locator(".message.success")).to_contain_text("Undone: confirmed the cluster")
    assert Doc.objects.get(pk=river.pk).status == DocStatus.AUTO


def test_with_no_time_set_the_undo_stays_beside_the_message(page, editor, corpus, settings):
    settings.UNDO_TOAST_SECONDS = 0
    river = corpus["river"]
    log_in(page, "editor", f"/clusters/{river.doc_id}/")
    page.click("[data-action=confirm]")
    page.wait_for_timeout(1_500)
    expect(page.locator(".messages [data-action=undo]")).to_have_count(1)


def state() -> tuple:
    """Everything a decision may change, but the versions it must move on."""
    return (
        sorted(Article.objects.values_list(
            "nid", "doc__doc_id", "pinned", "matched_by", "matched_article__nid", "distance",
            "similarity")),
        sorted(Doc.objects.filter(size__gt=0).values_list(
            "doc_id", "size", "status", "anchor__nid", "representative__nid",
            "representative_pinned", "first_seen", "last_seen")),
        sorted(EditorLink.objects.values_list("kind", "nid_a", "nid_b")),
    )


def stored(run_worker) -> dict[str, object]:
    """The representative store after the push jobs ran: docId -> representative nid."""
    run_worker()
    return {doc_id: row.get("nid") for doc_id, row in outbox.store().scan()}


def act(page, name: str, library: Doc) -> None:
    """Make the decision through the cluster page, as an editor would."""
    if name == "confirm":
        page.click("[data-action=confirm]")
    elif name == "release":
        page.click("[data-action=release]")
    elif name in ("split", "representative"):
        page.click(f"tr[data-nid='river-3'] [data-action={name}]")
    elif name == "move":
        row = page.locator("tr[data-nid='river-3']")
        row.locator("details.move summary").click()
        row.locator("input[name=target]").fill(library.doc_id)
        row.locator("[data-action=move]").click()
    else:  # merge
        page.fill("#merge-q", "图书馆")
        page.locator(".merge-results li", has_text=library.doc_id).locator(
            "[data-action=merge]").click()
        page.wait_for_url(f"**/clusters/{library.doc_id}/")


@pytest.mark.parametrize("name", ["confirm", "split", "move", "merge", "representative",
                                  "release"])
def test_undo_of_each_decision_restores_the_exact_previous_state(page, editor, corpus, api_key,
                                                                run_worker, name):
    river, library = corpus["river"], corpus["library"]
    if name == "release":  # an editor's choice to release
        actions.choose_representative(Article.objects.get(nid="river-1"), editor)
    before, reps_before = state(), stored(run_worker)
    headers = {"Authorization": f"Bearer {api_key}"}
    nids = ("river-1", "river-2", "river-3", "library-1", "library-2")

    def api_doc_ids() -> dict[str, str]:
        return {nid: page.request.get(f"/api/v1/articles/{nid}", headers=headers).json()["docId"]
                for nid in nids}

    api_before = api_doc_ids()
    log_in(page, "editor", f"/clusters/{river.doc_id}/")
    act(page, name, library)
    toast = page.locator(".message.toast")
    expect(toast).to_be_visible()
    assert state() != before
    if name not in ("confirm", "move"):  # these leave every representative as it was
        assert stored(run_worker) != reps_before
    toast.locator("[data-action=undo] button").click()
    expect(page.locator(".message.success")).to_contain_text("Undone:")
    page.wait_for_url(f"**/clusters/{river.doc_id}/")
    assert state() == before
    assert stored(run_worker) == reps_before
    assert api_doc_ids() == api_before
