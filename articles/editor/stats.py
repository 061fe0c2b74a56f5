"""/stats/: what the system and the desk are doing; charts are server-rendered SVG.

Staff and editors see it: on top, the signed-in editor's decisions today and the desk's
throughput (decisions per hour from the Decision rows; the review queue over time from
the samples the workers' watchdog writes, QueueSample), then what teaching did (labels
given per editor: answers on the teaching queue and decisions; the held-out precision
and recall of each fitted match model version over time), then the system's charts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Q
from django.db.models.functions import TruncDay, TruncHour
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _

from articles.editor import review
from articles.editor.charts import bar_chart, line_chart
from articles.editor.views import viewer_required
from articles.models import (
    Article,
    ArticleStatus,
    Decision,
    Doc,
    MatchedBy,
    MatchModelVersion,
    PairAnswer,
    PairLabel,
    QueueSample,
)
from articles.representatives import outbox

SIZE_BUCKETS = [(1, 1), (2, 2), (3, 5), (6, 10), (11, 20), (21, 50), (51, None)]


def ingest_per_hour(hours: int = 48) -> list[tuple[str, float]]:
    since = timezone.now() - timedelta(hours=hours)
    rows = dict(
        Article.objects.filter(received_at__gte=since).annotate(hour=TruncHour("received_at"))
        .values("hour").annotate(n=Count("id")).values_list("hour", "n")
    )
    start = since.replace(minute=0, second=0, microsecond=0)
    points = []
    for i in range(hours + 1):
        hour = start + timedelta(hours=i)
        points.append((hour.strftime("%m-%d %H"), float(rows.get(hour, 0))))
    return points


def duplicate_ratio_by_day(days: int = 30) -> list[tuple[str, float]]:
    since = timezone.now() - timedelta(days=days)
    rows = (
        Article.objects.filter(status=ArticleStatus.DONE, received_at__gte=since)
        .annotate(day=TruncDay("received_at")).values("day")
        .annotate(total=Count("id"), dups=Count("id", filter=Q(matched_by__isnull=False)))
        .order_by("day")
    )
    return [(row["day"].strftime("%m-%d"), row["dups"] / row["total"]) for row in rows]


def duplicate_ratio_by_media(top: int = 15) -> list[tuple[str, float]]:
    rows = (
        Article.objects.filter(status=ArticleStatus.DONE).values("media")
        .annotate(total=Count("id"), dups=Count("id", filter=Q(matched_by__isnull=False)))
        .order_by("-total")[:top]
    )
    return [(row["media"] or "—", row["dups"] / row["total"]) for row in rows]


def distance_histogram() -> list[tuple[str, float]]:
    rows = dict(
        Article.objects.filter(matched_by=MatchedBy.CONTENT, distance__isnull=False)
        .values("distance").annotate(n=Count("id")).values_list("distance", "n")
    )
    top = max((d for d in rows if d is not None), default=8)
    return [(str(d), float(rows.get(d, 0))) for d in range(0, max(top, 8) + 1)]


def cluster_sizes() -> list[tuple[str, float]]:
    points = []
    for low, high in SIZE_BUCKETS:
        docs = Doc.objects.filter(size__gte=low)
        if high is not None:
            docs = docs.filter(size__lte=high)
        label = str(low) if low == high else (f"{low}–{high}" if high else f"{low}+")
        points.append((label, float(docs.count())))
    return points


#: /stats/ lists this many of my decisions today (the count says how many there were).
MINE_SHOWN = 100


def _today_start() -> datetime:
    return timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)


def my_decisions_today(user: Any) -> tuple[list[Decision], int]:
    """The signed-in editor's decisions since midnight (local time), newest first; the
    count is of those that still stand (an undone one is listed, struck through)."""
    mine = Decision.objects.filter(actor=user, created_at__gte=_today_start())
    return (list(mine.select_related("bulk").order_by("-created_at", "-pk")[:MINE_SHOWN]),
            mine.filter(undone_at__isnull=True).count())


@dataclass(frozen=True)
class DeskRow:
    """One editor's day: what stands, by hand and in bulk, and what was undone."""

    editor: str
    by_hand: int  # decisions made one at a time that still stand
    in_bulk: int  # clusters decided by bulk actions, still standing
    bulk_actions: int  # the bulk actions those came from
    undone: int  # decisions made today and undone since

    @property
    def standing(self) -> int:
        return self.by_hand + self.in_bulk


def desk_today() -> list[DeskRow]:
    """Decisions per editor since midnight: standing (by hand, in bulk) and undone; the
    editor with the most standing decisions by hand first."""
    standing, undone = Q(undone_at__isnull=True), Q(undone_at__isnull=False)
    rows = (Decision.objects.filter(created_at__gte=_today_start())
            .values("actor__username")
            .annotate(by_hand=Count("id", filter=standing & Q(bulk__isnull=True)),
                      in_bulk=Count("id", filter=standing & Q(bulk__isnull=False)),
                      bulk_actions=Count("bulk", filter=standing, distinct=True),
                      undone=Count("id", filter=undone)))
    out = [DeskRow(row["actor__username"] or "—", row["by_hand"], row["in_bulk"],
                   row["bulk_actions"], row["undone"]) for row in rows]
    return sorted(out, key=lambda r: (-r.by_hand, -r.in_bulk, r.editor))


def _hours(hours: int) -> tuple[datetime, list[datetime]]:
    now = timezone.now()
    start = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=hours - 1)
    return start, [start + timedelta(hours=i) for i in range(hours)]


def decisions_per_hour(hours: int = 24) -> list[tuple[str, float]]:
    """The desk's decisions (every editor, bulk ones counted per cluster) per hour."""
    start, slots = _hours(hours)
    rows = dict(
        Decision.objects.filter(created_at__gte=start).annotate(hour=TruncHour("created_at"))
        .values("hour").annotate(n=Count("id")).values_list("hour", "n"))
    return [(timezone.localtime(hour).strftime("%H:00"), float(rows.get(hour, 0)))
            for hour in slots]


def queue_size_per_hour(hours: int = 48) -> list[tuple[str, float]]:
    """The review queue's size at the last sample of each hour (QueueSample, written by
    the workers' watchdog every QUEUE_SAMPLE_SECONDS); an hour without a sample is empty."""
    start, slots = _hours(hours)
    last: dict[datetime, int] = {}
    for taken_at, size in (QueueSample.objects.filter(taken_at__gte=start)
                           .order_by("taken_at").values_list("taken_at", "size")):
        last[taken_at.replace(minute=0, second=0, microsecond=0)] = size
    return [(timezone.localtime(hour).strftime("%m-%d %H"), float(last.get(hour, 0)))
            for hour in slots]


@dataclass(frozen=True)
class LabelRow:
    """The labels one editor gave, all time, standing: answers on the teaching queue
    (by answer) and decisions on clusters."""

    editor: str
    same: int
    different: int
    unsure: int
    decisions: int

    @property
    def labels(self) -> int:
        """What the match model fits on: sure answers and decisions."""
        return self.same + self.different + self.decisions


def labels_per_editor() -> list[LabelRow]:
    """Labels given per editor (standing: undone ones are not counted), most first."""
    standing = Q(undone_at__isnull=True)
    answers: dict[str, dict[str, Any]] = {row["editor__username"] or "—": dict(row) for row in (
        PairLabel.objects.filter(standing).values("editor__username").annotate(
            same=Count("id", filter=Q(answer=PairAnswer.SAME)),
            different=Count("id", filter=Q(answer=PairAnswer.DIFFERENT)),
            unsure=Count("id", filter=Q(answer=PairAnswer.UNSURE))))}
    decisions = {name or "—": n for name, n in (
        Decision.objects.filter(standing).values("actor__username")
        .annotate(n=Count("id")).values_list("actor__username", "n"))}
    none: dict[str, Any] = {}
    out = [LabelRow(editor, answers.get(editor, none).get("same", 0),
                    answers.get(editor, none).get("different", 0),
                    answers.get(editor, none).get("unsure", 0), decisions.get(editor, 0))
           for editor in {*answers, *decisions}]
    return sorted(out, key=lambda r: (-r.labels, r.editor))


#: /stats/ draws the held-out figures of this many of the latest fitted versions.
VERSIONS_SHOWN = 12


def versions_over_time(limit: int = VERSIONS_SHOWN
                       ) -> list[tuple[MatchModelVersion, dict[str, Any]]]:
    """The latest ``limit`` versions with a held-out comparison, oldest first, each with
    its own held-out figures at the threshold it was compared at (the ``proposed`` row
    of its report: precision, recall, F1 on the decisions it did not see)."""
    out = []
    for version in MatchModelVersion.objects.filter(held_out_pairs__gt=0).order_by(
            "-created_at", "-pk")[:limit]:
        report = version.report or {}
        thresholds = report.get("thresholds") or []
        if report.get("threshold") in thresholds:
            out.append((version, report["proposed"][thresholds.index(report["threshold"])]))
    return out[::-1]


def teaching_chart(versions: list[tuple[MatchModelVersion, dict[str, Any]]]) -> Any:
    """Held-out precision and recall of each version, by the day it was fitted."""
    return line_chart(
        [timezone.localtime(v.created_at).strftime("%m-%d") for v, _row in versions],
        [(str(_("precision")), "#2458d6", [row.get("precision") for _v, row in versions]),
         (str(_("recall")), "#d6762a", [row.get("recall") for _v, row in versions])],
        title=str(_("Held-out precision and recall of each model version")))


#: The system's figures are computed at most once in STATS_CACHE_SECONDS per process.
SYSTEM_CACHE_KEY = "stats:system"


def system_figures() -> dict[str, Any]:
    """The totals and the chart points of the system's part: aggregates over every
    article, so they are kept STATS_CACHE_SECONDS (Django's cache) and shared by every
    visit meanwhile; the desk's part of the page is always live (and cheap)."""
    figures: dict[str, Any] | None = cache.get(SYSTEM_CACHE_KEY)
    if figures is not None:
        return figures
    done = Article.objects.filter(status=ArticleStatus.DONE)
    figures = {
        "totals": {
            "articles": Article.objects.count(),
            "queued": Article.objects.filter(status=ArticleStatus.QUEUED).count(),
            "failed": Article.objects.filter(status=ArticleStatus.FAILED).count(),
            "duplicates": done.filter(matched_by__isnull=False).count(),
            "docs": Doc.objects.filter(size__gt=0).count(),
            "review": review.review_queue(review.rules()).count(),
            "outbox": outbox.outbox_lag(),
        },
        "ingest": ingest_per_hour(),
        "by_day": duplicate_ratio_by_day(),
        "by_media": duplicate_ratio_by_media(),
        "distances": distance_histogram(),
        "sizes": cluster_sizes(),
        "computed_at": timezone.now(),
    }
    if settings.STATS_CACHE_SECONDS:
        cache.set(SYSTEM_CACHE_KEY, figures, settings.STATS_CACHE_SECONDS)
    return figures


@viewer_required
def stats(request: HttpRequest) -> HttpResponse:
    figures = system_figures()
    charts = [
        (_("Articles received per hour (48 h)"), bar_chart(figures["ingest"], fmt="{:.0f}")),
        (_("Duplicate ratio by day"), bar_chart(figures["by_day"], color="#d6762a",
                                                fmt="{:.2f}")),
        (_("Duplicate ratio by media"), bar_chart(figures["by_media"],
                                                  color="#2f9e6e", fmt="{:.2f}")),
        (_("Hamming distance of content matches"), bar_chart(figures["distances"],
                                                             color="#7a4fd6", fmt="{:.0f}")),
        (_("Cluster sizes (docIds)"), bar_chart(figures["sizes"], color="#c2410c",
                                                fmt="{:.0f}")),
    ]
    mine, mine_total = my_decisions_today(request.user)
    desk = [
        (_("Decisions per hour, the whole desk (24 h)"),
         bar_chart(decisions_per_hour(), color="#2f9e6e", fmt="{:.0f}")),
        (_("Review queue size (48 h, sampled by the workers)"),
         bar_chart(queue_size_per_hour(), color="#d6762a", fmt="{:.0f}")),
    ]
    versions = versions_over_time()
    return render(request, "stats/stats.html", {
        "labels": labels_per_editor(), "versions": versions,
        "teaching_chart": teaching_chart(versions) if versions else None,
        "totals": figures["totals"], "computed_at": figures["computed_at"], "charts": charts,
        "mine": mine, "mine_total": mine_total, "desk": desk, "desk_today": desk_today(),
        "day_start": _today_start()})
