from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from articles.models.articles import ReviewRules
from fingerprints.rule.config import EngineConfig

_ENGINE_DEFAULTS = EngineConfig()


def _engine_default(name: str) -> Any:
    """The engine's own default of an admin field (fingerprints/rule/config.py): each
    value is written once, and docs/parameters.md shows it."""
    return getattr(_ENGINE_DEFAULTS, name)


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


class MatchModelVersion(models.Model):
    """A match model fitted to the editors' decisions (``train_matcher``,
    articles/tuning/matcher.py). ``EngineSettings.match_model`` names the active one
    (none: the shipped model on the comparison vector, ``vector-5``); the others are
    proposals, retired, or the rule's shipped model ``labels-1`` added to be activated
    (:func:`articles.tuning.matcher.shipped_rule_version`)."""

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
    # the labels a vector fit read: {"decisions": [pk...], "answers": [pk...],
    # "heldOutDecisions": [...], "heldOutAnswers": [...]} (articles/tuning/matcher.py)
    labels = models.JSONField(default=dict, blank=True, editable=False)
    flagged = models.BooleanField(
        _("flagged"), default=False,
        help_text=_("More than 60 per cent of the labels it was fitted on are one editor's: "
                    "never activated automatically."))
    scheduled = models.BooleanField(
        _("fitted on schedule"), default=False,
        help_text=_("Fitted by the scheduled retraining, not by a person."))

    class Meta:
        verbose_name = _("match model version")
        verbose_name_plural = _("match model versions")
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.version

    def model(self) -> Any:
        from fingerprints.rule.config import model_from_dict

        return model_from_dict(self.weights)

    @property
    def kind(self) -> str:
        """``vector`` (engine v4: a model on the comparison vector) or ``levels`` (engine
        v3: weights of the rule's levels)."""
        return "vector" if self.weights.get("kind") == "vector" else "levels"


class ReviewOrder(models.TextChoices):
    MODEL = "model", _("by the model (probability nearest the threshold first)")
    DOUBT = "doubt", _("as before (lowest similarity first)")


class EngineSettings(models.Model):
    """Singleton: the engine's tunable settings, edited by admins (see articles/tuning/state.py)."""

    k = models.PositiveSmallIntegerField(
        _("content distance k"), default=_engine_default("k"),
        help_text=_("Hamming distance (0–8) within which content fingerprints are candidates."),
    )
    title_k = models.PositiveSmallIntegerField(
        _("title distance"), default=_engine_default("title_k"),
        help_text=_("Hamming distance (0–8) within which title fingerprints are candidates."),
    )
    candidate_radius = models.PositiveSmallIntegerField(
        _("candidate radius"), default=_engine_default("candidate_radius"),
        validators=[MinValueValidator(0), MaxValueValidator(64)],
        help_text=_("Fingerprints farther than the content or title distance that share a "
                    "block of the index with the article are verified too when within this "
                    "many bits (0–64): a larger radius verifies more pairs and finds more "
                    "partial copies; at or below the distance, only those within it."),
    )
    probe_bits = models.PositiveSmallIntegerField(
        _("probe bits"), default=_engine_default("probe_bits"),
        validators=[MinValueValidator(0), MaxValueValidator(4)],
        help_text=_("Content lookups also try the article's fingerprint with this many of "
                    "its least certain bits in each block flipped, in every combination "
                    "(0–4; 3 adds 28 lookups; 0 turns probing off): copies whose "
                    "fingerprints differ in those bits are found."),
    )
    anchorless_threshold = models.FloatField(
        _("match threshold without the founding article"),
        default=_engine_default("anchorless_threshold"),
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text=_("A candidate whose docId's founding article could not be read (the "
                    "docId is joined through it) joins only when its own match probability "
                    "is at least this too, for every language (from 0 to 1). Raising it "
                    "never adds a match, lowering it never removes one."),
    )
    hmm = models.BooleanField(_("jieba HMM"), default=_engine_default("hmm"))
    title_min_tokens = models.PositiveSmallIntegerField(
        _("title: words at least"), default=_engine_default("title_min_tokens"),
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
        _("boilerplate: stories at least"), default=_engine_default("boilerplate_min_docs"),
        validators=[MinValueValidator(0), MaxValueValidator(65535)],
        help_text=_("A clause seen in this many different stories is boilerplate and no "
                    "longer counts in fingerprints; a picture seen in this many stories is a "
                    "stock picture (a logo, a banner) and is no evidence for or against a "
                    "match (0 turns both off; 1 is not allowed)."),
    )
    picture_bits = models.PositiveSmallIntegerField(
        _("picture distance (bits)"), default=_engine_default("picture_bits"),
        validators=[MinValueValidator(0), MaxValueValidator(32)],
        help_text=_("Two pictures are the same picture when their 64-bit perceptual hashes "
                    "differ in at most this many bits (0: identical hashes only). A change "
                    "below the picture index's block size rebuilds the index."),
    )
    match_threshold = models.FloatField(
        _("match threshold"), default=_engine_default("match_threshold"),
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
        help_text=_("The model the match threshold is applied to: empty for the model "
                    "shipped with the project (on the comparison vector), or a version "
                    "(match model versions; compare it there first): one fitted to the "
                    "editors' decisions, or the shipped model of the rule's levels. "
                    "Saving applies it to the next article, without a reindex."),
    )
    review_order = models.CharField(
        _("review: order"), max_length=8, choices=ReviewOrder.choices,
        default=ReviewOrder.MODEL,
        help_text=_("By the model: the items whose match probability is nearest the match "
                    "threshold first, then those of the largest docIds. As before: lowest "
                    "verified similarity first, then largest distance."),
    )
    retrain_automatically = models.BooleanField(
        _("retrain on schedule"), default=False,
        help_text=_("When on, the workers' watchdog fits a candidate comparison-vector "
                    "version in the background once enough new labels (the next setting) "
                    "came since the last fitted version; it is only compared, not "
                    "activated, unless the setting below allows it."),
    )
    retrain_min_labels = models.PositiveIntegerField(
        _("retrain: new labels at least"), default=30,
        validators=[MinValueValidator(1)],
        help_text=_("Editors' decisions and sure answers on the teaching queue made since "
                    "the last fitted version that the scheduled retraining waits for."),
    )
    retrain_activate = models.BooleanField(
        _("activate automatically when not worse"), default=False,
        help_text=_("A version fitted on schedule becomes the engine's model at once when "
                    "it is not flagged and not worse than the active model in F1, "
                    "precision or recall on the held-out decisions and on the audit "
                    "stream's held-out answers; otherwise an admin activates it."),
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
    change_log_days = models.PositiveIntegerField(
        _("keep the change log (days)"), default=30,
        help_text=_("Changes of docIds (GET /api/v1/changes, webhooks) older than this are "
                    "dropped from the log; 0 keeps every change. A reader further behind "
                    "than this misses what was dropped."),
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
        from fingerprints.rule.vector_model import shipped_vector_model

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
            model=(self.match_model.model() if self.match_model is not None
                   else shipped_vector_model()),
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
