from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from cachetools import TLRUCache
from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from articles.fields import UnsignedBigIntegerField
from fingerprints.rule.ids import unused_doc_id

#: Active keys by prefix, each kept API_KEY_CACHE_SECONDS (read when it is stored).
_key_cache: TLRUCache[str, ApiKey] = TLRUCache(
    maxsize=10_000, ttu=lambda _prefix, _key, now: now + settings.API_KEY_CACHE_SECONDS)


class ApiKeyQuerySet(models.QuerySet["ApiKey"]):
    def active(self) -> ApiKeyQuerySet:
        return self.filter(revoked_at__isnull=True)


class ApiKey(models.Model):
    """A crawler's key. Only a SHA-256 of the secret is stored; the key is shown once."""

    PREFIX_LENGTH = 8

    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    key_hash = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)
    rate_limit_per_minute = models.PositiveIntegerField(
        default=6000, help_text=_("Requests per minute for this key; 0 means unlimited.")
    )
    may_change_others = models.BooleanField(
        default=False, help_text=_(
            "May re-post, or change the hotness of, articles first posted with another key "
            "(otherwise such a request is refused with 409).")
    )

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        verbose_name = _("API key")
        verbose_name_plural = _("API keys")

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def save(self, *args: Any, **kwargs: Any) -> None:
        super().save(*args, **kwargs)
        ApiKey.forget_cached()

    @staticmethod
    def hash_secret(secret: str) -> str:
        return hashlib.sha256(secret.encode("utf-8")).hexdigest()

    @classmethod
    def issue(cls, name: str, **fields: Any) -> tuple[ApiKey, str]:
        """Create a key; return it with the plaintext, which is never stored."""
        prefix = secrets.token_hex(cls.PREFIX_LENGTH // 2)
        plaintext = f"dd_{prefix}_{secrets.token_urlsafe(32)}"
        key = cls.objects.create(
            name=name, prefix=prefix, key_hash=cls.hash_secret(plaintext), **fields
        )
        return key, plaintext

    @classmethod
    def authenticate(cls, plaintext: str) -> ApiKey | None:
        parts = plaintext.split("_", 2)
        if len(parts) != 3 or parts[0] != "dd":
            return None
        key = cls._lookup(parts[1])
        if key is None or not secrets.compare_digest(key.key_hash, cls.hash_secret(plaintext)):
            return None
        return key

    @classmethod
    def _lookup(cls, prefix: str) -> ApiKey | None:
        """The active key with this prefix, remembered for API_KEY_CACHE_SECONDS per
        process (a revoked key stops working within that time; 0 reads every time).
        Unknown prefixes are not remembered."""
        cached = _key_cache.get(prefix)
        if cached is not None:
            return cached
        key = cls.objects.active().filter(prefix=prefix).first()
        if key is not None and settings.API_KEY_CACHE_SECONDS > 0:
            _key_cache[prefix] = key
        else:
            _key_cache.pop(prefix, None)
        return key

    @staticmethod
    def forget_cached() -> None:
        _key_cache.clear()

    def touch(self) -> None:
        # At most one write a minute per key: the API is hot, this column is not.
        now = timezone.now()
        if self.last_used_at is None or (now - self.last_used_at).total_seconds() > 60:
            ApiKey.objects.filter(pk=self.pk).update(last_used_at=now)
            self.last_used_at = now


class DocStatus(models.TextChoices):
    AUTO = "auto", _("auto")
    NEEDS_REVIEW = "needs_review", _("needs review")
    CONFIRMED = "confirmed", _("confirmed")


class DocQuerySet(models.QuerySet["Doc"]):
    def clusters(self) -> DocQuerySet:
        return self.filter(size__gt=1)

    def needs_review(self) -> DocQuerySet:
        return self.filter(status=DocStatus.NEEDS_REVIEW)

    def fresh_doc_id(self, nid: str) -> str:
        """The docId article ``nid`` founds: ``make_doc_id(nid)``, salted ``#1``, ``#2``...
        while a doc already holds it (a re-founded or split-off article)."""
        return unused_doc_id(nid, lambda doc_id: self.filter(doc_id=doc_id).exists())


class Doc(models.Model):
    """One story: every near-duplicate article shares its docId."""

    doc_id = models.CharField(max_length=33, unique=True)
    status = models.CharField(max_length=16, choices=DocStatus.choices, default=DocStatus.AUTO)
    anchor = models.ForeignKey(
        "Article", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text=_("The first member; new articles must match it or a member directly."),
    )
    representative = models.ForeignKey(
        "Article", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    representative_pinned = models.BooleanField(default=False)
    rep_version = models.PositiveBigIntegerField(
        default=0, help_text=_("Bumped on every change the representative store must see.")
    )
    # db_default: the ingest path and the batch importer insert docs with raw SQL.
    version = models.PositiveIntegerField(
        default=0, db_default=0,
        help_text=_("Bumped by every editor decision on this docId: a page carries the version "
                    "it showed, and an action on an older one is refused."),
    )
    size = models.PositiveIntegerField(default=0)
    first_seen = models.DateTimeField(default=timezone.now)
    last_seen = models.DateTimeField(default=timezone.now)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DocQuerySet.as_manager()

    class Meta:
        verbose_name = _("docId")
        verbose_name_plural = _("docIds")
        indexes = [
            # /clusters/ default listing: newest clusters first, filtered by size.
            models.Index(fields=["size", "-last_seen"], name="articles_doc_size_seen"),
            # /clusters/?status=...: review and confirmed filters.
            models.Index(fields=["status", "-last_seen"], name="articles_doc_status_seen"),
        ]

    def __str__(self) -> str:
        return self.doc_id


class ArticleStatus(models.TextChoices):
    QUEUED = "queued", _("queued")
    DONE = "done", _("done")
    FAILED = "failed", _("failed")


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


class IndexState(models.Model):
    """Singleton row: the generation of the Redis indexes built from this database.

    Redis holds the same generation; a mismatch (Redis restarted empty, or
    pointed at another database) means the index must be rebuilt before any
    docId is handed out.
    """

    generation = models.CharField(max_length=32, blank=True, default="")
    built_at = models.DateTimeField(null=True, blank=True)
    article_count = models.PositiveBigIntegerField(default=0)
    # The engine configuration the active index was built with (articles/tuning/state.py).
    config = models.JSONField(default=dict, blank=True)
    config_version = models.PositiveIntegerField(default=0)
    # A reindex in progress: what it builds and how far it got.
    reindex_status = models.CharField(max_length=16, blank=True, default="")
    reindex_total = models.PositiveBigIntegerField(default=0)
    reindex_done = models.PositiveBigIntegerField(default=0)
    reindex_error = models.TextField(blank=True, default="")
    # Body retention (articles/representatives/retention.py): articles received before
    # this have been examined; the next pass starts here.
    bodies_examined_through = models.DateTimeField(null=True, blank=True)
    bodies_examined_id = models.PositiveBigIntegerField(default=0)

    @classmethod
    def load(cls) -> IndexState:
        state, _created = cls.objects.get_or_create(pk=1)
        return state


class MediaWeight(models.Model):
    """Admin-set weight of a media outlet in representative election (default 1)."""

    media = models.CharField(_("media"), max_length=200, unique=True)
    weight = models.FloatField(_("weight"), default=1.0)

    class Meta:
        verbose_name = _("media weight")
        verbose_name_plural = _("media weights")

    def __str__(self) -> str:
        return f"{self.media} × {self.weight:g}"


class Decision(models.Model):
    """One editor decision, with what it changed as it was before, so that it can be
    undone (articles/editor/actions.py: undo). Its audit entries name it
    (``data["decision"]``)."""

    action = models.CharField(max_length=40)
    doc_id = models.CharField(max_length=33, help_text=_("The docId the editor acted on."))
    actor = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # {"articles": [...], "docs": [...], "links": [...]}: the rows as they were before.
    before = models.JSONField(default=dict)
    # {doc pk: Doc.version right after the decision}: undo requires them unchanged.
    versions = models.JSONField(default=dict)
    undone_at = models.DateTimeField(null=True, blank=True)
    undone_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    bulk = models.ForeignKey(
        "BulkAction", null=True, blank=True, on_delete=models.SET_NULL,
        related_name="decisions", help_text=_("The bulk action it was one cluster of."),
    )

    class Meta:
        indexes = [
            # The message after an action: this editor's latest decision on the docId.
            models.Index(fields=["doc_id", "actor"], name="articles_decision_doc_actor"),
            # /stats/: what I decided today, newest first.
            models.Index(fields=["actor", "-created_at"], name="articles_decision_actor_time"),
            # /stats/: the desk's decisions per hour.
            models.Index(fields=["created_at"], name="articles_decision_created"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.doc_id}"


class BulkStatus(models.TextChoices):
    QUEUED = "queued", _("queued")
    RUNNING = "running", _("running")
    DONE = "done", _("done")
    FAILED = "failed", _("failed")


class BulkAction(models.Model):
    """One editor's decision over many clusters (articles/editor/bulk.py): confirm them,
    mark them for review, or undo such an action. One RQ job runs it; each cluster it
    changes gets its own Decision (``decisions``) and audit entries, so each is undone,
    audited and version-checked like a single decision."""

    CONFIRM = "confirm"
    FLAG = "flag_for_review"
    UNDO = "undo"

    action = models.CharField(max_length=40)
    actor = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.TextField(blank=True, default="")
    # [[doc pk, the version the editor's page showed], ...] in the order shown.
    targets = models.JSONField(default=list)
    # How the clusters were chosen: {"scope": "selected"} or {"scope": "filter", "query": ...}
    selection = models.JSONField(default=dict)
    undoes = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="undos",
        help_text=_("For an undo: the bulk action it undoes."),
    )
    status = models.CharField(max_length=8, choices=BulkStatus.choices,
                              default=BulkStatus.QUEUED)
    processed = models.PositiveIntegerField(default=0)
    changed = models.PositiveIntegerField(default=0)
    # [{"doc_id", "reason", "who", "what"}, ...]: the clusters left as they were, and why.
    skipped = models.JSONField(default=list)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When it was last queued or made progress. A queued or running action silent for
    # BULK_STALE_SECONDS lost its job (a worker died): the watchdog queues it again and
    # the job resumes after the last cluster recorded (articles/editor/bulk.py).
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"bulk {self.action} of {len(self.targets)}"

    @property
    def total(self) -> int:
        return len(self.targets)

    @property
    def finished(self) -> bool:
        return self.status in (BulkStatus.DONE, BulkStatus.FAILED)

    @property
    def percent(self) -> int:
        return 100 if not self.targets else min(100, self.processed * 100 // self.total)


class QueueSample(models.Model):
    """The review queue's size, sampled by the workers' watchdog every
    QUEUE_SAMPLE_SECONDS: /stats/ draws the queue over time from these rows."""

    taken_at = models.DateTimeField(default=timezone.now)
    size = models.PositiveIntegerField()

    class Meta:
        indexes = [
            # /stats/: the samples of the last two days; the watchdog: the latest one.
            models.Index(fields=["taken_at"], name="articles_queuesample_taken"),
        ]

    def __str__(self) -> str:
        return f"{self.taken_at:%Y-%m-%d %H:%M} {self.size}"


class ReviewClaim(models.Model):
    """An editor's hold on one review-queue item, so that two editors working the queue
    take different items. It expires (settings.REVIEW_CLAIM_SECONDS) and is advisory: it
    routes work; the doc's version guards the decisions themselves."""

    article = models.ForeignKey("Article", on_delete=models.CASCADE, related_name="+")
    # The cluster a decision on the item acts on: one holder per cluster, so two editors
    # taking at once never get two members of one cluster (null: a claim made before
    # claims covered clusters; it expires like any other).
    doc = models.ForeignKey("Doc", null=True, blank=True, on_delete=models.CASCADE,
                            related_name="+")
    editor = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="+")
    claimed_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            # One holder per item and per cluster: the INSERT of a second editor taking
            # one at the same moment fails, and that editor takes the next item.
            models.UniqueConstraint(fields=["article"], name="articles_reviewclaim_article"),
            models.UniqueConstraint(fields=["doc"], name="articles_reviewclaim_doc"),
        ]

    def __str__(self) -> str:
        return f"{self.article_id} until {self.expires_at:%H:%M}"

    @property
    def doc_pk(self) -> int | None:
        """The claimed cluster's Doc primary key (``doc_id`` names docId strings)."""
        return self.__dict__.get("doc_id")


class PassKind(models.TextChoices):
    SKIP = "skip", _("skipped")
    SECOND = "second", _("asked for a second editor")


class ReviewPass(models.Model):
    """An editor passed a review item's cluster on. ``skip``: it goes to the end of this
    editor's queue (others take it as usual). ``second``: the editor is unsure; the item
    goes first to the other editors taking the next item, never back to this one, until
    someone decides on the cluster (``resolved_at``)."""

    doc = models.ForeignKey("Doc", on_delete=models.CASCADE, related_name="+")
    editor = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=8, choices=PassKind.choices)
    note = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["doc", "resolved_at"], name="articles_pass_doc")]

    @property
    def doc_pk(self) -> int:
        """The cluster's Doc primary key (``doc_id`` names docId strings)."""
        return int(self.__dict__["doc_id"])


class AuditEntry(models.Model):
    """Who changed what, when: editor actions, API body changes, admin jobs."""

    created_at = models.DateTimeField(auto_now_add=True)
    actor = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_label = models.CharField(max_length=150, blank=True, default="")
    api_key = models.ForeignKey(
        ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text=_("The crawler's key, when a crawler did it."),
    )
    action = models.CharField(max_length=40)
    doc_id = models.CharField(max_length=33, blank=True, default="")
    nid = models.CharField(max_length=64, blank=True, default="")
    note = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # Cluster page: the audit history of one docId, newest first.
            models.Index(fields=["doc_id", "-created_at"], name="articles_audit_doc_time"),
            # Article history (changed bodies) by nid.
            models.Index(fields=["nid", "-created_at"], name="articles_audit_nid_time"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor_label} {self.action}"


class OutboxStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    SENT = "sent", _("sent")


class RepresentativeOutbox(models.Model):
    """A change of a docId's representative, to be pushed to the representative store.

    Written in the same transaction as the change; a push job delivers it and
    retries with back-off while the store is down. The push always sends the
    docId's *current* state with its version, so delivering rows late or twice
    cannot make the store go backwards.
    """

    SHARDS = 16

    doc_id = models.CharField(max_length=33)
    version = models.PositiveBigIntegerField()
    # Push jobs split the outbox by shard; one docId is always in one shard, so
    # its rows are delivered in order by one job at a time.
    shard = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(
        max_length=8, choices=OutboxStatus.choices, default=OutboxStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    @classmethod
    def shard_of(cls, doc_id: str) -> int:
        return int(doc_id[-2:], 16) % cls.SHARDS if doc_id else 0

    class Meta:
        indexes = [
            # Health: the oldest pending row (lag).
            models.Index(fields=["status", "id"], name="articles_outbox_status_id"),
            # A push job: the pending rows of its shards, in order.
            models.Index(fields=["status", "shard", "id"], name="articles_outbox_shard"),
        ]


class LinkKind(models.TextChoices):
    MUST = "must", _("must link")
    CANNOT = "cannot", _("cannot link")


class EditorLinkQuerySet(models.QuerySet["EditorLink"]):
    def cannot_link_docs(self, nid: str) -> frozenset[str]:
        """docIds an article must not join: those holding a member it is cannot-linked to."""
        return self.cannot_link_docs_of([nid])

    def cannot_link_docs_of(self, nids: Iterable[str]) -> frozenset[str]:
        """docIds holding a member cannot-linked to one of ``nids`` (a list, or a query of
        nids: it becomes a subquery)."""
        cannot = self.filter(kind=LinkKind.CANNOT)
        others = list(cannot.filter(nid_a__in=nids).values_list("nid_b", flat=True).union(
            cannot.filter(nid_b__in=nids).values_list("nid_a", flat=True)))
        if not others:
            return frozenset()
        return frozenset(
            Article.objects.filter(nid__in=others, doc__isnull=False)
            .values_list("doc__doc_id", flat=True)
        )


class EditorLink(models.Model):
    """An editor's pairwise decision between two articles (by nid).

    Split writes cannot-link pairs, merge and move write must-link pairs. Online
    processing, reindexing, threshold changes and batch imports honour them
    (see articles/editor/actions.py and docs/dashboard.md).
    """

    kind = models.CharField(max_length=8, choices=LinkKind.choices)
    nid_a = models.CharField(max_length=64)
    nid_b = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = EditorLinkQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["nid_a", "nid_b"], name="articles_editorlink_pair"),
        ]
        indexes = [
            # Cannot-link lookups for one article during assignment.
            models.Index(fields=["nid_b", "kind"], name="articles_editorlink_b_kind"),
        ]

    @staticmethod
    def ordered(nid_1: str, nid_2: str) -> tuple[str, str]:
        return (nid_1, nid_2) if nid_1 <= nid_2 else (nid_2, nid_1)


class MatchModelVersion(models.Model):
    """A match model fitted to the editors' decisions (``train_matcher``,
    articles/tuning/matcher.py). ``EngineSettings.match_model`` names the active one
    (none: the model shipped with the project); the others are proposals or retired."""

    version = models.CharField(_("version"), max_length=40, unique=True)
    base = models.CharField(_("fitted from"), max_length=40,
                            help_text=_("The model it started from (the active one then)."))
    weights = models.JSONField(editable=False)  # fingerprints MatchModel.as_dict()
    trained_pairs = models.PositiveIntegerField(_("pairs trained on"), default=0)
    held_out_pairs = models.PositiveIntegerField(_("pairs held out"), default=0)
    # precision and recall of the base and of this model on the held-out pairs, by
    # threshold: {"thresholds": [...], "current": [...], "proposed": [...]}
    report = models.JSONField(default=dict, editable=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+",
                                   verbose_name=_("created by"))

    class Meta:
        verbose_name = _("match model version")
        verbose_name_plural = _("match model versions")
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.version

    def model(self) -> Any:
        from fingerprints.rule.match_model import MatchModel

        return MatchModel.from_dict(self.weights)


class EngineSettings(models.Model):
    """Singleton: the engine's tunable settings, edited by admins (see articles/tuning/state.py)."""

    k = models.PositiveSmallIntegerField(
        _("content distance k"), default=3,
        help_text=_("Hamming distance (0–8) within which content fingerprints are candidates."),
    )
    title_k = models.PositiveSmallIntegerField(
        _("title distance"), default=3,
        help_text=_("Hamming distance (0–8) within which title fingerprints are candidates."),
    )
    candidate_radius = models.PositiveSmallIntegerField(
        _("candidate radius"), default=8,
        validators=[MinValueValidator(0), MaxValueValidator(64)],
        help_text=_("Fingerprints farther than the content or title distance that share a "
                    "block of the index with the article are verified too when within this "
                    "many bits (0–64): a larger radius verifies more pairs and finds more "
                    "partial copies; at or below the distance, only those within it."),
    )
    probe_bits = models.PositiveSmallIntegerField(
        _("probe bits"), default=3, validators=[MinValueValidator(0), MaxValueValidator(4)],
        help_text=_("Content lookups also try the article's fingerprint with this many of "
                    "its least certain bits in each block flipped, in every combination "
                    "(0–4; 3 adds 28 lookups; 0 turns probing off): copies whose "
                    "fingerprints differ in those bits are found."),
    )
    anchorless_threshold = models.FloatField(
        _("match threshold without the founding article"), default=0.99,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text=_("A candidate whose docId's founding article could not be read (the "
                    "docId is joined through it) joins only when its own match probability "
                    "is at least this too, for every language (from 0 to 1). Raising it "
                    "never adds a match, lowering it never removes one."),
    )
    hmm = models.BooleanField(_("jieba HMM"), default=False)
    title_min_tokens = models.PositiveSmallIntegerField(
        _("title: words at least"), default=2,
        validators=[MinValueValidator(0), MaxValueValidator(20)],
        help_text=_("A title with fewer words that weigh in its fingerprint than this "
                    "(stopwords and punctuation weigh nothing) gets no title fingerprint, so "
                    "the title rule never joins it (0–20)."),
    )
    extra_stopwords = models.TextField(
        _("extra stopwords"), blank=True, default="", help_text=_("One word per line.")
    )
    user_words = models.TextField(
        _("user dictionary"), blank=True, default="",
        help_text=_("One word per line: word [frequency] [part of speech]."),
    )
    review_distance = models.PositiveSmallIntegerField(
        _("review: distance at least"), default=2,
        help_text=_("Content matches at this distance or more go to the review queue."),
    )
    review_similarity = models.FloatField(
        _("review: similarity below"), default=0.8,
        help_text=_("Matches verified below this similarity go to the review queue."),
    )
    review_cluster_size = models.PositiveIntegerField(
        _("review: cluster size at least"), default=20,
        help_text=_("A docId with this many members or more goes to the review queue."),
    )
    boilerplate_min_docs = models.PositiveIntegerField(
        _("boilerplate: stories at least"), default=5,
        validators=[MinValueValidator(0), MaxValueValidator(65535)],
        help_text=_("A clause seen in this many different stories is boilerplate and no "
                    "longer counts in fingerprints; a picture seen in this many stories is a "
                    "stock picture (a logo, a banner) and is no evidence for or against a "
                    "match (0 turns both off; 1 is not allowed)."),
    )
    picture_bits = models.PositiveSmallIntegerField(
        _("picture distance (bits)"), default=10,
        validators=[MinValueValidator(0), MaxValueValidator(32)],
        help_text=_("Two pictures are the same picture when their 64-bit perceptual hashes "
                    "differ in at most this many bits (0: identical hashes only). A change "
                    "below the picture index's block size rebuilds the index."),
    )
    match_threshold = models.FloatField(
        _("match threshold"), default=0.5,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text=_("A candidate pair joins one docId when its match probability (the "
                    "match model's weights of its comparisons: body overlap, title, numbers "
                    "and names in context, pictures) is at least this, for every language. "
                    "Raising it never adds a match, lowering it never removes one; 0.5 "
                    "decides as the shipped model was tuned (from 0 to 1)."),
    )
    match_model = models.ForeignKey(
        MatchModelVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        verbose_name=_("match model"),
        help_text=_("The weights the match threshold is applied to and the bounds where "
                    "their levels begin (a share of shingles, a title similarity): a "
                    "version fitted to the editors' decisions (match model versions; "
                    "compare it there first), or empty for the model shipped with the "
                    "project. Saving applies it to the next article, without a reindex."),
    )
    index_window_days = models.PositiveIntegerField(
        _("index window (days)"), default=0,
        help_text=_("0 keeps every article in the index; otherwise articles received longer "
                    "ago leave the content, title, picture and key indexes (their docIds "
                    "stay; their URLs are still recognised)."),
    )
    retention_days = models.PositiveIntegerField(
        _("keep non-representative bodies (days)"), default=0,
        help_text=_("0 keeps every body; otherwise the bodies of articles older than this "
                    "that are neither their docId's representative nor its founding article "
                    "are cleared (their fingerprints are kept)."),
    )
    version = models.PositiveIntegerField(_("version"), default=1, editable=False)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        verbose_name = _("engine settings")
        verbose_name_plural = _("engine settings")

    def __str__(self) -> str:
        return str(_("engine settings v%(version)s") % {"version": self.version})

    @classmethod
    def load(cls) -> EngineSettings:
        settings, _created = cls.objects.get_or_create(pk=1)
        return settings

    @classmethod
    def review_rules(cls) -> ReviewRules:
        """The admin's review rules (the field defaults until the settings row exists)."""
        fields = ("review_distance", "review_similarity", "review_cluster_size")
        row = cls.objects.filter(pk=1).values_list(*fields).first()
        values = row if row is not None else tuple(
            cls._meta.get_field(f).get_default() for f in fields)  # type: ignore[union-attr]
        return ReviewRules(int(values[0]), float(values[1]), int(values[2]))

    def parsed_user_words(self) -> tuple[tuple[str, int | None, str | None], ...]:
        words = []
        for line in self.user_words.splitlines():
            parts = line.split()
            if not parts:
                continue
            freq = int(parts[1]) if len(parts) > 1 else None
            pos = parts[2] if len(parts) > 2 else None
            words.append((parts[0], freq, pos))
        return tuple(words)

    def engine_config(self) -> Any:
        from fingerprints.rule import EngineConfig
        from fingerprints.rule.match_model import starting_model

        return EngineConfig(
            k=self.k, title_k=self.title_k, candidate_radius=self.candidate_radius,
            probe_bits=self.probe_bits, anchorless_threshold=self.anchorless_threshold,
            hmm=self.hmm, title_min_tokens=self.title_min_tokens,
            extra_stopwords=frozenset(w.strip() for w in self.extra_stopwords.splitlines()
                                      if w.strip()),
            user_words=self.parsed_user_words(),
            boilerplate_min_docs=self.boilerplate_min_docs,
            picture_bits=self.picture_bits,
            match_threshold=self.match_threshold,
            model=self.match_model.model() if self.match_model is not None else starting_model(),
        )


class BoilerplateSource(models.TextChoices):
    LEARNED = "learned", _("learned")
    ADMIN = "admin", _("added by an admin")
    SHIPPED = "shipped", _("shipped with the project (hash only)")


class BoilerplateClause(models.Model):
    """A clause that is site chrome, not article text (fingerprints/rule/boilerplate.py).

    Learned ones are written by the worker that saw the clause reach the
    ``boilerplate_min_docs``-th story; admins add or switch off others. An inactive
    clause is never removed from bodies and is not learned again."""

    clause_hash = models.BigIntegerField(unique=True, help_text=_("signed 64-bit"))
    text = models.CharField(_("clause"), max_length=300)
    stories = models.PositiveIntegerField(
        _("stories"), default=0, help_text=_("Stories it was seen in when it was learned."))
    source = models.CharField(max_length=8, choices=BoilerplateSource.choices,
                              default=BoilerplateSource.LEARNED)
    active = models.BooleanField(_("removed from bodies"), default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("boilerplate clause")
        verbose_name_plural = _("boilerplate clauses")
        ordering = ["-stories", "id"]

    def __str__(self) -> str:
        return self.text[:60]


class PendingFeatures(models.Model):
    """Fingerprints recomputed by a reindex, applied to articles at the switch."""

    article_id = models.BigIntegerField(primary_key=True)
    title_fp = models.BigIntegerField(null=True)
    content_fp = models.BigIntegerField(null=True)
    features = models.BinaryField()

    class Meta:
        db_table = "articles_pendingfeatures"


class DeskPreference(models.Model):
    """An editor's own desk: the review queue filter they work (a desk where one editor
    takes the finance sites). Applied to their /review/ list, to "take the next item"
    and to the queue's "N new" banner; everyone else's queue is unchanged."""

    user = models.OneToOneField("auth.User", on_delete=models.CASCADE, related_name="+")
    review_filter = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)


class ImageStatus(models.TextChoices):
    QUEUED = "queued", _("queued")
    READ = "read", _("read")
    FAILED = "failed", _("failed")


class ArticleImage(models.Model):
    """One picture an article carries (``images`` in the API), fetched by its own job
    (articles/images/) and fingerprinted with a 64-bit pHash. A picture that fails never
    fails its article: ``status`` failed and ``reason`` say why."""

    article = models.ForeignKey("Article", on_delete=models.CASCADE, related_name="images")
    position = models.PositiveSmallIntegerField()
    url = models.CharField(max_length=2048)
    status = models.CharField(max_length=8, choices=ImageStatus.choices,
                              default=ImageStatus.QUEUED)
    reason = models.CharField(max_length=64, blank=True, default="")
    final_url = models.CharField(max_length=2048, blank=True, default="")
    content_hash = models.CharField(max_length=32, blank=True, default="")
    phash = UnsignedBigIntegerField(null=True, blank=True)
    # the hash of the picture mirrored left to right: a mirrored copy's phash is near it
    mirror_phash = UnsignedBigIntegerField(null=True, blank=True)
    width = models.PositiveIntegerField(null=True, blank=True)
    height = models.PositiveIntegerField(null=True, blank=True)
    fetched_at = models.DateTimeField(null=True, blank=True)
    #: MD5 hex of ``url``: the same URL read before is found through this short indexed
    #: column, not the 2048-character ``url``
    url_digest = models.CharField(max_length=32, blank=True, default="")
    #: a JPEG of at most 160 px on its longer side made when the picture is read
    #: (articles/images/thumbs.py): the editors' pages show it, never the crawled URL
    thumbnail = models.BinaryField(blank=True, default=b"")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["article", "position"],
                                               name="articles_image_position")]
        indexes = [
            models.Index(fields=["phash"], name="articles_image_phash"),
            # The picture job: has this URL been read for another article already?
            models.Index(fields=["url_digest"], name="articles_image_url_digest"),
            # ... or these bytes under another URL?
            models.Index(fields=["content_hash"], name="articles_image_content"),
        ]

    @classmethod
    def read_at(cls, url: str) -> models.QuerySet[ArticleImage]:
        """The pictures read from ``url`` (for any article): the indexed digest finds
        them, the URL itself settles a collision."""
        return cls.objects.filter(url_digest=cls.digest(url), url=url,
                                  status=ImageStatus.READ)

    @staticmethod
    def digest(url: str) -> str:
        """The ``url_digest`` of ``url``."""
        return hashlib.md5(url.encode("utf-8"), usedforsecurity=False).hexdigest()
