"""The review queue: automatic matches most worth a human look.

An article is in the queue when the engine placed it in a docId (by title or
content, not by an identical URL), no editor has placed or confirmed it yet
(``pinned`` is false, the doc is not confirmed), it is not the doc's
representative (it is what the others are compared with), and at least one of:

- its Hamming distance is near the threshold (``k - 1`` or more; k = 3 -> 2, 3);
- it matched by title (the title rule: headlines alike, content verified);
- its verified similarity is low (< 0.8: a cut or padded copy);
- its docId is large (``LARGE_CLUSTER`` members or more);
- its docId was flagged ``needs_review``.

Confirming the doc pins every member and splitting or moving the article pins
it, so each decision takes items out of the queue: the count goes down.
"""

from __future__ import annotations

from django.db.models import F, Q, QuerySet

from articles.dedup import current_config
from articles.models import Article, ArticleStatus, DocStatus, MatchedBy

LARGE_CLUSTER = 10
LOW_SIMILARITY = 0.8

NEAR_THRESHOLD = "near_threshold"
TITLE_ONLY = "title_only"
LOW_SIMILARITY_REASON = "low_similarity"
LARGE = "large_cluster"
FLAGGED = "flagged"


def near_threshold_distance() -> int:
    return max(current_config().k - 1, 1)


def review_queue() -> QuerySet[Article]:
    """Queue items, most doubtful first: lowest verified similarity, then largest distance."""
    borderline = (
        Q(distance__gte=near_threshold_distance())
        | Q(matched_by=MatchedBy.TITLE)
        | Q(similarity__lt=LOW_SIMILARITY)
        | Q(doc__size__gte=LARGE_CLUSTER)
        | Q(doc__status=DocStatus.NEEDS_REVIEW)
    )
    return (
        Article.objects.filter(
            status=ArticleStatus.DONE,
            pinned=False,
            matched_by__in=[MatchedBy.TITLE, MatchedBy.CONTENT],
            doc__isnull=False,
        )
        .exclude(doc__status=DocStatus.CONFIRMED)
        .exclude(doc__representative=F("pk"))
        .filter(borderline)
        .order_by(F("similarity").asc(nulls_last=True), F("distance").desc(nulls_last=True),
                  "id")
    )


def reasons(article: Article) -> list[str]:
    """Why an article is in the queue (codes; the templates translate them)."""
    found = []
    if article.distance is not None and article.distance >= near_threshold_distance():
        found.append(NEAR_THRESHOLD)
    if article.matched_by == MatchedBy.TITLE:
        found.append(TITLE_ONLY)
    if article.similarity is not None and article.similarity < LOW_SIMILARITY:
        found.append(LOW_SIMILARITY_REASON)
    if article.doc is not None and article.doc.size >= LARGE_CLUSTER:
        found.append(LARGE)
    if article.doc is not None and article.doc.status == DocStatus.NEEDS_REVIEW:
        found.append(FLAGGED)
    return found
