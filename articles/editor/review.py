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

The three numbers are the admin's (EngineSettings, "review: ..." fields), and so is the
order the page lists them in (``review_order``, :func:`in_order`): by the model (the
match probability nearest the threshold first, then the hottest) or as before
(:func:`most_doubtful`).
Confirming the doc pins every member and splitting or moving the article pins
it, so each decision takes items out of the queue: the count goes down.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from articles.models import (
    Article,
    DeskPreference,
    Doc,
    DocStatus,
    EngineSettings,
    MatchedBy,
    PassKind,
    ReviewClaim,
    ReviewOrder,
    ReviewPass,
    ReviewRules,
)
from articles.tuning.state import active_config

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


def narrowed(queue: QuerySet[Article], rules: ReviewRules, filters: dict[str, Any]
             ) -> QuerySet[Article]:
    """The queue within an editor's desk filter (ReviewFilterForm.values): media, why the
    item is in the queue, cluster size."""
    if filters.get("media"):
        queue = queue.filter(media=filters["media"])
    reason = filters.get("reason")
    if reason == NEAR_THRESHOLD:
        queue = queue.filter(distance__gte=rules.distance)
    elif reason == TITLE_ONLY:
        queue = queue.filter(matched_by=MatchedBy.TITLE)
    elif reason == LOW_SIMILARITY:
        queue = queue.filter(similarity__lt=rules.similarity)
    elif reason == LARGE:
        queue = queue.filter(doc__size__gte=rules.cluster_size)
    elif reason == FLAGGED:
        queue = queue.filter(doc__status=DocStatus.NEEDS_REVIEW)
    if filters.get("min_size"):
        queue = queue.filter(doc__size__gte=filters["min_size"])
    if filters.get("max_size"):
        queue = queue.filter(doc__size__lte=filters["max_size"])
    return queue


def desk_filter(user: Any) -> dict[str, Any]:
    """The user's saved desk filter ({} for none, or for an anonymous user)."""
    if not getattr(user, "is_authenticated", False):
        return {}
    saved = DeskPreference.objects.filter(user=user).values_list("review_filter",
                                                                 flat=True).first()
    return dict(saved or {})


def save_desk_filter(user: Any, filters: dict[str, Any]) -> None:
    DeskPreference.objects.update_or_create(user=user, defaults={"review_filter": filters})


def desk_queue(user: Any) -> tuple[QuerySet[Article], dict[str, Any]]:
    """The review queue as ``user`` works it: the whole queue narrowed by their desk."""
    rules_now = rules()
    filters = desk_filter(user)
    return narrowed(review_queue(rules_now), rules_now, filters), filters


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


def in_order(queue: QuerySet[Article], limit: int, window: int = WINDOW) -> list[int]:
    """Ids of the first ``limit`` of the newest ``window`` items in the admin's order
    (``EngineSettings.review_order``): :func:`nearest_the_threshold` by default, else
    :func:`most_doubtful`."""
    order = EngineSettings.objects.filter(pk=1).values_list("review_order", flat=True).first()
    if (order or ReviewOrder.MODEL) == ReviewOrder.DOUBT:
        return most_doubtful(queue, limit, window)
    return nearest_the_threshold(queue, limit, window)


def nearest_the_threshold(queue: QuerySet[Article], limit: int, window: int = WINDOW
                          ) -> list[int]:
    """Ids of the ``limit`` items of the newest ``window`` the model is least sure of: the
    match probability (as scored when the article was matched) nearest the active match
    threshold first, then the hottest, then the newest; an item without a probability
    (matched before the model scored matches) last."""
    threshold = active_config().match_threshold
    rows = list(queue.values_list("pk", "match_probability", "hotness")[:window])
    rows.sort(key=lambda row: (
        abs(row[1] - threshold) if row[1] is not None else 2.0, -(row[2] or 0.0), -row[0]))
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


# --- claims: two editors working the queue take different clusters ------------------


def _clusters_of(article_ids: Iterable[int]) -> dict[int, int]:
    """Article id -> its Doc's primary key, for the articles in a cluster."""
    rows = Article.objects.filter(pk__in=list(article_ids), doc__isnull=False)
    return {int(pk): int(doc) for pk, doc in rows.values_list("pk", "doc")}


def active_claims(article_ids: Iterable[int], now: dt.datetime | None = None,
                  ) -> dict[int, ReviewClaim]:
    """The unexpired claims on these items or on their clusters, by article id (with
    their editors): a claim on one member of a cluster covers every member."""
    now = now or timezone.now()
    ids = list(article_ids)
    docs = _clusters_of(ids)
    claims = list(ReviewClaim.objects.filter(expires_at__gt=now)
                  .filter(Q(article_id__in=ids) | Q(doc__in=set(docs.values())))
                  .select_related("editor"))
    by_article = {c.article_id: c for c in claims}
    by_doc = {c.doc_pk: c for c in claims if c.doc_pk is not None}
    out = {}
    for article_id in ids:
        doc_pk = docs.get(article_id)
        claim = by_article.get(article_id) or (by_doc.get(doc_pk) if doc_pk else None)
        if claim is not None:
            out[article_id] = claim
    return out


def cluster_claims(doc_pks: Iterable[int], now: dt.datetime | None = None
                   ) -> dict[int, ReviewClaim]:
    """The unexpired claims on these clusters, by doc id (for /clusters/ and the cluster
    page: "anna is reviewing this")."""
    now = now or timezone.now()
    return {c.doc_pk: c for c in ReviewClaim.objects.filter(
        doc__in=list(doc_pks), expires_at__gt=now).select_related("editor")
        if c.doc_pk is not None}


def open_requests(doc_pks: Iterable[int]) -> dict[int, ReviewPass]:
    """Unresolved "ask a second editor" requests on these clusters, by doc id."""
    return {p.doc_pk: p for p in ReviewPass.objects.filter(
        doc__in=list(doc_pks), kind=PassKind.SECOND, resolved_at__isnull=True)
        .select_related("editor").order_by("created_at")}


def routed(user: User, candidates: list[int]) -> list[int]:
    """The queue's order for ``user`` taking the next item: clusters another editor asked
    a second opinion on first, then the rest, then the ones this editor skipped; never a
    cluster this editor asked a second opinion on."""
    return _route(user, candidates, _clusters_of(candidates))


def _route(user: User, candidates: list[int], docs: dict[int, int]) -> list[int]:
    asked = open_requests(set(docs.values()))
    skipped = set(ReviewPass.objects.filter(
        editor=user, kind=PassKind.SKIP, doc__in=set(docs.values()),
        created_at__gt=timezone.now() - dt.timedelta(days=1)).values_list("doc", flat=True))
    mine = {doc for doc, request in asked.items() if request.editor_id == user.pk}
    first = [a for a in candidates if docs.get(a) in asked and docs.get(a) not in mine]
    last = [a for a in candidates if docs.get(a) in skipped and docs.get(a) not in asked]
    middle = [a for a in candidates
              if a not in first and a not in last and docs.get(a) not in mine]
    return first + middle + last


def take_next(user: User, candidates: list[int], now: dt.datetime | None = None) -> int | None:
    """Claim the first of `candidates` (in :func:`routed` order) whose cluster no other
    editor holds, for ``settings.REVIEW_CLAIM_SECONDS``; returns its article id, or None
    when every one is taken. An editor holds one item at a time: taking the next
    releases the previous.

    Two editors taking at the same moment: the unique constraints on the claimed
    article and cluster let one INSERT through; the other's fails and it tries the next
    candidate.
    """
    now = now or timezone.now()
    expires = now + dt.timedelta(seconds=settings.REVIEW_CLAIM_SECONDS)
    # Separate statements (autocommit), not one transaction around the inserts: a
    # DELETE's gap lock held while inserting into the same gap deadlocks two takers.
    ReviewClaim.objects.filter(expires_at__lte=now).delete()
    release(user)
    docs = _clusters_of(candidates)
    order = _route(user, candidates, docs)
    held = set(active_claims(order, now))
    for article_id in order:
        if article_id in held or docs.get(article_id) is None:
            continue
        try:
            with transaction.atomic():
                ReviewClaim.objects.create(article_id=article_id, doc=Doc(pk=docs[article_id]),
                                           editor=user, claimed_at=now, expires_at=expires)
        except IntegrityError:
            continue  # taken by another editor a moment ago
        return article_id
    return None


def release(user: User) -> int | None:
    """Give up the item ``user`` holds; return its cluster's doc id (None: none held)."""
    claim = ReviewClaim.objects.filter(editor=user).first()
    ReviewClaim.objects.filter(editor=user).delete()
    return claim.doc_pk if claim is not None else None


def pass_on(user: User, kind: str, note: str = "") -> int | None:
    """Skip the held item, or ask a second editor to decide it (``kind``); the claim is
    released either way. Returns the cluster's doc id, None when nothing was held."""
    doc_pk = release(user)
    if doc_pk is not None:
        ReviewPass.objects.create(doc=Doc(pk=doc_pk), editor=user, kind=kind, note=note[:500])
    return doc_pk


def resolve_requests(doc_pks: Iterable[int]) -> None:
    """A decision on these clusters answers their open second-opinion requests."""
    ReviewPass.objects.filter(doc__in=list(doc_pks), kind=PassKind.SECOND,
                              resolved_at__isnull=True).update(resolved_at=timezone.now())
