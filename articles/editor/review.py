"""The review queue: automatic matches most worth a human look.

An article is in the queue when the engine placed it in a docId (by title or
content, not by an identical URL), no editor has placed or confirmed it yet
(``pinned`` is false, the doc is not confirmed), it is not the doc's
representative (it is what the others are compared with), and at least one of:

- its Hamming distance is near the threshold (``review_distance``, default 2
  with k = 3);
- it matched by title (the title rule: headlines alike, content verified);
- its verified similarity is low (below ``review_similarity``, default 0.8: a
  cut or padded copy);
- its docId is large (``review_cluster_size`` members or more, default 20);
- its docId was flagged ``needs_review``.

The three numbers are the admin's (EngineSettings, "review: ..." fields).
Confirming the doc pins every member and splitting or moving the article pins
it, so each decision takes items out of the queue: the count goes down.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from articles.models import (
    Article,
    DocStatus,
    EngineSettings,
    MatchedBy,
    ReviewClaim,
    ReviewRules,
)

NEAR_THRESHOLD = "near_threshold"
TITLE_ONLY = "title_only"
LOW_SIMILARITY = "low_similarity"
LARGE = "large_cluster"
FLAGGED = "flagged"


def rules() -> ReviewRules:
    """The admin's review rules (field defaults until the settings row exists)."""
    return EngineSettings.review_rules()


#: The queue page ranks the newest matches of this many by doubt (see most_doubtful).
WINDOW = 500


def review_queue(rules: ReviewRules) -> QuerySet[Article]:
    """Queue items, newest first (``Article.objects.review_queue``: the watchdog samples
    its size, below this room); :func:`most_doubtful` ranks a window of them."""
    return Article.objects.review_queue(rules)


def most_doubtful(queue: QuerySet[Article], limit: int, window: int = WINDOW) -> list[int]:
    """Ids of the ``limit`` most doubtful of the newest ``window`` items: lowest verified
    similarity first, then largest distance, then newest. Reads three columns a row."""
    rows = list(queue.values_list("pk", "similarity", "distance")[:window])
    rows.sort(key=lambda row: (
        row[1] if row[1] is not None else 2.0,
        -(row[2] if row[2] is not None else -1),
        -row[0],
    ))
    return [row[0] for row in rows[:limit]]


def reasons(article: Article, rules: ReviewRules) -> list[str]:
    """Why an article is in the queue (codes; the templates translate them)."""
    found = []
    if article.distance is not None and article.distance >= rules.distance:
        found.append(NEAR_THRESHOLD)
    if article.matched_by == MatchedBy.TITLE:
        found.append(TITLE_ONLY)
    if article.similarity is not None and article.similarity < rules.similarity:
        found.append(LOW_SIMILARITY)
    if article.doc is not None and article.doc.size >= rules.cluster_size:
        found.append(LARGE)
    if article.doc is not None and article.doc.status == DocStatus.NEEDS_REVIEW:
        found.append(FLAGGED)
    return found


# --- claims: two editors working the queue take different items ---------------------


def active_claims(article_ids: Iterable[int], now: dt.datetime | None = None,
                  ) -> dict[int, ReviewClaim]:
    """The unexpired claims on these items, by article id (with their editors)."""
    now = now or timezone.now()
    return {claim.article_id: claim for claim in
            ReviewClaim.objects.filter(article_id__in=list(article_ids), expires_at__gt=now)
            .select_related("editor")}


def take_next(user: User, candidates: list[int], now: dt.datetime | None = None) -> int | None:
    """Claim the first of `candidates` (the queue's order) no other editor holds, for
    ``settings.REVIEW_CLAIM_SECONDS``; returns its article id, or None when every one is
    taken. An editor holds one item at a time: taking the next releases the previous.

    Two editors taking at the same moment: the unique constraint on the claimed article
    lets one INSERT through; the other's fails and it tries the next candidate.
    """
    now = now or timezone.now()
    expires = now + dt.timedelta(seconds=settings.REVIEW_CLAIM_SECONDS)
    # Separate statements (autocommit), not one transaction around the inserts: a
    # DELETE's gap lock held while inserting into the same gap deadlocks two takers.
    ReviewClaim.objects.filter(expires_at__lte=now).delete()
    ReviewClaim.objects.filter(editor=user).delete()
    held = set(active_claims(candidates, now))
    for article_id in candidates:
        if article_id in held:
            continue
        try:
            with transaction.atomic():
                ReviewClaim.objects.create(article_id=article_id, editor=user,
                                           claimed_at=now, expires_at=expires)
        except IntegrityError:
            continue  # taken by another editor a moment ago
        return article_id
    return None
