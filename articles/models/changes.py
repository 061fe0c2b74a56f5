from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class ChangeKind(models.TextChoices):
    MEMBERSHIP = "membership", _("membership")  # an article's docId changed
    REPRESENTATIVE = "representative", _("representative")  # a docId's representative
    STATUS = "status", _("status")  # a docId's review status


class ChangeCursor(models.Model):
    """One row: the last cursor handed out. A transaction that logs changes takes the
    next cursors from it as its last statement and holds the row's lock until it
    commits, so cursors are given in commit order (articles/changes/log.py)."""

    last = models.PositiveBigIntegerField(default=0)


class Change(models.Model):
    """A change of an article's docId, or of a docId's representative or status, written
    in the same transaction as the change (the outbox pattern). ``cursor`` orders the
    log in commit order: a reader resuming after any cursor it was given misses nothing
    committed later (``GET /api/v1/changes``, webhooks)."""

    cursor = models.PositiveBigIntegerField(unique=True)
    kind = models.CharField(max_length=16, choices=ChangeKind.choices)
    nid = models.CharField(max_length=64, blank=True, default="")
    doc_id = models.CharField(max_length=33)
    previous_doc_id = models.CharField(max_length=33, blank=True, default="")
    representative_nid = models.CharField(max_length=64, blank=True, default="")
    status = models.CharField(max_length=16, blank=True, default="")
    # ingest, redecide, rebuild, editor:split|move|merge|confirm|undo|representative...
    reason = models.CharField(max_length=32)
    # who caused it: "editor:<username>", "key:<key name>" or "" (a worker, a command)
    actor = models.CharField(max_length=160, blank=True, default="")
    # the key that posted the article (a key reads its own articles' changes): none for
    # a doc's representative or status, or an article loaded by a command
    api_key = models.ForeignKey("articles.ApiKey", null=True, blank=True,
                                on_delete=models.SET_NULL, related_name="+")
    at = models.DateTimeField()

    class Meta:
        verbose_name = _("change")
        verbose_name_plural = _("changes")
        indexes = [
            # retention: the rows older than the admin's days
            models.Index(fields=["at"], name="articles_change_at"),
        ]


class WebhookStatus(models.TextChoices):
    ACTIVE = "active", _("active")
    DEAD = "dead", _("dead (deliveries stopped; redeliver in the admin)")


class Webhook(models.Model):
    """A downstream receiver of the change log: batches of changes POSTed in cursor order,
    signed with its secret (articles/downstream/webhooks.py)."""

    url = models.URLField(_("URL"), max_length=500)
    # the HMAC key, shown once when the webhook is made (it must be kept: it signs)
    secret = models.CharField(max_length=64, editable=False)
    # the changes it receives: those this key may read (GET /api/v1/changes's rule);
    # none: every change
    api_key = models.ForeignKey("articles.ApiKey", null=True, blank=True,
                                on_delete=models.CASCADE, related_name="+",
                                verbose_name=_("API key"))
    delivered = models.PositiveBigIntegerField(
        _("delivered up to cursor"), default=0,
        help_text=_("The last cursor the receiver acknowledged (a 2xx answer)."))
    status = models.CharField(max_length=8, choices=WebhookStatus.choices,
                              default=WebhookStatus.ACTIVE)
    attempts = models.PositiveIntegerField(default=0, editable=False)
    next_attempt_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_error = models.TextField(blank=True, default="", editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("webhook")
        verbose_name_plural = _("webhooks")

    def __str__(self) -> str:
        return self.url
