from __future__ import annotations

from dataclasses import dataclass

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from articles.fields import UnsignedBigIntegerField
from articles.models.docs import Doc
from articles.models.keys import ApiKey
from articles.models.states import ArticleStatus, DocStatus


class MatchedBy(models.TextChoices):
    URL = "url", _("url")
    TITLE = "title", _("title")
    CONTENT = "content", _("content")
    PICTURE = "picture", _("picture")
    EDITOR = "editor", _("editor")


@dataclass(frozen=True)
class ReviewRules:
    """When an automatic match is worth a human look (the admin's EngineSettings)."""

    distance: int  # a match at this Hamming distance or more is borderline
    similarity: float  # a match verified below this similarity is borderline
    cluster_size: int  # a docId this large deserves a look


class ArticleQuerySet(models.QuerySet["Article"]):
    def lock_with_docs(self, *also: int) -> tuple[list[Article], dict[int, Doc]]:
        """Lock this queryset's articles and their docs (and the docs keyed `also`) in a
        transaction, in the one lock order every writer keeps: docs by key, then articles.
        Returns the locked articles (by key) and the locked docs by key.

        A merge locks two docs and then rewrites their articles; a writer that locked an
        article first and then its doc (even through InnoDB's foreign-key check when it
        rewrites an indexed column beside the doc's) could deadlock against it. Here the
        later writer waits on the doc. An article that moved meanwhile (the wait was on
        that move) is read again, without a lock (READ COMMITTED: the latest commit), and
        its new doc locked, before any article is: a writer moves an article only while
        it holds the article's doc, so once every doc read is locked nothing moves. Only
        an article given its first doc between the read and its lock (the worker places
        new articles) has that doc locked after it. A doc key that names no doc raises
        ``Doc.DoesNotExist``."""
        rows = list(self.values_list("pk", "doc_id"))
        pks = [pk for pk, _doc in rows]
        docs: dict[int, Doc] = {}

        def lock(keys: set[int]) -> None:
            docs.update((d.pk, d) for d in Doc.objects.select_for_update()
                        .filter(pk__in=sorted(keys)).order_by("pk"))
            if keys - docs.keys():
                raise Doc.DoesNotExist(f"no doc with the key(s) {sorted(keys - docs.keys())}")

        lock({doc for _pk, doc in rows if doc is not None} | set(also))
        while moved := set(Article.objects.filter(pk__in=pks).exclude(doc=None)
                           .values_list("doc_id", flat=True)) - docs.keys():
            lock(moved)  # moved while this waited: read again after each wait
        articles = list(Article.objects.select_for_update().filter(pk__in=pks).order_by("pk"))
        if late := {a.doc_pk for a in articles if a.doc_pk is not None} - docs.keys():
            lock(late)  # given a first doc between the read and the lock
        return articles, docs

    def lock_with_doc(self, *also: int) -> tuple[Article, dict[int, Doc]] | None:
        """:meth:`lock_with_docs` for a queryset of one article; None when none matches."""
        articles, docs = self.lock_with_docs(*also)
        return (articles[0], docs) if articles else None

    def queued(self) -> ArticleQuerySet:
        return self.filter(status=ArticleStatus.QUEUED)

    def review_queue(self, rules: ReviewRules) -> ArticleQuerySet:
        """The review queue's items, newest first (articles/editor/review.py explains the
        rules). Here, below the rooms, so that the worker's watchdog can sample its size.

        Newest first is the order an index serves at any size (a backward scan of the
        primary key stops after a page of hits); a total order by similarity would read
        every automatic match."""
        borderline = (
            models.Q(distance__gte=rules.distance)
            | models.Q(matched_by=MatchedBy.TITLE)
            | models.Q(similarity__lt=rules.similarity)
            | models.Q(doc__size__gte=rules.cluster_size)
            | models.Q(doc__status=DocStatus.NEEDS_REVIEW)
        )
        return (
            self.filter(
                status=ArticleStatus.DONE,
                pinned=False,
                matched_by__in=[MatchedBy.TITLE, MatchedBy.CONTENT],
                doc__isnull=False,
            )
            .exclude(doc__status=DocStatus.CONFIRMED)
            .exclude(doc__representative=models.F("pk"))
            .filter(borderline)
            .order_by("-id")
        )


class Article(models.Model):
    nid = models.CharField(max_length=64, unique=True)
    url = models.CharField(max_length=2048)
    url_hash = UnsignedBigIntegerField(
        null=True, blank=True, help_text=_("64-bit hash of the canonical URL")
    )
    title = models.TextField(blank=True, default="")
    content = models.TextField()
    # db_default: the batch importer and old rows; kept when body retention clears the body.
    content_length = models.PositiveIntegerField(
        default=0, db_default=0,
        help_text=_("Characters of the body as received: a member much shorter than its "
                    "cluster's longest is not elected representative by hotness."))
    category = models.CharField(max_length=100, blank=True, default="")
    media = models.CharField(max_length=200, blank=True, default="")
    image_count = models.PositiveIntegerField(default=0)
    hotness = models.FloatField(default=0.0)
    published_at = models.DateTimeField(null=True, blank=True)
    received_at = models.DateTimeField(default=timezone.now)
    payload_hash = models.CharField(max_length=32, blank=True, default="")
    api_key = models.ForeignKey(
        ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text=_("The key that first posted it (none: loaded by a command)."),
    )

    status = models.CharField(
        max_length=8, choices=ArticleStatus.choices, default=ArticleStatus.QUEUED
    )
    failure_reason = models.TextField(blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
    processed_at = models.DateTimeField(null=True, blank=True)

    doc = models.ForeignKey(
        Doc, null=True, blank=True, on_delete=models.SET_NULL, related_name="members"
    )
    matched_by = models.CharField(
        max_length=8, choices=MatchedBy.choices, null=True, blank=True
    )
    matched_article = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    distance = models.SmallIntegerField(null=True, blank=True)
    similarity = models.FloatField(null=True, blank=True)
    # the engine's match probability for the doc it joined and how the model's weights
    # add up to it (fingerprints/rule/match_model.py: Score.as_dict; {"rule": "url"} for
    # a canonical-URL match); null for an article that founded its docId
    match_probability = models.FloatField(null=True, blank=True)
    match_explanation = models.JSONField(null=True, blank=True, editable=False)
    pinned = models.BooleanField(
        default=False, help_text=_("Placed by an editor; re-processing keeps it where it is.")
    )
    settings_version = models.PositiveIntegerField(
        null=True, blank=True, help_text=_("Engine settings version it was processed with.")
    )

    title_fp = UnsignedBigIntegerField(null=True, blank=True)
    content_fp = UnsignedBigIntegerField(null=True, blank=True)
    features = models.BinaryField(null=True, blank=True, editable=False)
    body_cleared_at = models.DateTimeField(
        null=True, blank=True, editable=False,
        help_text=_("When body retention cleared the body (its features are kept)."),
    )

    objects = ArticleQuerySet.as_manager()

    class Meta:
        verbose_name = _("article")
        verbose_name_plural = _("articles")
        indexes = [
            # Representative election and cluster pages: members of a doc by hotness.
            models.Index(fields=["doc", "-hotness"], name="articles_article_doc_hot"),
            # Rebuild and recovery: queued articles in arrival order.
            models.Index(fields=["status", "id"], name="articles_article_status_id"),
            # URL rule when the Redis url map is rebuilt or checked.
            models.Index(fields=["url_hash"], name="articles_article_url_hash"),
            # Stats: ingest rate over time.
            models.Index(fields=["received_at"], name="articles_article_received"),
            # /clusters/?media=...: the docs with a member from that media.
            models.Index(fields=["media", "doc"], name="articles_article_media_doc"),
            # /review/: the newest unpinned matches.
            models.Index(fields=["pinned", "id"], name="articles_article_unpinned_id"),
        ]

    def __str__(self) -> str:
        return self.nid

    @property
    def doc_pk(self) -> int | None:
        """The primary key of this article's Doc row (no query). In this code base
        ``doc_id`` always names a docId string (``Doc.doc_id``); Django's foreign-key
        attribute ``Article.doc_id`` is read through this name instead."""
        return self.doc_id


class PendingFeatures(models.Model):
    """Fingerprints recomputed by a reindex, applied to articles at the switch."""

    article_id = models.BigIntegerField(primary_key=True)
    title_fp = models.BigIntegerField(null=True)
    content_fp = models.BigIntegerField(null=True)
    features = models.BinaryField()

    class Meta:
        db_table = "articles_pendingfeatures"
