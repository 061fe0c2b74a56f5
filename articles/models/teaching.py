"""Labels on single candidate pairs, given on the review desk's teaching queue
(articles/editor/teaching.py): the pairs the engine is least sure of, and a random
audit stream whose inclusion probabilities are kept so that precision and recall read
from it are unbiased."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class PairAnswer(models.TextChoices):
    SAME = "same", _("same story")
    DIFFERENT = "different", _("different")
    UNSURE = "unsure", _("not sure")


class PairLabel(models.Model):
    """An editor's answer on exactly one pair of articles (by nid, ordered), with what the
    engine said about it when it was asked: the model version that scored it and its
    probability. ``audit``: drawn at random from the candidate pool (not by
    uncertainty) with ``inclusion_probability``. ``decision``: the join or split the
    answer applied to the clusters (undone with the answer)."""

    nid_a = models.CharField(max_length=64)
    nid_b = models.CharField(max_length=64)
    # the docId of the earlier article when it was asked: the queue keeps few pairs of
    # one family in a row
    family = models.CharField(max_length=33, blank=True, default="")
    answer = models.CharField(max_length=10, choices=PairAnswer.choices)
    editor = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+")
    model_version = models.CharField(max_length=40, blank=True, default="")
    probability = models.FloatField(null=True, blank=True)
    threshold = models.FloatField(null=True, blank=True)
    audit = models.BooleanField(default=False)
    inclusion_probability = models.FloatField(null=True, blank=True)
    decision = models.ForeignKey("Decision", null=True, blank=True,
                                 on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("pair label")
        verbose_name_plural = _("pair labels")
        indexes = [
            # The teaching queue leaves out pairs already answered.
            models.Index(fields=["nid_a", "nid_b"], name="articles_pairlabel_pair"),
            # Running counts and the stopping point: an editor's latest answers.
            models.Index(fields=["editor", "-id"], name="articles_pairlabel_editor"),
        ]

    def __str__(self) -> str:
        return f"{self.nid_a} ~ {self.nid_b}: {self.answer}"

    @property
    def model_said_same(self) -> bool | None:
        if self.probability is None or self.threshold is None:
            return None
        return self.probability >= self.threshold
