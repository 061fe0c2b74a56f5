"""The states an article and a doc go through (both rooms read them)."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class ArticleStatus(models.TextChoices):
    QUEUED = "queued", _("queued")
    DONE = "done", _("done")
    FAILED = "failed", _("failed")


class DocStatus(models.TextChoices):
    AUTO = "auto", _("auto")
    NEEDS_REVIEW = "needs_review", _("needs review")
    CONFIRMED = "confirmed", _("confirmed")
