from __future__ import annotations

import re
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse
from django.utils.translation import gettext_lazy as _

from articles.editor import actions as editor_actions
from articles.editor.charts import line_chart
from articles.index.reindex import apply_settings
from articles.ingest.jobs import enqueue_processing
from articles.models import (
    ApiKey,
    Article,
    ArticleStatus,
    BoilerplateClause,
    Doc,
    EngineSettings,
    IndexState,
    MatchModelVersion,
    MediaWeight,
    PairLabel,
    Webhook,
)
from articles.tuning import matcher, preview, retraining
from articles.tuning.boilerplate import add_clause
from articles.tuning.boilerplate import forget as forget_boilerplate
from dedupsite import redis_store
from fingerprints.rule.match_model import MatchModel
from fingerprints.rule.vector_model import VectorModel


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "created_at", "last_used_at", "revoked_at",
                    "rate_limit_per_minute", "may_change_others", "may_read_others"]
    readonly_fields = ["prefix", "created_at", "last_used_at"]
    fields = ["name", "rate_limit_per_minute", "may_change_others", "may_read_others",
              "revoked_at", "prefix", "created_at", "last_used_at"]
    actions = ["revoke"]

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        key, plaintext = ApiKey.issue(obj.name, rate_limit_per_minute=obj.rate_limit_per_minute,
                                      may_change_others=obj.may_change_others,
                                      may_read_others=obj.may_read_others)
        obj.pk, obj.prefix = key.pk, key.prefix
        self.message_user(
            request, f"The new key (shown only once): {plaintext}", level=messages.WARNING
        )

    @admin.action(description="Revoke the selected keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        from django.utils import timezone

        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        ApiKey.forget_cached()
        self.message_user(request, f"Revoked {count} keys.")


@admin.register(Article)
class ArticleAdmin(admin.ModelAdmin):
    list_display = ["nid", "title", "media", "status", "doc", "matched_by", "distance",
                    "hotness", "received_at"]
    list_filter = ["status", "matched_by", "media"]
    search_fields = ["nid", "title", "url"]
    raw_id_fields = ["doc", "matched_article"]
    readonly_fields = ["title_fp", "content_fp", "url_hash", "payload_hash", "processed_at",
                       "attempts", "api_key"]
    list_select_related = ["doc"]
    actions = ["requeue"]

    @admin.action(description="Re-queue the selected failed articles")
    def requeue(self, request: HttpRequest, queryset: QuerySet[Article]) -> None:
        nids = list(queryset.filter(status=ArticleStatus.FAILED).values_list("nid", flat=True))
        Article.objects.filter(nid__in=nids).update(status=ArticleStatus.QUEUED,
                                                    failure_reason="")
        for start in range(0, len(nids), 500):
            enqueue_processing(nids[start:start + 500])
        self.message_user(request, f"Re-queued {len(nids)} articles.")


@admin.register(Doc)
class DocAdmin(admin.ModelAdmin):
    list_display = ["doc_id", "size", "status", "representative", "first_seen", "last_seen"]
    list_filter = ["status"]
    search_fields = ["doc_id"]
    raw_id_fields = ["anchor", "representative"]
    actions = ["flag_for_review"]

    @admin.action(description=_("Flag the selected docIds for review"))
    def flag_for_review(self, request: HttpRequest, queryset: QuerySet[Doc]) -> None:
        flagged = editor_actions.flag_for_review(queryset.values_list("doc_id", flat=True),
                                          request.user, note="admin")
        self.message_user(request, _("%(n)d docIds flagged; confirmed ones were left alone.")
                          % {"n": flagged})


class EngineSettingsForm(forms.ModelForm):
    class Meta:
        model = EngineSettings
        fields = "__all__"

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name in ("k", "title_k", "review_distance"):
            value = data.get(name)
            if value is not None and not 0 <= value <= 8:
                self.add_error(name, _("Must be between 0 and 8."))
        for name in ("review_similarity",):
            value = data.get(name)
            if value is not None and not 0.0 <= value <= 1.0:
                self.add_error(name, _("Must be between 0 and 1."))
        for number, line in enumerate(data.get("user_words", "").splitlines(), 1):
            parts = line.split()
            if len(parts) > 3 or (len(parts) > 1 and not parts[1].isdigit()):
                self.add_error("user_words", _(
                    "Line %(n)d: use 'word [frequency] [part of speech]', "
                    "frequency a whole number.") % {"n": number})
        if not self.errors:
            try:
                EngineSettings(**{f: data.get(f) for f in data}).engine_config()
            except (TypeError, ValueError) as exc:
                raise forms.ValidationError(str(exc)) from exc
        return data


@admin.register(EngineSettings)
class EngineSettingsAdmin(admin.ModelAdmin):
    form = EngineSettingsForm
    change_form_template = "admin/articles/enginesettings/change_form.html"
    readonly_fields = ["version", "updated_at", "index_state"]
    fieldsets = [
        (_("Matching"), {"fields": ["match_threshold", "match_model", "anchorless_threshold",
                                    "k", "title_k", "candidate_radius", "probe_bits"]}),
        (_("Tokens (a change reindexes)"), {"fields": ["hmm", "extra_stopwords",
                                                        "user_words", "title_min_tokens"]}),
        (_("Boilerplate"), {"fields": ["boilerplate_min_docs"]}),
        (_("Pictures"), {"fields": ["picture_bits"]}),
        (_("Review queue"), {"fields": ["review_order", "review_distance",
                                        "review_similarity", "review_cluster_size"]}),
        (_("Retraining on schedule"), {"fields": ["retrain_automatically",
                                                  "retrain_min_labels", "retrain_activate"]}),
        (_("Window and retention"), {"fields": ["index_window_days", "retention_days",
                                                "change_log_days"]}),
        (_("State"), {"fields": ["version", "updated_at", "index_state"]}),
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> HttpResponse:
        obj = EngineSettings.load()
        return redirect(reverse("admin:articles_enginesettings_change", args=[obj.pk]))

    @admin.display(description=_("index"))
    def index_state(self, obj: EngineSettings) -> str:
        state = IndexState.load()
        text = f"generation {state.generation or '—'}, settings v{state.config_version}"
        if state.reindex_status:
            text += f"; reindex {state.reindex_status} {state.reindex_done}/{state.reindex_total}"
        if state.reindex_error:
            text += f" ({state.reindex_error})"
        return text

    def save_model(self, request: HttpRequest, obj: EngineSettings, form: Any,
                   change: bool) -> None:
        obj.version = EngineSettings.load().version + 1
        super().save_model(request, obj, form, change)
        outcome = apply_settings(obj)
        if outcome["reindex"]:
            self.message_user(request, _("A reindex job started; the current index serves "
                                         "until the new one is complete."), messages.WARNING)
        else:
            self.message_user(request, _("The new settings are active."))

    def get_urls(self) -> list[Any]:
        return [
            path("preview/", self.admin_site.admin_view(self.preview_view),
                 name="articles_enginesettings_preview"),
            *super().get_urls(),
        ]

    def preview_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_change_permission(request):
            raise PermissionDenied
        if request.method != "POST":
            return redirect(reverse("admin:articles_enginesettings_changelist"))
        form = EngineSettingsForm(request.POST, instance=EngineSettings.load())
        context = {**self.admin_site.each_context(request), "form": form,
                   "title": _("Preview of the proposed settings"), "opts": self.model._meta}
        if form.is_valid():
            proposed = form.instance.engine_config()
            changes = preview.cluster_changes(proposed)
            pr = preview.editor_precision_recall(proposed)
            context.update(changes=changes, pr=pr,
                           held_out_only=preview.held_out_only(proposed), chart=line_chart(
                [str(row["k"]) for row in pr],
                [(str(_("precision")), "#2458d6", [row["precision"] for row in pr]),
                 (str(_("recall")), "#d6762a", [row["recall"] for row in pr])],
                title=str(_("Precision and recall by k"))))
        return render(request, "admin/articles/enginesettings/preview.html", context)


@admin.register(MatchModelVersion)
class MatchModelVersionAdmin(admin.ModelAdmin):
    """Match models fitted to the editors' decisions: train one, compare it with the
    active model on the decisions it was not fitted to, activate it."""

    change_list_template = "admin/articles/matchmodelversion/change_list.html"
    change_form_template = "admin/articles/matchmodelversion/change_form.html"
    list_display = ["version", "model_kind", "base", "trained_pairs", "held_out_pairs",
                    "held_out_f1", "flagged", "scheduled", "is_active", "created_at"]
    readonly_fields = ["version", "model_kind", "how", "base", "trained_pairs",
                       "held_out_pairs", "flagged", "scheduled", "created_at", "created_by"]
    fields = ("version", "model_kind", "how", "base", "trained_pairs", "held_out_pairs",
              "flagged", "scheduled", "created_at", "created_by")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description=_("held-out F1 at the threshold: active → this"))
    def held_out_f1(self, obj: MatchModelVersion) -> str:
        at = _at_threshold(obj.report)
        if at is None:
            return "—"
        return f"{at[0]['f1']:.3f} → {at[1]['f1']:.3f}"

    @admin.display(description=_("kind"))
    def model_kind(self, obj: MatchModelVersion) -> str:
        return str(_("comparison vector (engine v4)") if obj.kind == "vector"
                   else _("weights of the rule's levels (engine v3)"))

    @admin.display(description=_("how it was made"))
    def how(self, obj: MatchModelVersion) -> str:
        """A vector version fitted to labels, said in the admin's language from what it
        recorded (its labels, its start); any other, its stored description."""
        description = str(obj.weights.get("description", ""))
        labels = obj.labels or {}
        if obj.kind != "vector" or "answers" not in labels:
            return description
        said = _("fitted to %(pairs)s pairs the engine compared, from %(decisions)s "
                 "editors' decisions and %(answers)s answers on the teaching queue, "
                 "from %(base)s") % {"pairs": obj.trained_pairs,
                                     "decisions": len(labels.get("decisions") or []),
                                     "answers": len(labels["answers"]), "base": obj.base}
        strength = re.search(r"\(strength ([0-9.]+)\)", description)
        return str(said) + (f" ({_('strength')} {strength.group(1)})" if strength else "")

    @admin.display(description=_("active"), boolean=True)
    def is_active(self, obj: MatchModelVersion) -> bool:
        return EngineSettings.load().match_model_id == obj.pk

    def get_urls(self) -> list[Any]:
        return [
            path("train/", self.admin_site.admin_view(self.train_view),
                 name="articles_matchmodelversion_train"),
            path("<int:pk>/activate/", self.admin_site.admin_view(self.activate_view),
                 name="articles_matchmodelversion_activate"),
            *super().get_urls(),
        ]

    def train_view(self, request: HttpRequest) -> HttpResponse:
        if request.method != "POST" or not self.has_change_permission(request):
            raise PermissionDenied
        try:
            if request.POST.get("bounds"):
                matcher.check_labels()
                redis_store.queue("default").enqueue(
                    matcher.train_job, True, request.user.pk, job_timeout=6 * 3600)
                self.message_user(request, _(
                    "Fitting a version with its level bounds in the background: it "
                    "appears in this list when it is done (a few minutes for a few "
                    "thousand decisions)."))
                return redirect(reverse("admin:articles_matchmodelversion_changelist"))
            if request.POST.get("shipped_vector"):
                version = matcher.shipped_vector_version()
            elif request.POST.get("shipped_rule"):
                version = matcher.shipped_rule_version()
            elif request.POST.get("vector"):
                version = matcher.train_vector(user=request.user)
            elif request.POST.get("unlabelled"):
                version = matcher.train_unlabelled(user=request.user)
            else:
                version = matcher.train(user=request.user)
        except matcher.NotEnoughLabels as exc:
            self.message_user(request, _("Not enough data to fit a model: %(why)s.")
                              % {"why": exc}, messages.ERROR)
            return redirect(reverse("admin:articles_matchmodelversion_changelist"))
        self.message_user(request, _("Fitted %(version)s. Compare it below before "
                                     "activating it.") % {"version": version.version})
        return redirect(reverse("admin:articles_matchmodelversion_change", args=[version.pk]))

    def activate_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        if request.method != "POST" or not self.has_change_permission(request):
            raise PermissionDenied
        version = get_object_or_404(MatchModelVersion, pk=pk)
        apply_settings(matcher.activate(version))
        self.message_user(request, _("%(version)s is the engine's match model from the next "
                                     "article on.") % {"version": version.version})
        return redirect(reverse("admin:articles_matchmodelversion_change", args=[pk]))

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: Any = None) -> HttpResponse:
        obj = self.get_object(request, object_id)
        extra: dict[str, Any] = dict(extra_context or {})
        if obj is not None and obj.report.get("thresholds"):
            report = obj.report
            xs = [f"{t:g}" for t in report["thresholds"]]
            extra["operating"] = all("merges" in row for row in report["current"])
            extra["held_decisions"] = report.get("heldOutDecisions")
            extra["comparison"] = [
                {"threshold": t, "current": c, "proposed": p}
                for t, c, p in zip(report["thresholds"], report["current"],
                                   report["proposed"], strict=True)]
            extra["chart"] = line_chart(xs, [
                (str(_("precision, active model")), "#2458d6",
                 [r["precision"] for r in report["current"]]),
                (str(_("recall, active model")), "#d6762a",
                 [r["recall"] for r in report["current"]]),
                (str(_("precision, this version")), "#0b7a3e",
                 [r["precision"] for r in report["proposed"]]),
                (str(_("recall, this version")), "#a1257d",
                 [r["recall"] for r in report["proposed"]]),
            ], title=str(_("Held-out editors' decisions by match threshold")))
        if obj is not None:  # a version without a comparison (the upgrade's) shows these too
            extra["editors"] = obj.report.get("editors") or []
            extra["flags"] = obj.report.get("flags") or []
            extra["without_editor"] = obj.report.get("withoutEditor")
            extra["weights"] = _weight_rows(obj)
            extra["bounds"] = _bound_rows(obj)
            extra["is_active"] = self.is_active(obj)
            extra["audit"] = obj.report.get("audit")
            extra["automatic"] = obj.report.get("automatic")
            extra["not_activated"] = [_automatic_reason(code) for code in
                                      (extra["automatic"] or {}).get("notActivated", [])]
        return super().change_view(request, object_id, form_url, extra)


def _automatic_reason(code: str) -> str:
    """Why a version fitted on schedule was not activated (retraining.worse_on's codes)."""
    fixed = {
        retraining.OFF: _("automatic activation is off"),
        retraining.FLAGGED: _("it is flagged"),
        retraining.NOTHING_HELD_OUT: _("no held-out decisions to compare it on"),
    }
    if code in fixed:
        return str(fixed[code])
    stream, _sep, measure = code.partition(":")
    names = {"f1": "F1", "precision": _("precision"), "recall": _("recall")}
    where = (_("on the held-out decisions") if stream == retraining.DECISIONS
             else _("on the audit stream"))
    return str(_("worse %(measure)s %(where)s") % {"measure": names.get(measure, measure),
                                                   "where": where})


def _at_threshold(report: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(active model, this version) at the threshold the report was made with."""
    thresholds = report.get("thresholds") or []
    threshold = report.get("threshold", 0.5)
    if threshold not in thresholds:
        return None
    i = thresholds.index(threshold)
    return report["current"][i], report["proposed"][i]


def _weight_rows(obj: MatchModelVersion) -> list[dict[str, Any]]:
    """Each level's weight in the active model and in this version."""
    from articles.tuning.state import active_config

    new = obj.model()
    base = active_config().model
    if isinstance(new, VectorModel) or isinstance(base, VectorModel):
        return _vector_weight_rows(new, base)
    return [{"comparison": c, "level": lvl, "base": base.weight(c, lvl), "new": w,
             "moved": abs(base.weight(c, lvl) - w) >= 0.5}
            for c, lvl, w in new.weights] + [
        {"comparison": "prior", "level": "", "base": base.prior, "new": new.prior,
         "moved": abs(base.prior - new.prior) >= 0.5}]


def _vector_weight_rows(new: Any, base: Any) -> list[dict[str, Any]]:
    """A vector version's weights, level by level (present plus the steps reached), and
    the active model's for the same comparison, regime and cut points (else none)."""
    def levels(model: Any) -> dict[tuple[str, str], float]:
        if not isinstance(model, VectorModel):
            return {}
        out = {}
        for spec in model.specs:
            weight = spec.present
            for level in range(len(spec.cuts) + 1):
                out[(spec.key, spec.label(level))] = round(weight, 2)
                if level < len(spec.cuts):
                    weight += spec.steps[level]
        return out

    now, then = levels(new), levels(base)
    rows = [{"comparison": key, "level": label, "base": then.get((key, label)), "new": w,
             "moved": abs(then.get((key, label), w) - w) >= 0.5 or (key, label) not in then}
            for (key, label), w in now.items()]
    base_prior = base.prior if isinstance(base, VectorModel) else None
    return rows + [{"comparison": "prior", "level": "", "base": base_prior, "new": new.prior,
                    "moved": base_prior is None or abs(base_prior - new.prior) >= 0.5}]


def _bound_rows(obj: MatchModelVersion) -> list[dict[str, Any]]:
    """Each level bound in the active model and in this version (a vector model has cut
    points per comparison instead, in its weights)."""
    from articles.tuning.state import active_config

    model, active = obj.model(), active_config().model
    if not isinstance(model, MatchModel) or not isinstance(active, MatchModel):
        return []
    new = model.bounds.as_dict()
    base = active.bounds.as_dict()
    return [{"name": name, "base": base[name], "new": value, "moved": base[name] != value}
            for name, value in new.items()]


@admin.register(MediaWeight)
class MediaWeightAdmin(admin.ModelAdmin):
    list_display = ["media", "weight"]
    search_fields = ["media"]

    def save_model(self, request: HttpRequest, obj: MediaWeight, form: Any,
                   change: bool) -> None:
        super().save_model(request, obj, form, change)
        from articles.representatives.election import clear_weights_cache

        clear_weights_cache()  # other processes see it within WEIGHTS_TTL seconds


@admin.register(PairLabel)
class PairLabelAdmin(admin.ModelAdmin):
    """The teaching queue's answers, read-only: they are given on /review/teach/ (an
    answer taken back there stays listed, with when)."""

    list_display = ["nid_a", "nid_b", "answer", "editor", "model_version", "probability",
                    "audit", "inclusion_probability", "created_at", "undone_at"]
    list_filter = ["answer", "audit", "model_version"]
    search_fields = ["nid_a", "nid_b"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class BoilerplateClauseForm(forms.ModelForm):
    class Meta:
        model = BoilerplateClause
        fields = ["text", "active"]

    def clean_text(self) -> str:
        from fingerprints.rule.boilerplate import MIN_CLAUSE, clauses
        from fingerprints.rule.normalize import normalize

        text = self.cleaned_data["text"]
        keys = clauses(normalize(text))
        if len(keys) != 1 or len(keys[0]) < MIN_CLAUSE:
            raise forms.ValidationError(_(
                "One clause of at least %(n)d letters or digits, without sentence or clause "
                "punctuation inside.") % {"n": MIN_CLAUSE})
        return str(text)


@admin.register(BoilerplateClause)
class BoilerplateClauseAdmin(admin.ModelAdmin):
    """The boilerplate the workers learned (most stories first) and the admins' own.
    Switching a clause off keeps it in bodies again and stops it being learned again;
    it applies to articles processed from then on (reindex to redo stored ones)."""

    form = BoilerplateClauseForm
    list_display = ["text", "stories", "source", "active", "created_at"]
    list_filter = ["source", "active"]
    search_fields = ["text"]
    ordering = ["-stories", "id"]
    actions = ["switch_off", "switch_on"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        # a clause is known by its hash: its text is fixed once it exists
        return ["text", "stories", "source"] if obj is not None else []

    def save_model(self, request: HttpRequest, obj: BoilerplateClause, form: Any,
                   change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
        else:
            saved = add_clause(form.cleaned_data["text"])
            obj.pk = saved.pk
        forget_boilerplate()

    @admin.action(description=_("Keep in bodies (not boilerplate)"))
    def switch_off(self, request: HttpRequest, queryset: QuerySet[BoilerplateClause]) -> None:
        for clause in queryset:
            clause.active = False
            clause.save(update_fields=["active", "updated_at"])
        forget_boilerplate()

    @admin.action(description=_("Remove from bodies (boilerplate)"))
    def switch_on(self, request: HttpRequest, queryset: QuerySet[BoilerplateClause]) -> None:
        for clause in queryset:
            clause.active = True
            clause.save(update_fields=["active", "updated_at"])
        forget_boilerplate()


class WebhookForm(forms.ModelForm):
    # a URL typed without its scheme is read as https:// (Django 6's default, now)
    url = forms.URLField(label=_("URL"), max_length=500, assume_scheme="https")

    class Meta:
        model = Webhook
        fields = ["url", "api_key"]

    def clean_url(self) -> str:
        from articles.downstream import webhooks

        url = str(self.cleaned_data["url"])
        try:
            webhooks.check_url(url)
        except webhooks.BadWebhook as exc:
            raise forms.ValidationError(str(exc)) from None
        return url


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    """Receivers of the change log: registered here (the secret shown once) or with
    ``manage.py create_webhook``; a dead one (too many failures) is redelivered from
    where it stopped."""

    form = WebhookForm
    list_display = ["url", "api_key", "status", "delivered", "attempts", "next_attempt_at",
                    "last_error"]
    list_filter = ["status"]
    readonly_fields = ["delivered", "status", "attempts", "next_attempt_at", "last_error",
                       "created_at"]
    actions = ["redeliver"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["url", "api_key", *(self.readonly_fields if obj is not None else [])]

    def save_model(self, request: HttpRequest, obj: Webhook, form: Any, change: bool) -> None:
        from articles.downstream import webhooks

        if change:
            super().save_model(request, obj, form, change)
            return
        hook = webhooks.create(obj.url, obj.api_key)
        obj.pk, obj.secret = hook.pk, hook.secret
        self.message_user(request, _("The webhook's signing secret (shown only once): "
                                     "%(secret)s") % {"secret": hook.secret},
                          level=messages.WARNING)

    @admin.action(description=_("Redeliver: start the selected webhooks again"))
    def redeliver(self, request: HttpRequest, queryset: Any) -> None:
        from articles.downstream import delivery, webhooks

        count = webhooks.redeliver(queryset)
        delivery.enqueue_delivery()
        self.message_user(request, _("%(n)d webhook(s) will be delivered to again.")
                          % {"n": count})
