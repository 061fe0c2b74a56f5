"""Writers take row locks in one order (docs by key, then articles), so a split, a move or
a hotness update that meets a merge waits for it instead of deadlocking.

A merge locks its two docs and then rewrites their articles. Before the one order, a split
locked its article first and then the doc: the two transactions waited on each other and
MariaDB rolled one back (error 1213), so the editor read "another editor was changing
this cluster" instead of who changed it and how.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import OperationalError, connection, transaction

from articles.editor import actions
from articles.models import Article, AuditEntry, Doc
from tests.browser import stories

pytestmark = [pytest.mark.mysql, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def corpus(client, auth, run_worker) -> dict[str, Doc]:
    stories.load(client, auth, run_worker)
    return {key: Article.objects.get(nid=f"{key}-1").doc for key in ("river", "museum")}


def merge_holding_locks(source: Doc, target: Doc, locked: threading.Event,
                        release: threading.Event, errors: list[BaseException]) -> None:
    """A merge's lock steps, paused between locking the docs and moving the articles."""
    try:
        with transaction.atomic():
            keys = sorted([source.pk, target.pk])
            list(Doc.objects.select_for_update().filter(pk__in=keys).order_by("pk"))
            locked.set()
            release.wait(10)
            Article.objects.filter(doc=source).update(doc=target)
            Doc.objects.filter(pk=source.pk).update(size=0, version=source.version + 1)
    except BaseException as exc:  # noqa: BLE001 - handed to the test thread
        errors.append(exc)
    finally:
        connection.close()


def during_a_merge(river: Doc, museum: Doc, act) -> object:
    """Run `act` while a merge of river into museum holds its doc locks; return what it
    returned or raised, after checking that the merge went through untouched."""
    locked, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []
    merging = threading.Thread(target=merge_holding_locks,
                               args=(river, museum, locked, release, errors))
    merging.start()
    assert locked.wait(10)
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(act())
        except BaseException as exc:  # noqa: BLE001 - asserted by the caller
            outcome.append(exc)
        finally:
            connection.close()

    acting = threading.Thread(target=run)
    acting.start()
    time.sleep(0.5)  # the action is now waiting on a lock the merge holds
    assert acting.is_alive()
    release.set()
    merging.join(15)
    acting.join(15)
    assert errors == []  # the merge was not chosen as a deadlock victim
    assert len(outcome) == 1
    assert not isinstance(outcome[0], OperationalError), outcome[0]
    assert Article.objects.get(nid="river-3").doc_id == museum.pk
    return outcome[0]


@pytest.mark.parametrize("action", ["split", "move"])
def test_a_split_or_move_meeting_a_merge_waits_and_is_refused_as_stale(corpus, action):
    river, museum = corpus["river"], corpus["museum"]
    article = Article.objects.get(nid="river-3")

    def act() -> Doc:
        if action == "split":
            return actions.split_article(article, None, version=river.version)
        library = Article.objects.get(nid="library-1").doc
        return actions.move_article(article, library, None, version=river.version)

    outcome = during_a_merge(river, museum, act)
    assert isinstance(outcome, actions.StaleVersion), outcome
    assert Doc.objects.get(pk=river.pk).size == 0


def test_a_hotness_update_meeting_a_merge_waits_and_lands_in_the_merged_doc(corpus):
    """The API's hotness update locks the article's doc first too: it waits for the merge,
    follows the article into its new doc and re-elects that doc's representative."""
    from articles.ingest.intake import update_hotness

    river, museum = corpus["river"], corpus["museum"]
    outcome = during_a_merge(river, museum, lambda: update_hotness("river-3", 10_000.0))
    assert isinstance(outcome, Article), outcome
    assert Article.objects.get(nid="river-3").hotness == 10_000.0
    assert AuditEntry.objects.get(action="hotness", nid="river-3").doc_id == museum.doc_id


def test_a_changed_repost_meeting_a_merge_waits_and_is_stored_in_the_merged_doc(corpus):
    """A repost rewrites its article (InnoDB checks the doc's foreign key when an indexed
    column beside it changes): it locks the doc first, waits for the merge, and its
    audit entry names the doc the article is in now."""
    from articles.ingest.intake import ArticleInput, accept_articles

    river, museum = corpus["river"], corpus["museum"]
    current = Article.objects.get(nid="river-3")
    repost = ArticleInput(nid="river-3", url=current.url, title=current.title,
                          content=current.content + " 更正：时间为上午十点。", hotness=5.0)
    outcome = during_a_merge(river, museum,
                             lambda: accept_articles([repost], enqueue=False))
    assert isinstance(outcome, list) and [a.nid for a in outcome] == ["river-3"], outcome
    stored = Article.objects.get(nid="river-3")
    assert stored.content.endswith("更正：时间为上午十点。") and stored.hotness == 5.0
    assert stored.status == "queued"
    audit = AuditEntry.objects.get(action="body_changed", nid="river-3")
    assert audit.doc_id == museum.doc_id
