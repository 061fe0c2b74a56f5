"""Writing and reading the change log (:class:`articles.models.Change`).

**Writing.** A change is logged by the transaction that makes it, like the
representative outbox: :func:`record` inserts the rows and gives them the next cursors
from the one-row :class:`~articles.models.ChangeCursor`, whose row lock the transaction
then holds until it commits. A second transaction that logs changes waits for that lock,
so it takes larger cursors *and* commits later: cursors are handed out in commit order,
and a reader that resumes after any cursor it was given never misses a row committed
afterwards (auto-increment ids, by contrast, are taken at insert time and commit in any
order). Call :func:`record` once the transaction holds every row lock it will take
(after its docs and articles are locked): it then waits for nobody while it holds the
cursor row, and nobody can wait for it in a cycle.

**Why a change happened** (``reason``) and **who caused it** (``actor``) come from the
caller, or from :func:`cause` around the code that makes the change (the editors'
actions set it once; ``election.refresh`` below them reads it).

**Reading.** :func:`read_after` returns the rows after a cursor, in cursor order, that a
key may read: the changes of the articles it posted, or all of them for a key whose
``may_read_others`` is set (the one rule for reads across keys, docs/api.md).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, Max
from django.dispatch import Signal
from django.utils import timezone

from articles.models import ApiKey, Change, ChangeCursor, ChangeKind

MAX_LIMIT = 1000

#: Sent once a transaction that logged changes has committed (downstream delivery
#: listens: articles/downstream/, connected in articles/apps.py).
committed = Signal()


@dataclass(frozen=True)
class Pending:
    """A change to log, before its cursor is known."""

    kind: str
    doc_id: str
    nid: str = ""
    previous_doc_id: str = ""
    representative_nid: str = ""
    status: str = ""
    api_key_id: int | None = None
    reason: str = ""  # the caller's cause when empty


_cause: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar(
    "change_cause", default=("engine", ""))


@contextlib.contextmanager
def cause(reason: str, actor: str = "") -> Iterator[None]:
    """Changes logged inside this block without a reason of their own carry ``reason``
    and ``actor``."""
    token = _cause.set((reason, actor))
    try:
        yield
    finally:
        _cause.reset(token)


def editor_actor(user: Any) -> str:
    """How an editor appears as a change's ``actor``."""
    name = getattr(user, "get_username", lambda: "")()
    return f"editor:{name}" if name else "editor"


def record(changes: Sequence[Pending]) -> None:
    """Log ``changes`` in the caller's transaction, with the next cursors (module
    docstring: call it once the transaction holds its row locks)."""
    if not changes:
        return
    reason, actor = _cause.get()
    taken = ChangeCursor.objects.filter(pk=1).update(last=F("last") + len(changes))
    if not taken:  # a database whose cursor row is missing: created, then taken again
        ChangeCursor.objects.get_or_create(pk=1)
        ChangeCursor.objects.filter(pk=1).update(last=F("last") + len(changes))
    last = ChangeCursor.objects.values_list("last", flat=True).get(pk=1)
    now = timezone.now()
    Change.objects.bulk_create([
        Change(cursor=last - len(changes) + 1 + n, kind=c.kind, nid=c.nid, doc_id=c.doc_id,
               previous_doc_id=c.previous_doc_id, representative_nid=c.representative_nid,
               status=c.status, reason=(c.reason or reason)[:32], actor=actor[:160],
               api_key_id=c.api_key_id, at=now)
        for n, c in enumerate(changes)])
    transaction.on_commit(lambda: committed.send(sender=Change))


def membership(nid: str, doc_id: str, previous_doc_id: str, api_key_id: int | None,
               reason: str = "") -> Pending:
    return Pending(ChangeKind.MEMBERSHIP, doc_id, nid=nid, previous_doc_id=previous_doc_id,
                   api_key_id=api_key_id, reason=reason)


def representative(doc_id: str, nid: str, api_key_id: int | None, reason: str = ""
                   ) -> Pending:
    return Pending(ChangeKind.REPRESENTATIVE, doc_id, representative_nid=nid,
                   api_key_id=api_key_id, reason=reason)


def status(doc_id: str, value: str, api_key_id: int | None, reason: str = "") -> Pending:
    return Pending(ChangeKind.STATUS, doc_id, status=value, api_key_id=api_key_id,
                   reason=reason)


def read_after(cursor: int, limit: int, key: ApiKey | None, upto: int | None = None
               ) -> list[Change]:
    """The rows after ``cursor`` (up to ``upto`` included), in cursor order, at most
    ``limit`` (1 to :data:`MAX_LIMIT`), that ``key`` may read (None: every row, for the
    project's own consumers)."""
    rows = Change.objects.filter(cursor__gt=cursor).order_by("cursor")
    if upto is not None:
        rows = rows.filter(cursor__lte=upto)
    if key is not None and not key.may_read_others:
        rows = rows.filter(api_key=key)
    return list(rows[:limit])


def page_after(cursor: int, limit: int, key: ApiKey | None) -> tuple[list[Change], int]:
    """:func:`read_after`, and the cursor to resume from: the last row's when the page is
    full; else the largest cursor committed when the read began, whether ``key`` may
    read its row or not. That one is read *first*: cursors are committed in order, so a
    row committed after it has a larger cursor and the next page finds it, and a reader
    skips over what it may not read only once."""
    newest = Change.objects.aggregate(newest=Max("cursor"))["newest"] or 0
    rows = read_after(cursor, limit, key, upto=newest)
    if len(rows) == limit:
        return rows, rows[-1].cursor
    return rows, max(cursor, newest)


def last_cursor() -> int:
    """The largest cursor handed out so far (0: none)."""
    return ChangeCursor.objects.filter(pk=1).values_list("last", flat=True).first() or 0


def expire(days: int) -> int:
    """Drop the rows older than ``days`` (0 keeps every row); how many were dropped."""
    if days <= 0:
        return 0
    dropped, _ = Change.objects.filter(at__lt=timezone.now() - timedelta(days=days)).delete()
    return dropped
