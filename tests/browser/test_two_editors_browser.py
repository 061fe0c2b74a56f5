"""Two editors at once, each in a browser context of their own, on the same cluster.

The cluster page carries the docId's version; the second decision made on a view the
first one changed is refused with a warning and the current state, and nothing is lost.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from articles.models import Article, AuditEntry, Doc
from tests.browser import stories
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def corpus(client, auth, run_worker) -> dict[str, Doc]:
    stories.load(client, auth, run_worker)
    return {key: Article.objects.get(nid=f"{key}-1").doc
            for key in ("river", "library", "museum", "xss")}


def outcome(page) -> str:
    """"success" or "warning": the message the page shows after its action."""
    message = page.locator(".message.success, .message.warning, .message.error").first
    message.wait_for()
    classes = (message.get_attribute("class") or "").split()
    return next(c for c in ("success", "warning", "error") if c in classes)


def assert_nothing_lost() -> None:
    """Every article is done and in exactly one docId whose size counts it."""
    articles = list(Article.objects.filter(nid__startswith="river-"))
    assert len(articles) == 3 and all(a.doc_id for a in articles)
    for doc in Doc.objects.all():
        assert doc.size == Article.objects.filter(doc=doc).count(), doc.doc_id


@pytest.mark.parametrize("first", ["split", "merge"])
def test_two_editors_split_and_merge_the_same_cluster_at_once(page, other_page, editor,
                                                             second_editor, corpus, first):
    river, museum = corpus["river"], corpus["museum"]
    log_in(page, "editor", f"/clusters/{river.doc_id}/")
    log_in(other_page, "editor2", f"/clusters/{river.doc_id}/")
    expect(page.locator("tr.member-row")).to_have_count(3)
    expect(other_page.locator("tr.member-row")).to_have_count(3)
    # the second editor finds the cluster to merge into
    other_page.fill("#merge-q", "博物馆")
    merge_button = other_page.locator(".merge-results li", has_text=museum.doc_id).locator(
        "[data-action=merge]")
    expect(merge_button).to_be_visible()

    # both click at once: neither waits for the other's answer (who wins is the server's
    # row lock's to decide; each order is tried)
    split_button = page.locator("tr[data-nid='river-3'] [data-action=split]")
    for button in ((split_button, merge_button) if first == "split"
                   else (merge_button, split_button)):
        button.click(no_wait_after=True)
    results = {"split": outcome(page), "merge": outcome(other_page)}
    assert sorted(results.values()) == ["success", "warning"], results
    decided = set(AuditEntry.objects.filter(doc_id=river.doc_id)
                  .values_list("action", flat=True))
    assert_nothing_lost()

    if results["split"] == "success":
        # the merge was refused: the second editor sees the cluster without river-3
        assert decided == {"split"}
        warning = other_page.locator(".message.warning")
        expect(warning).to_contain_text("editor changed this cluster (split an article out)")
        expect(other_page.locator("tr.member-row")).to_have_count(2)
        assert Article.objects.get(nid="river-3").doc != river
        assert Doc.objects.get(pk=museum.pk).size == 2
        # on the fresh view the merge goes through
        other_page.fill("#merge-q", "博物馆")
        other_page.locator(".merge-results li", has_text=museum.doc_id).locator(
            "[data-action=merge]").click()
        other_page.wait_for_url(f"**/clusters/{museum.doc_id}/")
        expect(other_page.locator("tr.member-row")).to_have_count(4)
        assert Doc.objects.get(pk=museum.pk).size == 4
        assert Article.objects.get(nid="river-3").doc.size == 1
    else:
        # the split was refused: the first editor sees the emptied docId and where it went
        assert decided == {"merge"}
        expect(page.locator(".message.warning")).to_contain_text(
            "editor2 changed this cluster (merged clusters)")
        expect(page.locator("tr.member-row")).to_have_count(0)
        expect(page.locator(".notice")).to_contain_text(museum.doc_id)
        assert Doc.objects.get(pk=museum.pk).size == 5
        assert Article.objects.get(nid="river-3").doc == museum
    assert_nothing_lost()


def test_a_stale_page_cannot_undo_a_choice_it_did_not_see(page, other_page, editor,
                                                         second_editor, corpus):
    river = corpus["river"]
    log_in(page, "editor", f"/clusters/{river.doc_id}/")
    log_in(other_page, "editor2", f"/clusters/{river.doc_id}/")
    page.click("tr[data-nid='river-1'] [data-action=representative]")
    expect(page.locator("tr.rep")).to_contain_text("river-1")
    # the other page still shows river-2 as representative and offers river-3
    other_page.click("tr[data-nid='river-3'] [data-action=representative]")
    expect(other_page.locator(".message.warning")).to_contain_text(
        "editor changed this cluster (chose the representative)")
    expect(other_page.locator("tr.rep")).to_contain_text("river-1")  # the fresh view
    doc = Doc.objects.get(pk=river.pk)
    assert (doc.representative.nid, doc.representative_pinned) == ("river-1", True)


def test_two_editors_in_the_review_queue_take_different_items(page, other_page, editor,
                                                             second_editor, corpus):
    from articles.models import ReviewClaim

    log_in(page, "editor", "/review/")
    log_in(other_page, "editor2", "/review/")
    expect(page.locator("#review-count")).to_have_text("2")
    page.keyboard.press("t")  # take the next item
    expect(page.locator(".message.success")).to_contain_text("This item is yours")
    other_page.keyboard.press("t")
    expect(other_page.locator(".message.success")).to_contain_text("This item is yours")
    mine = page.locator(".review-item.selected")
    theirs = other_page.locator(".review-item.selected")
    expect(mine).to_contain_text("yours")
    expect(theirs).to_contain_text("yours")
    expect(mine).to_contain_text("river-3")
    expect(theirs).to_contain_text("xss-2")
    expect(other_page.locator(".review-item", has_text="river-3")).to_contain_text(
        "taken by editor until")
    claims = dict(ReviewClaim.objects.values_list("editor__username", "article__nid"))
    assert claims == {"editor": "river-3", "editor2": "xss-2"}
    # each decides their own item with the keyboard
    page.keyboard.press("s")
    expect(page.locator("#review-count")).to_have_text("1")
    other_page.keyboard.press("s")
    expect(other_page.locator("#review-count")).to_have_text("0")


def test_two_editors_taking_at_once_get_different_clusters_and_see_each_others_claim(
        page, other_page, editor, second_editor, corpus):
    from articles.models import ReviewClaim, ReviewPass

    # every cluster's other members borderline: two members of the river cluster side by
    # side in the queue, and enough clusters to route
    for doc in corpus.values():
        Article.objects.filter(doc=doc).exclude(pk=doc.representative_id).update(
            distance=3, matched_by="content", pinned=False)
    log_in(page, "editor", "/review/")
    log_in(other_page, "editor2", "/review/")
    page.keyboard.press("t")
    other_page.keyboard.press("t")  # before the first answer arrives
    # the taken item is selected and marked (its cluster's other items too)
    expect(page.locator(".review-item.selected .badge.claim-mine")).to_have_count(1)
    expect(other_page.locator(".review-item.selected .badge.claim-mine")).to_have_count(1)
    claims = {c.editor.username: c for c in ReviewClaim.objects.select_related("editor", "doc")}
    assert set(claims) == {"editor", "editor2"}
    assert claims["editor"].doc_pk != claims["editor2"].doc_pk  # different clusters
    mine, theirs = claims["editor"], claims["editor2"]
    # each sees the other's claim: the queue, the cluster list, the cluster page
    page.goto("/review/")
    expect(page.locator(".badge.claim-other", has_text="taken by editor2")).not_to_have_count(0)
    page.goto("/clusters/")
    expect(page.locator(".badge.claim-other", has_text="editor2 is reviewing this")).to_be_visible()
    page.goto(f"/clusters/{theirs.doc.doc_id}/")
    expect(page.locator(".claim-banner")).to_contain_text("editor2 is reviewing this cluster")
    other_page.goto(f"/clusters/{mine.doc.doc_id}/")
    expect(other_page.locator(".claim-banner")).to_contain_text("editor is reviewing this")
    # the cursor of a fresh queue page is never on the colleague's item
    other_page.goto("/review/")
    expect(other_page.locator(".review-item.selected.claimed-other")).to_have_count(0)
    # skip: the first editor passes the item on and gets another cluster
    page.goto("/review/")
    page.keyboard.press("n")
    page.wait_for_function(
        f"() => !document.querySelector('#review-item-{mine.article_id} .claim-mine')")
    skipped = ReviewPass.objects.get(editor__username="editor", kind="skip")
    assert skipped.doc_pk == mine.doc_pk
    now_mine = ReviewClaim.objects.get(editor__username="editor")
    assert now_mine.doc_pk not in (mine.doc_pk, theirs.doc_pk)
    # unsure: the second editor asks for a second opinion; the first editor gets it next
    other_page.keyboard.press("a")
    expect(other_page.locator(".message", has_text="Another editor will decide this one.")
           ).to_be_visible()
    page.keyboard.press("t")
    page.wait_for_function(
        f"() => !!document.querySelector('#review-item-{theirs.article_id} .claim-mine')")
    assert ReviewClaim.objects.get(editor__username="editor").doc_pk == theirs.doc_pk
    expect(page.locator(f"#review-item-{theirs.article_id} .badge.second")).to_contain_text(
        "editor2 asks for a second editor")


def test_an_item_a_colleague_decides_is_marked_on_an_open_queue_within_one_poll(
        page, editor, second_editor, corpus, settings):
    from articles.editor import actions, review

    settings.REVIEW_POLL_SECONDS = 1
    log_in(page, "editor", "/review/")
    first = page.locator(".review-item").first
    item = int(first.get_attribute("id").removeprefix("review-item-"))
    nav = page.locator("#nav-review-count")
    expect(nav).to_have_attribute("data-count", re.compile(r"^\d+$"))  # loaded after the page
    before = int(nav.get_attribute("data-count"))
    actions.confirm_doc(Article.objects.get(pk=item).doc, second_editor)  # a colleague
    # within a few of the test's 1 s polls, and before the default 10 s poll would come
    expect(page.locator(f"#review-state-{item}")).to_have_text("decided by editor2",
                                                              timeout=8_000)
    after = review.review_queue(review.rules()).count()
    assert after < before
    expect(page.locator("#nav-review-count")).to_have_attribute("data-count", str(after))
    expect(page.locator("#review-count")).to_have_attribute("data-count", str(after))
    # the keyboard passes over the decided item
    page.keyboard.press("k")
    page.keyboard.press("j")
    expect(page.locator(".review-item.selected")).not_to_have_id(f"review-item-{item}")
