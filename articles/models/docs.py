from __future__ import annotations

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from articles.models.states import ArticleStatus, DocStatus
from fingerprints.rule.ids import unused_doc_id


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

    def lose_member(self, article_pk: int) -> None:
        """One member leaves (not saved): the size drops, and when it was the anchor the
        earliest remaining done member (by arrival) becomes the anchor, or none is left.
        The one place the anchor is re-elected (the write path's detach, the editors'
        split and move)."""
        self.size = max(self.size - 1, 0)
        if self.anchor_id == article_pk:
            self.anchor = (self.members.filter(status=ArticleStatus.DONE)
                           .exclude(pk=article_pk).order_by("received_at", "id").first())
