"""Writers take row locks in one order (docs by key, then articles), so a split, a move, a
repost or a hotness update that meets a merge waits for it instead of deadlocking.

A merge locks its two docs and then rewrites their articles. Before the one order, a split
locked its article first and then the doc: the two transactions waited on each other and
MariaDB rolled one back (error 1213), so the editor read "another editor was changing
this cluster" instead of who changed it and how. Each test pauses a real ``merge_docs``
right after it took its locks, starts the other writer, waits until MariaDB reports it
waiting on a lock, and lets the merge go on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from django.db import OperationalError, connection

from articles.editor import actions
from articles.models import Article, AuditEntry, Doc
from tests.browser import stories

pytestmark = [pytest.mark.mysql, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def corpus(client, auth, run_worker) -> dict[str, Doc]:
    stories.load(client, auth, run_worker)
    return {key: Article.objects.get(nid=f"{key}-1").doc
            for key in ("river", "library", "museum")}


def test_the_database_reads_committed_rows():
    """The lock order reads an article's doc again after a lock wait, without a lock: it
    must see the commit it waited for (REPEATABLE READ would show its first snapshot)."""
    assert connection.isolation_level == "read committed"
    with connection.cursor() as cursor:
        cursor.execute("SELECT @@SESSION.tx_isolation")
        assert cursor.fetchone()[0] == "READ-COMMITTED"


def waiting_on_locks(count: int, timeout: float = 20.0) -> None:
    """Until `count` connections sit in a locking read (FOR UPDATE) for a moment: waiting
    on a row lock, since the merge holding the locks is paused outside any statement."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                           "WHERE COMMAND = 'Query' AND INFO LIKE %s AND TIME_MS > 200",
                           ["%FOR UPDATE%"])
            if cursor.fetchone()[0] >= count:
                return
        time.sleep(0.02)
    raise AssertionError(f"fewer than {count} connections waiting on a row lock")


class Writer(threading.Thread):
    """A writer in a thread of its own (its own connection): what it returned or raised."""

    def __init__(self, act: Callable[[], object]) -> None:
        super().__init__()
        self.act = act
        self.outcome: list[object] = []

    def run(self) -> None:
        try:
            self.outcome.append(self.act())
        except BaseException as exc:  # noqa: BLE001 - the test asserts on it
            self.outcome.append(exc)
        finally:
            connection.close()

    def result(self) -> object:
        self.join(30)
        assert not self.is_alive() and len(self.outcome) == 1
        assert not isinstance(self.outcome[0], OperationalError), self.outcome[0]
        return self.outcome[0]


@contextmanager
def paused_merge(source: Doc, target: Doc, monkeypatch) -> Iterator[Writer]:
    """``merge_docs(source, target)`` held right after it locked both docs (its version
    check is the first thing it does under the locks) until the block ends."""
    locked, release = threading.Event(), threading.Event()
    real_check = actions._check_version

    def check(doc: Doc, expected: int | None) -> None:
        if threading.current_thread() is merging and not locked.is_set():
            locked.set()
            release.wait(20)
        real_check(doc, expected)

    monkeypatch.setattr(actions, "_check_version", check)
    merging = Writer(lambda: actions.merge_docs(source, target, None))
    merging.start()
    assert locked.wait(20)
    try:
        yield merging
    finally:
        release.set()


@pytest.mark.parametrize("action", ["split", "move", "representative"])
def test_an_editor_action_meeting_a_merge_waits_and_is_refused_as_stale(corpus, monkeypatch,
                                                                       action):
    river, library, museum = corpus["river"], corpus["library"], corpus["museum"]
    article = Article.objects.get(nid="river-3")
    act = {
        "split": lambda: actions.split_article(article, None, version=river.version),
        "move": lambda: actions.move_article(article, library, None, version=river.version),
        "representative": lambda: actions.choose_representative(article, None,
                                                                version=river.version),
    }[action]
    with paused_merge(river, museum, monkeypatch) as merging:
        acting = Writer(act)
        acting.start()
        waiting_on_locks(1)
    assert isinstance(merging.result(), Doc)  # not chosen as a deadlock victim
    assert isinstance(acting.result(), actions.StaleVersion)
    assert Article.objects.get(nid="river-3").doc_id == museum.pk
    assert Doc.objects.get(pk=river.pk).size == 0


def test_a_split_behind_two_merges_follows_its_article_without_a_deadlock(corpus,
                                                                         monkeypatch):
    """river -> museum holds its locks; a split of a river article waits; museum ->
    library waits too. When they go on, the split finds its article moved twice: it
    locks each new doc before the article, and is refused as stale."""
    river, library, museum = corpus["river"], corpus["library"], corpus["museum"]
    article = Article.objects.get(nid="river-3")
    with paused_merge(river, museum, monkeypatch) as first:
        splitting = Writer(lambda: actions.split_article(article, None,
                                                         version=river.version))
        splitting.start()
        waiting_on_locks(1)
        second = Writer(lambda: actions.merge_docs(Doc.objects.get(pk=museum.pk),
                                                   Doc.objects.get(pk=library.pk), None))
        second.start()
        waiting_on_locks(2)
    assert isinstance(first.result(), Doc)
    assert isinstance(second.result(), Doc)
    assert isinstance(splitting.result(), actions.StaleVersion)
    assert Article.objects.get(nid="river-3").doc_id == library.pk
    assert Doc.objects.get(pk=library.pk).size == 2 + 2 + 3


def test_a_hotness_update_meeting_a_merge_waits_and_lands_in_the_merged_doc(corpus,
                                                                           monkeypatch):
    """The API's hotness update locks the article's doc first too: it waits for the merge,
    follows the article into its new doc and re-elects that doc's representative."""
    from articles.ingest.intake import update_hotness

    river, museum = corpus["river"], corpus["museum"]
    with paused_merge(river, museum, monkeypatch) as merging:
        updating = Writer(lambda: update_hotness("river-3", 10_000.0))
        updating.start()
        waiting_on_locks(1)
    assert isinstance(merging.result(), Doc)
    assert isinstance(updating.result(), Article)
    assert Article.objects.get(nid="river-3").hotness == 10_000.0
    assert AuditEntry.objects.get(action="hotness", nid="river-3").doc_id == museum.doc_id


def test_a_changed_repost_meeting_a_merge_waits_and_sees_the_merge(corpus, monkeypatch):
    """A repost locks its article's doc first too: it waits for the merge and then finds
    the article pinned by it (an editor's merge wins over a changed repost: the text is
    kept, counted as pinned), in the merged doc, with no deadlock on either side."""
    from articles.ingest.intake import Accepted, ArticleInput, accept_articles

    river, museum = corpus["river"], corpus["museum"]
    current = Article.objects.get(nid="river-3")
    repost = ArticleInput(nid="river-3", url=current.url, title=current.title,
                          content=current.content + " 更正：时间为上午十点。", hotness=5.0)
    counts = Accepted()
    with paused_merge(river, museum, monkeypatch) as merging:
        posting = Writer(lambda: accept_articles([repost], enqueue=False, accepted=counts))
        posting.start()
        waiting_on_locks(1)
    assert isinstance(merging.result(), Doc)
    stored = posting.result()
    assert isinstance(stored, list) and [a.nid for a in stored] == ["river-3"], stored
    assert (counts.pinned, counts.changed) == (1, 0)
    article = Article.objects.get(nid="river-3")
    assert article.content == current.content and article.pinned
    assert article.doc_id == museum.pk
