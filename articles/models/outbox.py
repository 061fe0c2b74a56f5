from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


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
