"""Editor pages: thin function views; fragments rendered alone for htmx requests.

A page names its fragments with ``{% partialdef %}``; a view renders only the
fragment an htmx request targets (the ``HX-Target`` header names the element
it will replace), so the same URL serves the page and its parts, and every
link and form keeps working without JavaScript.

Every action is a POST (CSRF-checked by Django's middleware) to one view that
checks the user may edit and calls one service function of
:mod:`articles.editor.actions`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, wraps
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.auth.views import redirect_to_login
from django.core import signing
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import OperationalError
from django.db.models import Count, Q, QuerySet, Subquery
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails
from redis.exceptions import RedisError

from articles.editor import actions, bulk, review, teaching
from articles.editor.cluster_page import MEMBER_FIELDS, cluster_members, comparison, minute
from articles.editor.diff import word_diff
from articles.editor.explain import explain, probability_text
from articles.editor.forms import (
    DEFAULT_SORT,
    BulkForm,
    ClusterFilterForm,
    MemberForm,
    MergeForm,
    MoveForm,
    NoteForm,
    ReviewFilterForm,
)
from articles.editor.params import parse_whole_number, whole_number, whole_numbers
from articles.index.candidates import IndexUnavailable
from articles.ingest.lookup import related_docs
from articles.lib.conflicts import lock_conflict
from articles.models import (
    Article,
    ArticleStatus,
    AuditEntry,
    BulkAction,
    BulkStatus,
    Decision,
    Doc,
    PairAnswer,
    PairLabel,
    PassKind,
    ReviewClaim,
)
from articles.templatetags.dashboard import action_label
from articles.tuning.state import active_config
from fingerprints.rule import Features
from fingerprints.rule.verification import verify

log = logging.getLogger(__name__)

PAGE_SIZE = 50
REVIEW_ITEMS = 25
REVIEW_COUNT_CAP = 1000  # counting further means reading every automatic match
MERGE_RESULTS = 10
AUDIT_ENTRIES = 100

View = Callable[..., HttpResponse]

# Columns a listing row needs: never the bodies or the features of the representatives.
LIST_FIELDS = (
    "doc_id", "status", "version", "size", "first_seen", "last_seen", "representative_pinned",
    "representative__nid", "representative__title", "representative__media",
)


# --- access -------------------------------------------------------------------------


def can_view(user: Any) -> bool:
    """Editors act; other staff may look; anyone else is refused."""
    return bool(user.is_authenticated and user.is_active and (user.is_staff or
                                                              actions.can_edit(user)))


def _login_redirect(request: HttpRequest) -> HttpResponse:
    if _is_htmx(request):
        # An htmx request after the session expired: reload the whole page on the login form.
        query = urlencode({"next": request.get_full_path()})
        return HttpResponseClientRedirect(f"{reverse('login')}?{query}")
    return redirect_to_login(request.get_full_path())


def viewer_required(view: View) -> View:
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return _login_redirect(request)
        if not can_view(request.user):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapped


def editor_required(view: View) -> View:
    @wraps(view)
    @require_POST
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return _login_redirect(request)
        if not actions.can_edit(request.user):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapped


def _is_htmx(request: HttpRequest) -> bool:
    """Set by django-htmx's middleware (``request.htmx``: the HX-* request headers)."""
    return bool(getattr(request, "htmx", False))


def _fragment(request: HttpRequest) -> str:
    """The id of the element an htmx request will swap ("" for a full page)."""
    details: HtmxDetails | None = getattr(request, "htmx", None)
    if not details or details.boosted or details.history_restore_request:
        return ""
    return details.target or ""


def _render(request: HttpRequest, template: str, context: dict[str, Any],
            status: int = 200) -> HttpResponse:
    context.setdefault("can_edit", actions.can_edit(request.user))
    context.setdefault("undo_toast_seconds", settings.UNDO_TOAST_SECONDS)
    response = render(request, template, context, status=status)
    patch_vary_headers(response, ["HX-Request", "HX-Target"])
    return response


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return redirect("clusters")


# --- /clusters/ ---------------------------------------------------------------------


@dataclass
class ClusterRow:
    """A docId in the listing, its times formatted once (cheaper than the date filter)."""

    doc: Doc
    claim: ReviewClaim | None = None  # an editor reviewing it now

    @cached_property
    def first_seen(self) -> str:
        return minute(self.doc.first_seen)

    @cached_property
    def last_seen(self) -> str:
        return minute(self.doc.last_seen)


@viewer_required
def clusters(request: HttpRequest) -> HttpResponse:
    form = ClusterFilterForm(request.GET)
    form.is_valid()
    # Page through the ids alone (a narrow sort the (size, last_seen) index covers), then
    # load those 50 docs with their representatives: sorting whole joined rows of 100k
    # articles' docs is what made this page slow.
    ids = form.filter(Doc.objects.all()).values_list("pk", flat=True)
    page = Paginator(ids, PAGE_SIZE).get_page(request.GET.get("page"))
    page_ids = list(page.object_list)
    loaded = Doc.objects.select_related("representative").only(*LIST_FIELDS).in_bulk(page_ids)
    docs = [ClusterRow(loaded[pk]) for pk in page_ids if pk in loaded]
    claims = review.cluster_claims(page_ids)
    for row in docs:
        row.claim = claims.get(row.doc.pk)
    template = "articles/clusters.html"
    if _fragment(request) == "cluster-rows":
        template += "#cluster-rows"
    sort = (form.cleaned_data.get("sort") if hasattr(form, "cleaned_data") else "") or DEFAULT_SORT
    return _render(request, template, {
        "form": form, "page": page, "docs": docs, "sort": sort,
        "filter_query": _filter_query(request.GET), **_newest_marks(),
        "poll_seconds": settings.CLUSTERS_POLL_SECONDS,
    })


def _newest_marks() -> dict[str, int]:
    """The newest docId and article now, in one query: "all N that match" takes no docId
    newer than the page (``upto``); the "N new" banner counts the clusters that received
    articles after ``since``."""
    newest_article = Article.objects.order_by("-pk").values("pk")[:1]
    row = (Doc.objects.order_by("-pk").annotate(newest_article=Subquery(newest_article))
           .values_list("pk", "newest_article").first())
    upto, since = row if row is not None else (0, 0)
    return {"upto": upto or 0, "since": since or 0}


def _filter_query(params: QueryDict) -> str:
    """The query string of the /clusters/ filter alone (no page, no poll position)."""
    query = params.copy()
    for key in ("page", "since"):
        query.pop(key, None)
    return query.urlencode()


@viewer_required
def clusters_news(request: HttpRequest) -> HttpResponse:
    """What an open /clusters/ page polls: how many clusters of its filter received
    articles after the newest one it knew (a banner that reloads the list on demand)."""
    since = whole_number(request, "since")
    form = ClusterFilterForm(request.GET)
    form.is_valid()
    count = 0
    if since is not None:
        fresh = Article.objects.filter(pk__gt=since, status=ArticleStatus.DONE)
        docs = form.filter(Doc.objects.filter(pk__in=fresh.values("doc"))).order_by()
        count = docs.values("pk")[:REVIEW_COUNT_CAP].count()
    return _render(request, "articles/_clusters_news.html",
                   {"since": str(since or 0), "count": count,
                    "capped": count >= REVIEW_COUNT_CAP,
                    "filter_query": _filter_query(request.GET),
                    "poll_seconds": settings.CLUSTERS_POLL_SECONDS})


def nav_counts(request: HttpRequest) -> HttpResponse:
    """The navigation's review-queue count (every page loads it, then polls it)."""
    if not request.user.is_authenticated:
        return _login_redirect(request)
    if not can_view(request.user):
        # Nothing to show this user: 204, which htmx leaves alone (a 403 would flash an
        # error on every page of an account that may see none of them anyway).
        return HttpResponse(status=204)
    count = review.desk_queue(request.user)[0][:REVIEW_COUNT_CAP].count()
    return _render(request, "articles/_nav_counts.html",
                   {"review_count": count, "capped": count >= REVIEW_COUNT_CAP,
                    "poll_seconds": settings.NAV_POLL_SECONDS})


# --- /clusters/<docId>/ -------------------------------------------------------------


def _merge_targets(doc: Doc, query: str) -> list[Doc]:
    query = query.strip()
    if not query:
        return []
    docs = Doc.objects.filter(size__gt=0).exclude(pk=doc.pk).select_related(
        "representative").only(*LIST_FIELDS)
    lowered = query.lower()
    if len(lowered) >= 4 and set(lowered) <= set("0123456789abcdef-"):
        docs = docs.filter(
            Q(doc_id__startswith=lowered) | Q(representative__title__icontains=query)
        )
    else:
        docs = docs.filter(representative__title__icontains=query)
    return list(docs.order_by("-last_seen", "-id")[:MERGE_RESULTS])


def _related_context(doc: Doc, version: int) -> dict[str, Any]:
    """The docIds a member of ``doc`` verifies against (merge candidates), or why they
    cannot be listed now (the index is unreachable or being rebuilt): the page works
    without them."""
    context: dict[str, Any] = {"doc": doc, "version": version}
    try:
        context["related"] = related_docs(doc)
    except (IndexUnavailable, RedisError, ValueError) as exc:  # ValueError: unreadable features
        log.warning("related docIds of %s unavailable: %s", doc.doc_id, exc)
        context["related_error"] = _("The index cannot be read just now; try again later.")
    return context


def _merged_into(doc: Doc) -> str:
    entry = AuditEntry.objects.filter(doc_id=doc.doc_id, action="merge").first()
    if entry is not None and isinstance(entry.data, dict):
        return str(entry.data.get("to", ""))
    return ""


def _detail_context(request: HttpRequest, doc: Doc) -> dict[str, Any]:
    context = cluster_members(doc, request.GET.get("compare", ""))
    merge_query = request.GET.get("merge_q", "")
    audit = list(AuditEntry.objects.filter(doc_id=doc.doc_id)[:AUDIT_ENTRIES])
    context.update({
        "audit": audit,
        **dict(zip(("undoable", "undone"), _history_states(audit), strict=True)),
        "merge_query": merge_query,
        "merge_results": _merge_targets(doc, merge_query),
        "version": doc.version,
        "claim": review.cluster_claims([doc.pk]).get(doc.pk),
        "asked": review.open_requests([doc.pk]).get(doc.pk),
        "merged_into": _merged_into(doc) if doc.size == 0 else "",
        "kept_note": request.session.pop(f"kept-note:{doc.doc_id}", ""),
    })
    return context


def _history_states(audit: list[AuditEntry]) -> tuple[set[int], set[int]]:
    """Of the decisions these history entries record: the ones undo would accept now
    (offered an Undo button; one a later decision depends on is not), and the ones
    undone since (struck through)."""
    ids = {int(entry.data["decision"]) for entry in audit
           if entry.action in actions.UNDOABLE and isinstance(entry.data, dict)
           and isinstance(entry.data.get("decision"), int)}
    decisions = list(Decision.objects.filter(pk__in=ids))
    undone = {d.pk for d in decisions if d.undone_at is not None}
    return {d.pk for d in decisions if d.pk not in undone and actions.would_undo(d)}, undone


def _get_doc(doc_id: str) -> Doc:
    return get_object_or_404(Doc.objects.select_related("representative"), doc_id=doc_id)


@viewer_required
def cluster_detail(request: HttpRequest, doc_id: str) -> HttpResponse:
    doc = _get_doc(doc_id)
    target = _fragment(request)
    if target in ("diff", "review-diff"):
        wanted = request.GET.get("compare", "")
        member = (Article.objects.filter(doc=doc, nid=wanted, status=ArticleStatus.DONE)
                  .only(*MEMBER_FIELDS).first())
        return _render(request, "articles/_diff.html", comparison(doc, member, active_config()))
    if target == "merge-results":
        query = request.GET.get("merge_q", "")
        # The results' merge buttons carry the version of the page that searched, not
        # the current one: merging from a stale page must be refused like any action.
        return _render(request, "articles/cluster_detail.html#merge-results",
                       {"doc": doc, "merge_query": query,
                        "merge_results": _merge_targets(doc, query),
                        "version": _position(request, "version", doc.version)})
    if target == "related":
        return _render(request, "articles/cluster_detail.html#related",
                       _related_context(doc, _position(request, "version", doc.version)))
    template = "articles/cluster_detail.html"
    if target == "cluster-body":
        template += "#cluster-body"
    return _render(request, template, _detail_context(request, doc))


# --- /review/ -----------------------------------------------------------------------


def _review_response(request: HttpRequest, position: int | None, fragment: bool,
                     item: int | None = None) -> HttpResponse:
    """The queue page (or its fragment) with the item at `position` selected, or the
    item with id `item` when it is listed; no position: the first item no other editor
    holds (the cursor never lands on a colleague's claim)."""
    rules = review.rules()
    queue, filters = review.desk_queue(request.user)
    total = queue[:REVIEW_COUNT_CAP].count()
    ids = review.in_order(queue, REVIEW_ITEMS)
    if item is not None and item in ids:
        position = ids.index(item)
    loaded = Article.objects.select_related("doc", "doc__representative").only(
        "id", "nid", "title", "media", "hotness", "received_at", "matched_by", "distance",
        "similarity", "doc__doc_id", "doc__size", "doc__status", "doc__version",
        "doc__representative__nid", "doc__representative__title",
        "doc__representative__media",
    ).in_bulk(ids)
    items = [loaded[pk] for pk in ids if pk in loaded]
    claims = review.active_claims(ids)
    requests = review.open_requests({entry.doc_pk for entry in items if entry.doc_pk})
    if position is None:
        free = [n for n, entry in enumerate(items) if entry.pk not in claims
                or claims[entry.pk].editor_id == request.user.pk]
        position = free[0] if free else 0
    position = max(0, min(position, len(items) - 1))
    selected = items[position] if items else None
    entries = [(entry, review.reasons(entry, rules), claims.get(entry.pk),
                requests.get(entry.doc_pk) if entry.doc_pk else None) for entry in items]
    context: dict[str, Any] = {"entries": entries, "total": total, "position": position,
                               "shown": ",".join(str(entry.pk) for entry in items),
                               "fragment": fragment, "review_count": total,
                               "filters": filters,
                               "filter_form": ReviewFilterForm(initial=filters),
                               "medias": _desk_medias(),
                               "nav_poll_seconds": settings.NAV_POLL_SECONDS,
                               "selected": selected, "capped": total >= REVIEW_COUNT_CAP,
                               "claim_minutes": _claim_minutes(),
                               # the newest queue item now: the "N new" banner counts after it
                               "newest": queue.values_list("pk", flat=True).first() or 0,
                               "poll_seconds": settings.REVIEW_POLL_SECONDS,
                               # an Undo in the messages comes back to this queue position
                               "undo_next": f"{reverse('review')}?pos={position}"}
    if selected is not None and selected.doc is not None:
        context["comparison"] = comparison(_get_doc(selected.doc.doc_id), selected,
                                            active_config())
    template = "articles/review.html" + ("#review-queue" if fragment else "")
    return _render(request, template, context)


def _position(request: HttpRequest, name: str, default: int = 0) -> int:
    """A position or version parameter: absent -> ``default``; bad -> 400."""
    value = whole_number(request, name, default)
    assert value is not None
    return value


def _position_in(url: str) -> int:
    """The review position a ``next`` URL carries, 0 when it carries none or a bad one:
    the action is done by then, so a bad position only resets the queue's place."""
    return parse_whole_number((parse_qs(urlsplit(url).query).get("pos") or [""])[0]) or 0


def _claim_minutes() -> int:
    return max(1, -(-settings.REVIEW_CLAIM_SECONDS // 60))


@viewer_required
def review_news(request: HttpRequest) -> HttpResponse:
    """What an open /review/ page polls: how many matches joined the queue after the
    newest one it shows (a banner that loads them on demand: the list never jumps), and
    what became of the items it shows (``shown``): decided by a colleague (out of the
    queue) or taken by one. Those are marked in place, out of band, with the queue's
    count and the navigation's."""
    newest = whole_number(request, "since", 0) or 0
    shown = whole_numbers(request, "shown", REVIEW_ITEMS)
    queue, _filters = review.desk_queue(request.user)
    count = queue.filter(pk__gt=newest)[:REVIEW_COUNT_CAP].count()
    total = queue[:REVIEW_COUNT_CAP].count()
    return _render(request, "articles/_review_news.html", {
        "newest": newest, "count": count, "capped": count >= REVIEW_COUNT_CAP,
        "poll_seconds": settings.REVIEW_POLL_SECONDS, "shown": ",".join(map(str, shown)),
        "states": _item_states(request, queue, shown), "total": total, "oob": True,
        "review_count": total, "total_capped": total >= REVIEW_COUNT_CAP,
        "nav_poll_seconds": settings.NAV_POLL_SECONDS})


def _item_states(request: HttpRequest, queue: QuerySet[Article], shown: list[int]
                 ) -> list[tuple[int, str, str]]:
    """(article id, state, who) for the shown items a colleague changed: ``decided``
    (no longer in the queue) or ``taken`` (a colleague's claim on its cluster)."""
    if not shown:
        return []
    still = set(queue.filter(pk__in=shown).values_list("pk", flat=True))
    states: list[tuple[int, str, str]] = []
    gone = dict(Article.objects.filter(pk__in=[pk for pk in shown if pk not in still])
                .values_list("pk", "doc__doc_id"))
    if gone:
        # the newest editor entry of each of their docIds, in one query (newest first)
        who: dict[str, str] = {}
        for doc_id, label in (AuditEntry.objects.filter(doc_id__in=set(gone.values()) - {None})
                              .exclude(actor_label="").values_list("doc_id", "actor_label")):
            who.setdefault(doc_id, label)
        states += [(pk, "decided", who.get(doc_id or "", "")) for pk, doc_id in gone.items()]
    for pk, claim in review.active_claims([pk for pk in shown if pk in still]).items():
        if claim.editor_id != request.user.pk:
            states.append((pk, "taken", claim.editor.get_username()))
    return sorted(states)


def _desk_medias() -> list[str]:
    """Media names to pick a desk from: the most frequent among recent articles."""
    newest = Article.objects.order_by("-id").values_list("id", flat=True).first() or 0
    return list(Article.objects.filter(id__gt=newest - 5000).exclude(media="")
                .values("media").annotate(n=Count("id")).order_by("-n")
                .values_list("media", flat=True)[:100])


@login_required
@require_POST
def review_filter(request: HttpRequest) -> HttpResponse:
    """Save the signed-in user's desk (their review queue's filter); empty clears it."""
    if not can_view(request.user):
        raise PermissionDenied
    form = ReviewFilterForm({} if request.POST.get("clear") else request.POST)
    if form.is_valid():
        review.save_desk_filter(request.user, form.values())
        messages.success(request, _("Your desk is saved: the queue, taking the next item and "
                                    "the counts follow it.") if form.values()
                         else _("Your desk shows the whole queue again."))
    else:
        messages.error(request, " ".join(str(e) for errs in form.errors.values() for e in errs))
    if _fragment(request) == "review-queue":
        return _review_response(request, None, fragment=True)
    return redirect("review")


@viewer_required
def review_queue(request: HttpRequest) -> HttpResponse:
    return _review_response(request, whole_number(request, "pos"),
                            fragment=_fragment(request) == "review-queue",
                            item=whole_number(request, "item"))


@editor_required
def review_take(request: HttpRequest) -> HttpResponse:
    """Take the next item of the queue no other editor holds (a claim that expires)."""
    assert isinstance(request.user, User)  # editor_required
    return _take(request)


def _take(request: HttpRequest) -> HttpResponse:
    assert isinstance(request.user, User)
    candidates = review.in_order(review.desk_queue(request.user)[0], REVIEW_ITEMS)
    taken = review.take_next(request.user, candidates)
    if not candidates:
        messages.info(request, _("Nothing to review."))
    elif taken is None:
        messages.warning(request, _("Every listed item is taken by another editor."))
    else:
        minutes = _claim_minutes()
        messages.success(request, ngettext(
            "This item is yours for %(minutes)s minute; other editors taking the next item "
            "skip it.",
            "This item is yours for %(minutes)s minutes; other editors taking the next item "
            "skip it.", minutes) % {"minutes": minutes})
    if _fragment(request) == "review-queue":
        return _review_response(request, 0, fragment=True, item=taken)
    url = reverse("review")
    return redirect(f"{url}?item={taken}" if taken is not None else url)


@editor_required
def review_pass(request: HttpRequest, kind: str) -> HttpResponse:
    """Pass the held item on, then take the next one: ``skip`` (it comes back to this
    editor after the rest, and to others as usual) or ``second`` (unsure: another editor
    gets it first and decides; it never comes back to this one)."""
    assert isinstance(request.user, User)  # editor_required
    if kind not in (PassKind.SKIP, PassKind.SECOND):
        raise Http404
    note = request.POST.get("note", "")[:500]
    if review.pass_on(request.user, kind, note) is None:
        messages.info(request, _("You held no item; here is the next one."))
    elif kind == PassKind.SECOND:
        messages.info(request, _("Another editor will decide this one."))
    return _take(request)


# --- actions ------------------------------------------------------------------------


def _next_url(request: HttpRequest) -> str:
    """The page a form asks to return to (``next``): a path on this site, else "". It is
    a URL, redirected to as it is (never taken for a route name to reverse)."""
    candidate = request.POST.get("next", "")
    if candidate.startswith("/") and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return ""


def _after_action(request: HttpRequest, acted_on: Doc, shown: Doc) -> HttpResponse:
    """Where an editor lands after an action: the review queue, or the cluster page."""
    next_url = _next_url(request)
    review_url = reverse("review")
    if next_url.startswith(review_url):
        if _fragment(request) == "review-queue":
            return _review_response(request, _position_in(next_url), fragment=True)
        return HttpResponseRedirect(next_url)
    url = reverse("cluster_detail", args=[shown.doc_id])
    if _fragment(request) == "cluster-body":
        if shown.pk != acted_on.pk:
            return HttpResponseClientRedirect(url)  # another docId: load its page
        doc = _get_doc(shown.doc_id)
        return _render(request, "articles/cluster_detail.html#cluster-body",
                       _detail_context(request, doc))
    return redirect(url)


def _member(doc: Doc, nid: str) -> Article:
    article = Article.objects.filter(doc=doc, nid=nid).defer("features").first()
    if article is None:
        now = Doc.objects.get(pk=doc.pk)
        if now.version != doc.version:  # a colleague's decision took it out meanwhile
            raise actions.StaleVersion(now, doc.version)
        raise actions.EditError(_("%(nid)s is not a member of this docId.") % {"nid": nid})
    return article


def _conflict_message(doc_id: str) -> str:
    """Why a stale action was refused: who changed the docId last, and how."""
    latest = AuditEntry.objects.filter(doc_id=doc_id).first()
    if latest is None:
        return _("This cluster changed after you opened it. Nothing was changed: here it is "
                 "as it is now; check it and try again.")
    return _("%(who)s changed this cluster (%(what)s) after you opened it. Nothing was "
             "changed: here it is as it is now; check it and try again.") % {
        "who": latest.actor_label or _("system"), "what": action_label(latest.action)}


def _busy_message() -> str:
    return _("Another editor was changing this cluster at the same moment. Nothing was "
             "changed: here it is as it is now; check it and try again.")


def _action(form_class: type[NoteForm],
            run: Callable[[HttpRequest, Doc, dict[str, Any]], Doc]) -> View:
    """An action view: validate the form, call the service, report, land somewhere.

    The form carries the docId's version the page showed: when another editor decided on
    the docId since, the action is refused (checked here, then again under the row lock
    in the service) and the editor lands on the current state with a warning."""

    @editor_required
    def view(request: HttpRequest, doc_id: str) -> HttpResponse:
        doc = _get_doc(doc_id)
        shown = doc
        form = form_class(request.POST)
        if form.is_valid():
            try:
                if form.cleaned_data["version"] != doc.version:
                    raise actions.StaleVersion(doc, form.cleaned_data["version"])
                shown = run(request, doc, form.cleaned_data)
            except actions.StaleVersion as exc:
                messages.warning(request, _conflict_message(exc.doc_id))
                _keep_note(request, doc, form.cleaned_data["note"])
            except OperationalError as exc:
                if not lock_conflict(exc):
                    raise
                messages.warning(request, _busy_message())
                _keep_note(request, doc, form.cleaned_data["note"])
            except actions.EditError as exc:
                messages.error(request, str(exc))
        else:
            errors = [str(e) for field_errors in form.errors.values() for e in field_errors]
            messages.error(request, " ".join(errors))
        return _after_action(request, doc, shown)

    return view


def _keep_note(request: HttpRequest, doc: Doc, note: str) -> None:
    """A refused action's note, offered again in the cluster page's note field (the
    editor typed it for this cluster; a reload after the refusal must not lose it)."""
    if note:
        request.session[f"kept-note:{doc.doc_id}"] = note


def _undo_tag(request: HttpRequest, doc: Doc) -> str:
    """The message tag that puts an Undo button beside it (articles/_messages.html): the
    decision this request just made on `doc`."""
    if not isinstance(request.user, User):
        return ""
    decision = (Decision.objects.filter(doc_id=doc.doc_id, actor=request.user)
                .order_by("-pk").values_list("pk", flat=True).first())
    return f"undo-{decision}" if decision is not None else ""


def _confirm(request: HttpRequest, doc: Doc, data: dict[str, Any]) -> Doc:
    actions.confirm_doc(doc, request.user, data["note"], version=data["version"])
    messages.success(request, _("Confirmed docId %(doc_id)s.") % {"doc_id": doc.doc_id},
                     extra_tags=_undo_tag(request, doc))
    return doc


def _split(request: HttpRequest, doc: Doc, data: dict[str, Any]) -> Doc:
    article = _member(doc, data["nid"])
    new = actions.split_article(article, request.user, data["note"], version=data["version"])
    messages.success(request, _("Split %(nid)s out into the new docId %(doc_id)s.")
                     % {"nid": article.nid, "doc_id": new.doc_id},
                     extra_tags=_undo_tag(request, doc))
    return doc


def _move(request: HttpRequest, doc: Doc, data: dict[str, Any]) -> Doc:
    article = _member(doc, data["nid"])
    target = data["target"]
    actions.move_article(article, target, request.user, data["note"],
                         version=data["version"])
    messages.success(request, _("Moved %(nid)s to docId %(doc_id)s.")
                     % {"nid": article.nid, "doc_id": target.doc_id},
                     extra_tags=_undo_tag(request, doc))
    doc.refresh_from_db(fields=["size"])
    return doc if doc.size > 0 else target


def _merge(request: HttpRequest, doc: Doc, data: dict[str, Any]) -> Doc:
    target = data["target"]
    try:
        actions.merge_docs(doc, target, request.user, data["note"], version=data["version"],
                           target_version=data["target_version"],
                           representative=data["representative"] or "target")
    except actions.StaleVersion as exc:
        if exc.doc_id == target.doc_id:  # the target changed: say so on this page
            messages.warning(request, _conflict_message(exc.doc_id))
            return doc
        raise
    messages.success(request, _("Merged docId %(source)s into %(target)s.")
                     % {"source": doc.doc_id, "target": target.doc_id},
                     extra_tags=_undo_tag(request, doc))
    return target


def _representative(request: HttpRequest, doc: Doc, data: dict[str, Any]) -> Doc:
    article = _member(doc, data["nid"])
    actions.choose_representative(article, request.user, data["note"],
                                  version=data["version"])
    messages.success(request, _("%(nid)s is now the representative.") % {"nid": article.nid},
                     extra_tags=_undo_tag(request, doc))
    return doc


def _release(request: HttpRequest, doc: Doc, data: dict[str, Any]) -> Doc:
    actions.release_representative(doc, request.user, data["note"],
                                   version=data["version"])
    messages.success(request, _("The representative is elected by hotness again."),
                     extra_tags=_undo_tag(request, doc))
    return doc


confirm = _action(NoteForm, _confirm)
split = _action(MemberForm, _split)
move = _action(MoveForm, _move)
merge = _action(MergeForm, _merge)
representative = _action(MemberForm, _representative)
release = _action(NoteForm, _release)


def _undo_refused_message(exc: actions.UndoRefused) -> str:
    if exc.reason == "undone":
        return _("This decision was undone already.")
    if exc.reason == "joined":
        return _("It cannot be undone: new articles joined docId %(doc_id)s since.") % {
            "doc_id": exc.doc_id}
    latest = AuditEntry.objects.filter(doc_id=exc.doc_id).first()
    if latest is None:
        return _("It cannot be undone: docId %(doc_id)s changed since.") % {
            "doc_id": exc.doc_id}
    return _("It cannot be undone: %(who)s changed docId %(doc_id)s since (%(what)s).") % {
        "who": latest.actor_label or _("system"), "doc_id": exc.doc_id,
        "what": action_label(latest.action)}


@editor_required
def undo(request: HttpRequest, pk: int) -> HttpResponse:
    """Undo a decision (from the message after it, or from a cluster's history)."""
    decision = get_object_or_404(Decision, pk=pk)
    try:
        actions.undo(decision, request.user)
    except actions.UndoRefused as exc:
        messages.error(request, _undo_refused_message(exc))
    except OperationalError as exc:
        if not lock_conflict(exc):
            raise
        messages.warning(request, _busy_message())
    except actions.EditError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, _("Undone: %(what)s on docId %(doc_id)s.") % {
            "what": action_label(decision.action), "doc_id": decision.doc_id})
    next_url = _next_url(request) or reverse("cluster_detail", args=[decision.doc_id])
    if _fragment(request) == "review-queue" and next_url.startswith(reverse("review")):
        return _review_response(request, _position_in(next_url), fragment=True)
    if _is_htmx(request):
        return HttpResponseClientRedirect(next_url)
    return HttpResponseRedirect(next_url)


# --- bulk decisions -------------------------------------------------------------------


def _bulk_targets(request: HttpRequest, data: dict[str, Any]) -> tuple[list[tuple[int, int]],
                                                                       dict[str, Any]]:
    if data.get("scope") != "filter":
        return (bulk.targets_from_selection(request.POST.getlist("doc")),
                {"scope": "selected"})
    filters = ClusterFilterForm(QueryDict(data["filter"]))
    if not filters.is_valid():
        raise bulk.BulkRefused(" ".join(
            f"{filters[name].label}: {error}" for name, errors in filters.errors.items()
            for error in errors))
    # Only docIds the page knew (newer ones are announced by its banner, not taken unseen).
    docs = filters.filter(Doc.objects.all()).filter(pk__lte=data["upto"] or 0)
    return (bulk.targets_from_filter(docs, data["count"] or 0),
            {"scope": "filter", "query": data["filter"], "count": data["count"]})


@editor_required
def bulk_start(request: HttpRequest) -> HttpResponse:
    """Confirm, or mark for review, the selected clusters or all that match a filter: one
    job, whose progress the answer shows (it polls itself)."""
    assert isinstance(request.user, User)  # editor_required
    form = BulkForm(request.POST)
    next_url = _next_url(request) or reverse("clusters")
    try:
        if not form.is_valid():
            raise bulk.BulkRefused(" ".join(
                str(error) for errors in form.errors.values() for error in errors))
        targets, selection = _bulk_targets(request, form.cleaned_data)
        job = bulk.start(request.user, form.cleaned_data["action"], targets,
                         note=form.cleaned_data["note"], selection={**selection,
                                                                    "next": next_url})
    except bulk.BulkRefused as exc:
        if _is_htmx(request):
            return _render(request, "articles/_bulk.html", {"refused": str(exc)})
        messages.error(request, str(exc))
        return HttpResponseRedirect(next_url)
    if _is_htmx(request):
        return _bulk_fragment(request, job)
    return redirect("bulk", pk=job.pk)


#: The progress fragment asks again after this long while the job runs.
BULK_POLL_MS = 700

BULK_SKIPS_SHOWN = 50


def _bulk_context(job: BulkAction) -> dict[str, Any]:
    undo = job.undos.exclude(status=BulkStatus.FAILED).order_by("-pk").first()
    return {
        "bulk": job, "undo": undo,
        "may_undo": (job.action != BulkAction.UNDO and job.status == BulkStatus.DONE
                     and undo is None and job.changed > 0),
        "skipped": job.skipped[:BULK_SKIPS_SHOWN],
        "more_skipped": max(0, len(job.skipped) - BULK_SKIPS_SHOWN),
        "poll_ms": BULK_POLL_MS,
    }


def _bulk_fragment(request: HttpRequest, job: BulkAction) -> HttpResponse:
    response = _render(request, "articles/_bulk.html", _bulk_context(job))
    if job.finished:
        # The page reloads its list once the job is done (static/js/bulk.js).
        response["HX-Trigger"] = "bulkDone"
    return response


@viewer_required
def bulk_status(request: HttpRequest, pk: int) -> HttpResponse:
    """A bulk action's progress and result: the fragment the page polls, or a page."""
    job = get_object_or_404(BulkAction.objects.select_related("actor", "undoes"), pk=pk)
    if _is_htmx(request):
        return _bulk_fragment(request, job)
    return _render(request, "articles/bulk.html", _bulk_context(job))


@editor_required
def bulk_undo(request: HttpRequest, pk: int) -> HttpResponse:
    """Undo a bulk action as a whole (itself a bulk action: one job, with progress)."""
    assert isinstance(request.user, User)  # editor_required
    job = get_object_or_404(BulkAction, pk=pk)
    try:
        undo_job = bulk.start_undo(job, request.user)
    except bulk.BulkRefused as exc:
        if _is_htmx(request):
            context = _bulk_context(job)
            context["refused"] = str(exc)
            return _render(request, "articles/_bulk.html", context)
        messages.error(request, str(exc))
        return redirect("bulk", pk=job.pk)
    if _is_htmx(request):
        return _bulk_fragment(request, undo_job)
    return redirect("bulk", pk=undo_job.pk)


# --- the teaching queue ("help the engine") ----------------------------------------------


def _pair_context(asked: teaching.Asked) -> dict[str, Any]:
    """The pair side by side: the earlier article on the left, the word-level diff."""
    c = asked.candidate
    rows = {a.pk: a for a in Article.objects.filter(pk__in=[c.a, c.b]).only(
        "id", "nid", "title", "content", "media", "body_cleared_at")}
    if c.a not in rows or c.b not in rows:
        return {}
    left, right = rows[c.a], rows[c.b]
    config = active_config()
    return {"left": left, "right": right,
            "diff": word_diff(left.content, right.content, config),
            "title_diff": word_diff(left.title, right.title, config)}


def _verdict(asked: teaching.Asked) -> dict[str, Any]:
    """What the model said about the pair (shown after the answer): its probability
    then, its verdict at the threshold, and the waterfall of its score now."""
    c = asked.candidate
    stored = dict(Article.objects.filter(pk__in=[c.a, c.b]).values_list("pk", "features"))
    why = None
    if stored.get(c.a) and stored.get(c.b):
        found = verify(Features.from_bytes(bytes(stored[c.b] or b"")),
                       Features.from_bytes(bytes(stored[c.a] or b"")), active_config())
        if found.score is not None:
            why = explain(found.score.as_dict(), c.probability)
    return {"same": c.probability >= asked.threshold, "why": why,
            "probability": probability_text(c.probability)}


def _teach_response(request: HttpRequest, asked: teaching.Asked | None,
                    label: PairLabel | None = None, applied: str = "") -> HttpResponse:
    context: dict[str, Any] = {"asked": asked, "label": label, "applied": applied,
                               "progress": teaching.progress(request.user),
                               "audit": teaching.audit_of(),
                               "stop_window": teaching.STOP_WINDOW,
                               "fragment": _fragment(request) == "teach"}
    if asked is not None:
        context["token"] = asked.token()
        context["pair"] = _pair_context(asked)
        if label is not None:
            context["verdict"] = verdict = _verdict(asked)
            verdict["agree"] = ("unsure" if label.answer == PairAnswer.UNSURE else "yes"
                                if verdict["same"] == (label.answer == PairAnswer.SAME) else "no")
    template = "articles/teach.html" + ("#teach" if context["fragment"] else "")
    return _render(request, template, context)


@viewer_required
def teach(request: HttpRequest) -> HttpResponse:
    """The next pair of the teaching queue (articles/editor/teaching.py), asked blind."""
    return _teach_response(request, teaching.next_pair(request.user))


@viewer_required
@require_POST
def teach_answer(request: HttpRequest) -> HttpResponse:
    """Store the answer on the pair, apply it where the editor may act, then reveal what
    the model said."""
    answer = request.POST.get("answer", "")
    try:
        asked = teaching.rescored(teaching.Asked.from_token(request.POST.get("token", "")))
    except signing.BadSignature:
        return HttpResponse(_("This pair was not asked here."), status=400)
    if answer not in PairAnswer.values:
        return HttpResponse(_("Answer same story, different or not sure."), status=400)
    label, applied = teaching.record(asked, answer, request.user)
    return _teach_response(request, asked, label, applied)


@viewer_required
@require_POST
def teach_undo(request: HttpRequest, pk: int) -> HttpResponse:
    """Take back one of one's own answers (and the join or split it applied)."""
    label = get_object_or_404(PairLabel, pk=pk, editor=request.user, undone_at__isnull=True)
    try:
        teaching.undo(label, request.user)
    except actions.UndoRefused as exc:
        messages.error(request, _undo_refused_message(exc))
    else:
        messages.success(request, _("Answer taken back."))
    if _is_htmx(request):
        return HttpResponseClientRedirect(reverse("teach"))
    return redirect("teach")
