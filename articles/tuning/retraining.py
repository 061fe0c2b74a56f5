"""Retraining without a developer: a candidate vector version fitted on schedule.

The admin's switches (``EngineSettings``): ``retrain_automatically`` (default off) lets
the workers' watchdog (articles/ingest/watchdog.py) queue a fit once
``retrain_min_labels`` new labels exist (:func:`new_labels`: editors' decisions and sure
answers on the teaching queue, standing, made since the last fitted version). The job
fits with the existing path (``matcher.train_vector``: prior centred on
``matcher.prior_of``, whole decisions held out), which records the labels
and the figures and flags the version when one editor gave more than 60 % of its labels.
It is activated only when ``retrain_activate`` is on, the version is not flagged and
:func:`worse_on` finds no held-out measure on which it is worse than the active model;
otherwise it waits in the admin for a person.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from articles.models import (
    Decision,
    EngineSettings,
    MatchModelVersion,
    PairAnswer,
    PairLabel,
)
from articles.tuning import matcher

#: the watchdog queues a fit at most once in this many seconds (a fit refused for too
#: few labels of one kind is tried again after it, not every tick)
RETRY_SECONDS = 3600
MEASURES = ("f1", "precision", "recall")


def last_fitted() -> MatchModelVersion | None:
    """The latest version fitted to labels (not the shipped one an admin added)."""
    return (MatchModelVersion.objects.filter(trained_pairs__gt=0)
            .order_by("-created_at", "-pk").first())


def new_labels(since: datetime | None = None) -> int:
    """Standing editors' decisions and sure, standing answers on the teaching queue made
    after ``since`` (default: the last fitted version's creation; all without one)."""
    if since is None:
        last = last_fitted()
        since = last.created_at if last is not None else None
    decisions = Decision.objects.filter(undone_at__isnull=True)
    answers = PairLabel.objects.filter(undone_at__isnull=True).exclude(
        answer=PairAnswer.UNSURE)
    if since is not None:
        decisions = decisions.filter(created_at__gt=since)
        answers = answers.filter(created_at__gt=since)
    return decisions.count() + answers.count()


def due(settings: EngineSettings | None = None) -> bool:
    """Is a scheduled fit wanted: the switch on and enough new labels? (Reads the
    settings row without making it: the watchdog asks every tick.)"""
    settings = settings or EngineSettings.objects.filter(pk=1).first()
    if settings is None or not settings.retrain_automatically:
        return False
    return new_labels() >= settings.retrain_min_labels


#: why a version fitted on schedule was not activated (codes; the admin translates them)
OFF, FLAGGED, NOTHING_HELD_OUT = "off", "flagged", "nothing-held-out"
DECISIONS, AUDIT = "decisions", "audit"


def worse_on(report: dict[str, Any]) -> list[str]:
    """The held-out measures on which the version of ``report`` is worse than the active
    model, as ``"<stream>:<measure>"`` (empty: not worse on any): F1, precision and
    recall at the match threshold on the held-out decisions, and on the audit stream's
    held-out answers when there are any. No held-out decisions at all counts as worse
    (:data:`NOTHING_HELD_OUT`): nothing vouches for it."""
    thresholds = report.get("thresholds") or []
    if not report.get("heldOutDecisions") or report.get("threshold") not in thresholds:
        return [NOTHING_HELD_OUT]
    i = thresholds.index(report["threshold"])
    streams = [(DECISIONS, report["current"][i], report["proposed"][i])]
    audit = report.get("audit") or {}
    if audit.get("answers"):
        streams.append((AUDIT, audit["current"], audit["proposed"]))
    worse = []
    for stream, current, proposed in streams:
        for measure in MEASURES:
            before, after = current.get(measure), proposed.get(measure)
            if before is not None and (after is None or after < before - 1e-9):
                worse.append(f"{stream}:{measure}")
    return worse


def retrain() -> tuple[MatchModelVersion, bool]:
    """Fit a candidate vector version on schedule and say whether it may be activated
    (the admin's switch, not flagged, not worse); the reasons are kept in its report
    (``automatic``). Raises ``matcher.NotEnoughLabels``."""
    version = matcher.train_vector(scheduled=True)
    settings = EngineSettings.load()
    why = worse_on(version.report)
    if version.flagged:
        why.insert(0, FLAGGED)
    if not settings.retrain_activate:
        why.insert(0, OFF)
    version.report["automatic"] = {"activated": not why, "notActivated": why}
    version.save(update_fields=["report"])
    return version, not why
