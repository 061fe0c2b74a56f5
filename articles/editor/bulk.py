"""Bulk decisions: confirm many clusters, or mark them for review, in one RQ job.

An editor selects clusters on /clusters/ or /review/ (or takes every cluster the
/clusters/ filter matches); :func:`start` stores a :class:`BulkAction` with each
cluster's docId and the version the page showed, and enqueues one job on commit.
The job (:func:`run`) decides cluster by cluster, each with the single-cluster
service function (:func:`actions.confirm_doc`, :func:`actions.mark_for_review`), so
every cluster gets its own version check, Decision and audit entry, and writes its
progress on the row as it goes (the page polls it).

A cluster another editor decided on between the selection and the job's turn is
skipped and reported (who, what), never overwritten; so are clusters the action does
not apply to (already confirmed, already marked, empty).

Undo of a bulk action is itself a bulk action (``action="undo"``, ``undoes``): one job
that undoes each of its decisions. Each cluster's decision stands alone (it touched that
docId and the links between its own members only), so the undo restores every cluster
it can and reports the ones decided on since, which keep the later decision.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import OperationalError, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from articles.editor import actions
from articles.editor.params import parse_whole_number
from articles.lib.conflicts import lock_conflict
from articles.models import AuditEntry, BulkAction, BulkStatus, Decision, Doc, DocStatus
from dedupsite import redis_store

log = logging.getLogger(__name__)

#: The actions an editor can take over many clusters.
ACTIONS = (BulkAction.CONFIRM, BulkAction.FLAG)

#: A skipped cluster: its docId, why (a code the templates translate), and for "changed"
#: who decided on it last and how.
Skip = dict[str, str]


class BulkRefused(actions.EditError):
    """The request cannot start a bulk action (nothing was stored or changed); the message
    is for the editor."""


# --- choosing the clusters ----------------------------------------------------------


def targets_from_selection(values: Iterable[str]) -> list[tuple[int, int]]:
    """The checked clusters: ``"<docId>:<version>"`` each (the version the page showed).
    A malformed value or an unknown docId refuses the whole request."""
    shown: dict[str, int] = {}
    for value in values:
        doc_id, _sep, version = value.strip().rpartition(":")
        number = parse_whole_number(version)
        if not doc_id or number is None:
            raise BulkRefused(_("%(value)s is not a cluster.") % {"value": value[:80]})
        shown.setdefault(doc_id.lower(), number)
    known = dict(Doc.objects.filter(doc_id__in=list(shown)).values_list("doc_id", "pk"))
    unknown = sorted(set(shown) - set(known))
    if unknown:
        raise BulkRefused(_("There is no docId %(doc_id)s.") % {"doc_id": unknown[0][:40]})
    return [(known[doc_id], version) for doc_id, version in shown.items()]


def targets_from_filter(docs: QuerySet[Doc], shown_count: int) -> list[tuple[int, int]]:
    """Every cluster the filter matches now, at its current version. `docs` is the
    /clusters/ filter limited to the docIds the editor's page knew; when it no longer
    matches the number the page showed (clusters changed meanwhile), the editor's "all N"
    is out of date and nothing starts."""
    limit = settings.BULK_MAX_CLUSTERS
    rows = list(docs.values_list("pk", "version")[:limit + 1])
    if len(rows) != shown_count:
        raise BulkRefused(_(
            "The filter now matches %(now)s clusters, not the %(shown)s the page showed. "
            "Nothing was changed: check the list and try again.") % {
            "now": f"{limit}+" if len(rows) > limit else len(rows), "shown": shown_count})
    return rows


def start(user: User, action: str, targets: list[tuple[int, int]], *, note: str = "",
          selection: dict[str, Any] | None = None) -> BulkAction:
    """Store the bulk action and enqueue its job when the transaction commits."""
    if action not in ACTIONS:
        raise BulkRefused(_("Choose an action."))
    if not targets:
        raise BulkRefused(_("Select at least one cluster."))
    if len(targets) > settings.BULK_MAX_CLUSTERS:
        raise BulkRefused(_("A bulk decision takes at most %(max)s clusters: narrow the filter.")
                          % {"max": settings.BULK_MAX_CLUSTERS})
    bulk = BulkAction.objects.create(
        action=action, actor=user, note=note[:2000], selection=selection or {},
        targets=[[pk, version] for pk, version in targets], heartbeat_at=timezone.now())
    transaction.on_commit(lambda: _enqueue(bulk.pk))
    return bulk


def start_undo(bulk: BulkAction, user: User, note: str = "") -> BulkAction:
    """Undo a finished bulk action as a whole: one job that undoes each of its decisions
    not undone yet. Refused when it is still running, is itself an undo, or an undo of it
    was started already."""
    with transaction.atomic():
        bulk = BulkAction.objects.select_for_update().get(pk=bulk.pk)
        if bulk.action == BulkAction.UNDO:
            raise BulkRefused(_("An undo cannot be undone as a whole."))
        if not bulk.finished:
            raise BulkRefused(_("It is still running: wait for it to finish."))
        if bulk.undos.exclude(status=BulkStatus.FAILED).exists():
            raise BulkRefused(_("It was undone already."))
        decisions = list(bulk.decisions.filter(undone_at__isnull=True).order_by("pk")
                         .values_list("pk", flat=True))
        if not decisions:
            raise BulkRefused(_("Nothing of it is left to undo."))
        undo = BulkAction.objects.create(
            action=BulkAction.UNDO, actor=user, note=note[:2000], undoes=bulk,
            selection={"scope": "undo"}, targets=[[pk, 0] for pk in decisions],
            heartbeat_at=timezone.now())
        transaction.on_commit(lambda: _enqueue(undo.pk))
    return undo


def _enqueue(pk: int) -> None:
    try:
        redis_store.queue("default").enqueue(run, pk, job_timeout=3600)
    except Exception as exc:  # Redis down: say so on the page rather than wait forever
        log.exception("bulk action %s could not be queued", pk)
        BulkAction.objects.filter(pk=pk, status=BulkStatus.QUEUED).update(
            status=BulkStatus.FAILED, error=f"the job queue is unavailable ({exc})"[:500],
            finished_at=timezone.now())


# --- the job ------------------------------------------------------------------------


def run(pk: int) -> int:
    """The RQ job: apply a bulk action cluster by cluster; returns how many it changed.

    The job claims the row with a conditional UPDATE (queued -> running), so a second
    delivery does nothing, and resumes after the last cluster the row records (a job
    whose worker died is queued again by the watchdog:
    ``articles.ingest.watchdog.resume_bulk_actions``). Each
    progress UPDATE names the heartbeat the job last wrote: when the watchdog handed the
    action to another job meanwhile, this one stops."""
    beat = timezone.now()
    if not BulkAction.objects.filter(pk=pk, status=BulkStatus.QUEUED).update(
            status=BulkStatus.RUNNING, heartbeat_at=beat):
        return 0
    bulk = BulkAction.objects.select_related("actor").get(pk=pk)
    step = _undo_one if bulk.action == BulkAction.UNDO else _decide_one
    changed, skipped = bulk.changed, list(bulk.skipped)
    try:
        for index in range(bulk.processed, len(bulk.targets)):
            target, version = bulk.targets[index]
            skip = step(bulk, int(target), int(version))
            if skip is None:
                changed += 1
            else:
                skipped.append(skip)
            # Progress for the page: one small UPDATE a cluster (the skips as they come).
            now = timezone.now()
            fields: dict[str, Any] = {"processed": index + 1, "changed": changed,
                                      "heartbeat_at": now}
            if skip is not None:
                fields["skipped"] = skipped
            if not BulkAction.objects.filter(pk=pk, heartbeat_at=beat).update(**fields):
                return changed  # handed to another job by the watchdog: it goes on
            beat = now
    except Exception as exc:
        BulkAction.objects.filter(pk=pk, heartbeat_at=beat).update(
            status=BulkStatus.FAILED, error=f"{type(exc).__name__}: {exc}"[:500],
            finished_at=timezone.now(), skipped=skipped)
        raise
    BulkAction.objects.filter(pk=pk, heartbeat_at=beat).update(
        status=BulkStatus.DONE, finished_at=timezone.now())
    return changed


def _changed_by(doc_id: str) -> Skip:
    latest = AuditEntry.objects.filter(doc_id=doc_id).first()
    return {"doc_id": doc_id, "reason": "changed",
            "who": latest.actor_label if latest is not None else "",
            "what": latest.action if latest is not None else ""}


def _decide_one(bulk: BulkAction, doc_pk: int, version: int) -> Skip | None:
    """One cluster of a confirm or mark-for-review; a Skip when it was left alone."""
    doc = Doc.objects.filter(pk=doc_pk).first()
    if doc is None:
        return {"doc_id": "", "reason": "gone"}
    if bulk.decisions.filter(doc_id=doc.doc_id).exists():
        return None  # decided by an earlier job of this action that died before its UPDATE
    if doc.version != version:
        return _changed_by(doc.doc_id)
    if doc.size == 0:
        return {"doc_id": doc.doc_id, "reason": "empty"}
    if doc.status == DocStatus.CONFIRMED:
        return {"doc_id": doc.doc_id, "reason": "confirmed"}
    if bulk.action == BulkAction.FLAG and doc.status == DocStatus.NEEDS_REVIEW:
        return {"doc_id": doc.doc_id, "reason": "marked"}
    decide = actions.confirm_doc if bulk.action == BulkAction.CONFIRM \
        else actions.mark_for_review
    try:
        decide(doc, bulk.actor, bulk.note, version=version, bulk=bulk)
    except actions.StaleVersion:  # decided on between the read above and the row lock
        return _changed_by(doc.doc_id)
    except OperationalError as exc:
        if not lock_conflict(exc):
            raise
        return {"doc_id": doc.doc_id, "reason": "busy"}
    except actions.EditError:  # confirmed meanwhile (mark for review refuses that)
        return {"doc_id": doc.doc_id, "reason": "confirmed"}
    return None


def _undo_one(bulk: BulkAction, decision_pk: int, _version: int) -> Skip | None:
    decision = Decision.objects.filter(pk=decision_pk).first()
    if decision is None:
        return {"doc_id": "", "reason": "gone"}
    if (decision.undone_at is not None and decision.undone_at >= bulk.created_at
            and decision.undone_by_id == bulk.actor_id):
        return None  # undone by an earlier job of this undo that died before its UPDATE
    try:
        actions.undo(decision, bulk.actor, bulk.note, bulk=bulk)
    except actions.UndoRefused as exc:
        if exc.reason == "changed":
            return _changed_by(exc.doc_id or decision.doc_id)
        return {"doc_id": exc.doc_id or decision.doc_id, "reason": exc.reason}
    except OperationalError as exc:
        if not lock_conflict(exc):
            raise
        return {"doc_id": decision.doc_id, "reason": "busy"}
    return None

