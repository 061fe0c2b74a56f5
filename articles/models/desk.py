from __future__ import annotations

from collections.abc import Iterable

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from articles.models.articles import Article
from articles.models.keys import ApiKey


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


class DeskPreference(models.Model):
    """An editor's own desk: the review queue filter they work (a desk where one editor
    takes the finance sites). Applied to their /review/ list, to "take the next item"
    and to the queue's "N new" banner; everyone else's queue is unchanged."""

    user = models.OneToOneField("auth.User", on_delete=models.CASCADE, related_name="+")
    review_filter = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
