"""/stats/: what the system is doing. Staff only; charts are server-rendered SVG."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.admin.views.decorators import staff_member_required
from django.db.models import Count, Q
from django.db.models.functions import TruncDay, TruncHour
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _

from articles.editor import review
from articles.editor.charts import bar_chart
from articles.models import Article, ArticleStatus, Doc, MatchedBy
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


@staff_member_required(login_url="/accounts/login/")
def stats(request: HttpRequest) -> HttpResponse:
    done = Article.objects.filter(status=ArticleStatus.DONE)
    totals = {
        "articles": Article.objects.count(),
        "queued": Article.objects.filter(status=ArticleStatus.QUEUED).count(),
        "failed": Article.objects.filter(status=ArticleStatus.FAILED).count(),
        "duplicates": done.filter(matched_by__isnull=False).count(),
        "docs": Doc.objects.filter(size__gt=0).count(),
        "review": review.review_queue(review.rules()).count(),
        "outbox": outbox.outbox_lag(),
    }
    charts = [
        (_("Articles received per hour (48 h)"), bar_chart(ingest_per_hour(), fmt="{:.0f}")),
        (_("Duplicate ratio by day"), bar_chart(duplicate_ratio_by_day(), color="#d6762a",
                                                fmt="{:.2f}")),
        (_("Duplicate ratio by media"), bar_chart(duplicate_ratio_by_media(),
                                                  color="#2f9e6e", fmt="{:.2f}")),
        (_("Hamming distance of content matches"), bar_chart(distance_histogram(),
                                                             color="#7a4fd6", fmt="{:.0f}")),
        (_("Cluster sizes (docIds)"), bar_chart(cluster_sizes(), color="#c2410c",
                                                fmt="{:.0f}")),
    ]
    return render(request, "stats/stats.html", {"totals": totals, "charts": charts})
