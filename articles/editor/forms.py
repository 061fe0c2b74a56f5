"""Forms of the editor pages: the cluster filters and the editor actions."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import forms
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from articles.models import Article, Doc, DocStatus

SORTS = {
    "-last_seen": _("last seen, newest first"),
    "last_seen": _("last seen, oldest first"),
    "-first_seen": _("first seen, newest first"),
    "first_seen": _("first seen, oldest first"),
    "-size": _("size, largest first"),
    "size": _("size, smallest first"),
}
DEFAULT_SORT = "-last_seen"


class ClusterFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label=_("Title or docId"))
    status = forms.ChoiceField(
        required=False, label=_("Status"),
        choices=[("", _("any status")), *DocStatus.choices],
    )
    # The query parameter is "media" (the article field); it shadows Form.media, which
    # this form never renders (no widget assets).
    media = forms.CharField(  # type: ignore[assignment]
        required=False, max_length=200, label=_("Media"))
    min_size = forms.IntegerField(required=False, min_value=0, label=_("Min. size"))
    max_size = forms.IntegerField(required=False, min_value=0, label=_("Max. size"))
    seen_from = forms.DateField(
        required=False, label=_("Seen from"), widget=forms.DateInput(attrs={"type": "date"})
    )
    seen_to = forms.DateField(
        required=False, label=_("Seen until"), widget=forms.DateInput(attrs={"type": "date"})
    )

    def clean_seen_to(self) -> dt.date | None:
        """The filter reads up to the start of the next day: the last date has none."""
        day: dt.date | None = self.cleaned_data.get("seen_to")
        if day is not None and day >= dt.date.max:
            raise forms.ValidationError(_("The date must be before %(date)s.")
                                        % {"date": dt.date.max.isoformat()})
        return day
    sort = forms.ChoiceField(required=False, label=_("Sort"), choices=list(SORTS.items()))

    #: A listing of single-article docIds is rarely what an editor wants.
    DEFAULT_MIN_SIZE = 2

    def filter(self, docs: QuerySet[Doc]) -> QuerySet[Doc]:
        """Apply the valid filters (an invalid field is ignored, its error shown)."""
        data = self.cleaned_data if self.is_bound and hasattr(self, "cleaned_data") else {}
        min_size = data.get("min_size")
        if min_size is None:
            min_size = self.DEFAULT_MIN_SIZE
        docs = docs.filter(size__gte=min_size)
        if data.get("max_size") is not None:
            docs = docs.filter(size__lte=data["max_size"])
        if data.get("status"):
            docs = docs.filter(status=data["status"])
        if data.get("seen_from"):
            docs = docs.filter(last_seen__gte=_day_start(data["seen_from"]))
        if data.get("seen_to"):
            docs = docs.filter(last_seen__lt=_day_start(data["seen_to"] + dt.timedelta(days=1)))
        query = (data.get("q") or "").strip()
        if query:
            if _looks_like_doc_id(query):
                docs = docs.filter(doc_id=query.lower())
            else:
                docs = docs.filter(representative__title__icontains=query)
        media = (data.get("media") or "").strip()
        if media:
            # Clusters with at least one article from that outlet.
            docs = docs.filter(pk__in=Article.objects.filter(media=media).values("doc"))
        sort = data.get("sort") or DEFAULT_SORT
        # The tie-break ascending: (status, last_seen DESC) then serves the order (the primary
        # key is the last, ascending, part of every InnoDB index).
        return docs.order_by(sort, "id")


def _day_start(day: dt.date) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time.min))


def _looks_like_doc_id(text: str) -> bool:
    head, _sep, tail = text.partition("-")
    hexdigits = set("0123456789abcdefABCDEF")
    return len(head) == 16 and len(tail) == 16 and set(head + tail) <= hexdigits


class NoteForm(forms.Form):
    note = forms.CharField(required=False, max_length=2000, label=_("Note (optional)"))
    # The docId's version the page showed (Doc.version): an action on an older view is
    # refused rather than applied over another editor's decision.
    version = forms.IntegerField(
        min_value=0, widget=forms.HiddenInput,
        error_messages={"required": _("This page is out of date: reload it and try again."),
                        "invalid": _("This page is out of date: reload it and try again.")},
    )


class MemberForm(NoteForm):
    nid = forms.CharField(max_length=64)


class TargetForm(NoteForm):
    target = forms.CharField(max_length=200, label=_("Target docId"))

    def clean_target(self) -> Doc:
        value = self.cleaned_data["target"].strip().lower()
        doc = Doc.objects.filter(doc_id=value).first()
        if doc is None:
            raise forms.ValidationError(_("No docId %(doc_id)s.") % {"doc_id": value[:40]})
        return doc


class MoveForm(TargetForm, MemberForm):
    pass


class MergeForm(TargetForm):
    """A merge names the target's version as the page showed it too: a target another
    editor changed meanwhile (split, merged...) refuses the merge like a stale source."""

    target_version = forms.IntegerField(
        min_value=0, widget=forms.HiddenInput,
        error_messages={"required": _("This page is out of date: reload it and try again."),
                        "invalid": _("This page is out of date: reload it and try again.")},
    )
    representative = forms.ChoiceField(
        required=False, initial="target", label=_("Representative of the merged cluster"),
        choices=[("target", _("keep the target's")), ("source", _("take this cluster's"))])


class BulkForm(forms.Form):
    """A bulk decision from /clusters/ or /review/: the checked clusters (``doc``, each
    ``<docId>:<version>``, read with getlist) or every cluster of a /clusters/ filter."""

    action = forms.ChoiceField(choices=[("confirm", _("Confirm")),
                                        ("flag_for_review", _("Mark for review"))],
                               error_messages={"required": _("Choose an action."),
                                               "invalid_choice": _("Choose an action.")})
    scope = forms.ChoiceField(required=False, choices=[("selected", _("the selected clusters")),
                                                       ("filter", _("every cluster that "
                                                                    "matches the filter"))])
    # The /clusters/ query string of the filter (scope "filter").
    filter = forms.CharField(required=False, max_length=2000)
    # What the page showed: how many clusters the filter matched, the newest docId it knew.
    count = forms.IntegerField(required=False, min_value=0)
    upto = forms.IntegerField(required=False, min_value=0)
    note = forms.CharField(required=False, max_length=2000, label=_("Note (optional)"))


class ReviewFilterForm(forms.Form):
    """The review queue an editor works (saved as their desk: DeskPreference)."""

    media = forms.CharField(  # type: ignore[assignment]  # shadows Form.media, unused
        required=False, max_length=200, label=_("Media"))
    reason = forms.ChoiceField(required=False, label=_("Why in the queue"), choices=[
        ("", _("any reason")),
        ("near_threshold", _("near the threshold")),
        ("title_only", _("matched by title")),
        ("low_similarity", _("low similarity")),
        ("large_cluster", _("large cluster")),
        ("flagged", _("marked for review")),
    ])
    min_size = forms.IntegerField(required=False, min_value=1, max_value=1_000_000,
                                  label=_("Min. size"))
    max_size = forms.IntegerField(required=False, min_value=1, max_value=1_000_000,
                                  label=_("Max. size"))

    def values(self) -> dict[str, Any]:
        """The valid, non-empty filters (what is saved)."""
        if not self.is_valid():
            return {}
        return {k: v for k, v in self.cleaned_data.items() if v not in ("", None)}
