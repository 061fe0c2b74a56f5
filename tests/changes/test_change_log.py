"""The change log: every change of an article's docId (and of a docId's representative or
status) is logged in the transaction that makes it, with a cursor in commit order, and
read through GET /api/v1/changes. Through the real API, a real RQ worker and the
editors' service functions."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone

from articles.changes import log as changes
from articles.editor import actions
from articles.ingest import watchdog
from articles.models import ApiKey, Article, Change, ChangeKind, Decision, EngineSettings
from tests.browser import stories

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def corpus(client, auth, run_worker) -> None:
    stories.load(client, auth, run_worker)


def read_all(client, auth, limit: int = 7) -> list[dict]:
    """Every change the key may read, page by page from the start."""
    found, after = [], "0"
    while True:
        page = client.get(f"/api/v1/changes?after={after}&limit={limit}", **auth)
        assert page.status_code == 200, page.content
        body = page.json()
        found += body["changes"]
        if body["next"] == after:
            return found
        after = body["next"]


def test_every_ingested_article_has_one_membership_change_with_its_doc_id(client, auth,
                                                                          corpus):
    logged = read_all(client, auth)
    memberships = [c for c in logged if c["kind"] == ChangeKind.MEMBERSHIP]
    assert {c["nid"]: c["docId"] for c in memberships} == {
        a.nid: a.doc.doc_id for a in Article.objects.select_related("doc")}
    assert all(c["reason"] == "ingest" and c["previousDocId"] == "" for c in memberships)
    # each docId's first representative is logged too
    assert {c["docId"] for c in logged if c["kind"] == ChangeKind.REPRESENTATIVE} == {
        c["docId"] for c in memberships}
    cursors = [int(c["cursor"]) for c in logged]
    assert cursors == sorted(cursors) and len(set(cursors)) == len(cursors)


def test_a_split_and_its_undo_are_logged_with_the_doc_ids_on_both_sides(client, auth,
                                                                        corpus):
    editor = User.objects.create_user("ed", password="pw-long-enough-1")
    article = Article.objects.get(nid="river-3")
    old = article.doc.doc_id
    start = changes.last_cursor()
    new = actions.split_article(article, editor)
    split = [c for c in read_all(client, auth) if int(c["cursor"]) > start]
    assert {"nid": "river-3", "docId": new.doc_id, "previousDocId": old,
            "reason": "editor:split"} in [
        {k: c[k] for k in ("nid", "docId", "previousDocId", "reason")}
        for c in split if c["kind"] == ChangeKind.MEMBERSHIP]
    assert {(c["kind"], c["docId"]) for c in split} >= {
        (ChangeKind.REPRESENTATIVE, new.doc_id), (ChangeKind.STATUS, new.doc_id)}
    assert Change.objects.filter(cursor__gt=start, actor="editor:ed").count() == len(split)
    decision = Decision.objects.get(action="split")
    start = changes.last_cursor()
    actions.undo(decision, editor)
    undone = [c for c in read_all(client, auth) if int(c["cursor"]) > start]
    assert [(c["nid"], c["docId"], c["previousDocId"], c["reason"]) for c in undone
            if c["kind"] == ChangeKind.MEMBERSHIP] == [("river-3", old, new.doc_id,
                                                         "editor:undo")]


def test_a_merge_logs_every_moved_member(client, auth, corpus):
    river = Article.objects.get(nid="river-1").doc
    library = Article.objects.get(nid="library-1").doc
    moved = set(Article.objects.filter(doc=library).values_list("nid", flat=True))
    start = changes.last_cursor()
    actions.merge_docs(library, river, None)
    rows = Change.objects.filter(cursor__gt=start, kind=ChangeKind.MEMBERSHIP)
    assert {(c.nid, c.doc_id, c.previous_doc_id, c.reason) for c in rows} == {
        (nid, river.doc_id, library.doc_id, "editor:merge") for nid in moved}


def test_a_key_reads_the_changes_of_its_own_articles_unless_it_may_read_others(
        client, auth, corpus):
    other, secret = ApiKey.issue("other crawler")
    theirs = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    assert read_all(client, theirs) == []
    own = {"nid": "own-1", "url": "https://b.example/1", "title": "另一家的稿件",
           "content": "完全不同的正文内容。"}
    response = client.post("/api/v1/articles?wait=10", content_type="application/json",
                           data=json.dumps(own), **theirs)
    assert response.status_code == 200
    assert {c["nid"] for c in read_all(client, theirs) if c["nid"]} == {"own-1"}
    other.may_read_others = True
    other.save()
    assert len(read_all(client, theirs)) == Change.objects.count()


@pytest.mark.parametrize("query", ["after=-1", "after=abc", "after=1.5",
                                   "after=" + "9" * 21, "limit=0", "limit=1001",
                                   "limit=x"])
def test_a_bad_cursor_or_limit_is_a_json_400_or_422(client, auth, query):
    response = client.get(f"/api/v1/changes?{query}", **auth)
    assert response.status_code in (400, 422)
    assert "error" in response.json()


def test_the_next_cursor_of_an_empty_page_skips_nothing_committed_later(client, auth,
                                                                         corpus):
    last = read_all(client, auth)
    body = client.get(f"/api/v1/changes?after={last[-1]['cursor']}", **auth).json()
    assert body == {"changes": [], "next": last[-1]["cursor"]}
    actions.split_article(Article.objects.get(nid="museum-2"), None)
    body = client.get(f"/api/v1/changes?after={body['next']}", **auth).json()
    assert [c["nid"] for c in body["changes"] if c["kind"] == "membership"] == ["museum-2"]


def test_retention_drops_the_rows_older_than_the_admins_days(corpus):
    settings = EngineSettings.load()
    settings.change_log_days = 2
    settings.save()
    Change.objects.filter(nid="river-1").update(at=timezone.now() - timedelta(days=3))
    watchdog.tick()
    assert not Change.objects.filter(nid="river-1").exists()
    assert Change.objects.filter(nid="river-2").exists()
    settings.change_log_days = 0  # keeps every row
    settings.save()
    Change.objects.update(at=timezone.now() - timedelta(days=400))
    watchdog.tick()
    assert Change.objects.exists()


@pytest.mark.mysql
def test_cursors_follow_commit_order_when_two_transactions_overlap():
    """The first transaction takes its cursor, then waits before committing; a second one
    that logs meanwhile waits for it, so it commits second with the larger cursor, and a
    reader never sees the second's row while the first's is still to come."""
    first_logged, release = threading.Event(), threading.Event()
    seen_while_open: list[int] = []
    order: list[str] = []

    def first() -> None:
        try:
            with transaction.atomic():
                changes.record([changes.status("first-doc", "auto", None, "test")])
                first_logged.set()
                release.wait(20)
            order.append("first")
        finally:
            connection.close()

    def second() -> None:
        try:
            with transaction.atomic():
                changes.record([changes.status("second-doc", "auto", None, "test")])
            order.append("second")
        finally:
            connection.close()

    one = threading.Thread(target=first)
    one.start()
    assert first_logged.wait(20)
    two = threading.Thread(target=second)
    two.start()
    time.sleep(1.0)  # the second is waiting for the cursor row: it has not committed
    assert order == []
    rows, following = changes.page_after(0, 100, None)
    seen_while_open += [r.cursor for r in rows]
    release.set()
    one.join(20)
    two.join(20)
    # both committed; which thread appended first after its commit is the scheduler's
    # choice, not the database's (it failed so on a loaded run): the commit order is
    # the cursors'
    assert sorted(order) == ["first", "second"]
    logged = {c.doc_id: c.cursor for c in Change.objects.all()}
    assert logged["first-doc"] < logged["second-doc"]
    assert seen_while_open == [] and following == 0
    rows, following = changes.page_after(following, 100, None)
    assert [r.doc_id for r in rows] == ["first-doc", "second-doc"]
