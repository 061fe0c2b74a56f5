"""Editor decisions: confirm, split, move, merge, choose the representative.

Each action is one service function: one MySQL transaction that changes the
docs, writes the editor's pairwise links (cannot-link for split, must-link for
move and merge), pins the articles it placed, writes an audit entry and an
outbox row for the representative store. The Redis indexes map fingerprints
to article ids and the doc of an article is read from MySQL, so no index entry
changes when an article changes doc.

Why the decisions stick: a pinned article is never re-assigned by later
processing (a changed body, a reindex, a threshold change), and batch imports
keep pinned articles where editors put them and apply the links
(docs/editing.md).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from articles.changes import log as changes
from articles.editor import review
from articles.models import (
    Article,
    ArticleStatus,
    AuditEntry,
    BulkAction,
    Decision,
    Doc,
    DocStatus,
    EditorLink,
    LinkKind,
    MatchedBy,
)
from articles.representatives import election
from dedupsite import metrics

EDITORS_GROUP = "editors"


class EditError(ValueError):
    """The action does not apply (e.g. splitting the only member of a doc)."""


class StaleVersion(EditError):
    """The editor acted on a view of the docId older than its current version: someone
    else decided on it in between. Raised before anything is written."""

    def __init__(self, doc: Doc, expected: int) -> None:
        super().__init__(f"docId {doc.doc_id} is at version {doc.version}, not {expected}")
        self.doc_id = doc.doc_id
        self.expected = expected
        self.current = doc.version


def _check_version(doc: Doc, expected: int | None) -> None:
    """Optimistic concurrency: `doc` is locked; `expected` is the version the editor's page
    showed (None: a command or a test that acts on whatever is current)."""
    if expected is not None and doc.version != expected:
        raise StaleVersion(doc, expected)


def _bump(doc: Doc) -> None:
    """Count an editor decision on a locked doc (saved with the caller's update_fields)."""
    doc.version += 1


#: Who acts: the request's user (AnonymousUser never passes ``can_edit``), or None for
#: a command or a test acting without one.
Actor = User | AnonymousUser | None


def can_edit(user: Actor) -> bool:
    if not isinstance(user, User) or not user.is_active:
        return False
    if user.is_superuser:
        return True
    return user.groups.filter(name=EDITORS_GROUP).exists()


def _signed_in(user: Actor) -> User | None:
    return user if isinstance(user, User) else None


# --- what a decision changes, kept for undo -----------------------------------------

# Attribute names, kept as written in stored decisions: "doc_id" and "matched_article_id"
# here are Django's foreign-key attributes (the rows' primary keys), not docIds.
ARTICLE_STATE = ("doc_id", "pinned", "matched_by", "matched_article_id", "distance",
                 "similarity")
DOC_STATE = ("status", "anchor_id", "representative_id", "representative_pinned",
             "first_seen", "last_seen")
_TIMES = ("first_seen", "last_seen")


class _Before:
    """The rows a decision is about to change, as they are before it (the first sight of
    each row counts): what undo writes back."""

    def __init__(self) -> None:
        self.articles: dict[int, dict[str, Any]] = {}
        self.docs: dict[int, dict[str, Any]] = {}
        self.links: dict[tuple[str, str], str | None] = {}

    def articles_of(self, articles: Any) -> None:
        for row in articles.values("pk", *ARTICLE_STATE):
            self.articles.setdefault(row.pop("pk"), row)

    def doc(self, doc: Doc, created: bool = False) -> None:
        state: dict[str, Any] = {field: getattr(doc, field) for field in DOC_STATE}
        for field in _TIMES:
            state[field] = state[field].isoformat()
        self.docs.setdefault(doc.pk, {"created": created, **state})

    def links_of(self, pairs: set[tuple[str, str]]) -> None:
        existing = {
            (a, b): kind for a, b, kind in EditorLink.objects.filter(
                nid_a__in={a for a, _ in pairs}, nid_b__in={b for _, b in pairs}
            ).values_list("nid_a", "nid_b", "kind")
        }
        for pair in pairs:
            self.links.setdefault(pair, existing.get(pair))

    def as_json(self) -> dict[str, Any]:
        return {
            "articles": {str(pk): state for pk, state in self.articles.items()},
            "docs": {str(pk): state for pk, state in self.docs.items()},
            "links": [[a, b, kind] for (a, b), kind in sorted(self.links.items())],
        }


def _decision(action: str, doc: Doc, user: Actor, before: _Before,
              changed: Iterable[Doc], bulk: BulkAction | None = None) -> Decision:
    _count_decision(action, bulk)
    changed = list(changed)
    _log_changes(before.articles, before.docs, changed, f"editor:{action}", user)
    review.resolve_requests(d.pk for d in changed)  # a second opinion, given
    return Decision.objects.create(
        action=action, doc_id=doc.doc_id, actor=_signed_in(user), before=before.as_json(),
        versions={str(d.pk): d.version for d in changed}, bulk=bulk,
    )


def _log_changes(articles: dict[int, dict[str, Any]], docs: dict[int, dict[str, Any]],
                 changed: list[Doc], reason: str, user: Actor) -> None:
    """Log what a decision (or its undo) changed, from the rows' states before it
    (``articles``, ``docs``: pk -> state, as :class:`_Before` keeps them) and the docs as
    they are now: each article whose docId changed, each doc whose representative or
    status changed (articles/changes/log.py). After every row lock of the decision."""
    now = {pk: (doc_pk, nid, key) for pk, doc_pk, nid, key in Article.objects.filter(
        pk__in=list(articles)).values_list("pk", "doc", "nid", "api_key")}
    doc_keys: dict[Any, str] = dict(Doc.objects.filter(
        pk__in={s["doc_id"] for s in articles.values()} | {v[0] for v in now.values()}
    ).values_list("pk", "doc_id"))
    found = []
    for pk, state in articles.items():
        doc_pk, nid, key = now.get(pk, (None, "", None))
        if doc_pk is not None and doc_pk != state["doc_id"]:
            found.append(changes.membership(nid, doc_keys[doc_pk],
                                            doc_keys.get(state["doc_id"], ""), key))
    reps = dict(Article.objects.filter(pk__in={d.representative_id for d in changed}
                                       ).values_list("pk", "nid"))
    for doc in changed:
        state = docs.get(doc.pk, {})
        created = bool(state.get("created"))  # its state was taken once it existed
        if doc.representative_id and (created or doc.representative_id
                                      != state.get("representative_id")):
            found.append(changes.representative(doc.doc_id, reps.get(doc.representative_id, ""),
                                                _key_of(doc.representative_id)))
        if created or doc.status != state.get("status"):
            found.append(changes.status(doc.doc_id, doc.status, _key_of(doc.representative_id)))
    with changes.cause(reason, changes.editor_actor(user)):
        changes.record(found)


def _key_of(article_pk: int | None) -> int | None:
    """The key that posted an article (a doc's rows are read by its representative's)."""
    if article_pk is None:
        return None
    return Article.objects.filter(pk=article_pk).values_list("api_key", flat=True).first()


def _count_decision(kind: str, bulk: BulkAction | None) -> None:
    """``dedupsite_editor_decisions_total``, once the decision is committed."""
    via = "bulk" if bulk is not None else "hand"
    transaction.on_commit(lambda: metrics.inc("dedupsite_editor_decisions_total",
                                              kind=kind, via=via))


def _of_bulk(bulk: BulkAction | None) -> dict[str, Any]:
    """Audit data naming the bulk action a decision was one cluster of (editor/bulk.py)."""
    return {"bulk": bulk.pk} if bulk is not None else {}


def _audit(user: Actor, action: str, doc: Doc, nid: str = "", note: str = "",
           **data: Any) -> AuditEntry:
    return AuditEntry.objects.create(
        actor=_signed_in(user),
        actor_label=user.get_username() if user is not None else "",
        action=action, doc_id=doc.doc_id, nid=nid, note=note[:2000], data=data,
    )


def _link(kind: str, nid: str, others: Iterable[str], user: Actor, before: _Before) -> None:
    """Link ``nid`` to each of ``others`` with ``kind``: a link of the other kind on the
    same pair is turned (the link is then this editor's), a missing one written. Only
    these pairs: every one holds ``nid``, so ``nid`` on one side and the other on the
    other names them exactly (``nid_a in ... and nid_b in ...`` would also take the
    pairs between two of ``others``)."""
    pairs = {EditorLink.ordered(nid, other) for other in others if other != nid}
    if not pairs:
        return
    before.links_of(pairs)
    links = EditorLink.objects.filter(
        Q(nid_a=nid, nid_b__in={b for a, b in pairs if a == nid})
        | Q(nid_b=nid, nid_a__in={a for a, b in pairs if b == nid}))
    existing = set(links.values_list("nid_a", "nid_b"))
    links.exclude(kind=kind).update(kind=kind, created_by=_signed_in(user),
                                    created_at=timezone.now())
    EditorLink.objects.bulk_create(
        [EditorLink(kind=kind, nid_a=a, nid_b=b, created_by=_signed_in(user))
         for a, b in pairs - existing],
        ignore_conflicts=True,
    )


def _member_nids(doc: Doc, exclude: Article | None = None) -> list[str]:
    members = Article.objects.filter(doc=doc, status=ArticleStatus.DONE)
    if exclude is not None:
        members = members.exclude(pk=exclude.pk)
    return list(members.values_list("nid", flat=True))


def _leave(doc: Doc, article: Article) -> None:
    doc.lose_member(article.pk)
    if doc.representative_id == article.pk:
        doc.representative_pinned = False
    doc.save(update_fields=["size", "anchor", "representative_pinned", "version",
                            "updated_at"])


def _place(article: Article, doc: Doc) -> None:
    article.doc = doc
    article.matched_by = MatchedBy.EDITOR
    article.matched_article = None
    article.pinned = True
    article.save(update_fields=["doc", "matched_by", "matched_article", "pinned"])


def _locked(article: Article, version: int | None,
            target: Doc | None = None) -> tuple[Article, Doc, dict[int, Doc]]:
    """Lock the article's doc (and `target`, when given), then the article, in the one
    lock order (:meth:`ArticleQuerySet.lock_with_doc`); the doc must be at `version` (when
    given), and the article still in the doc the editor saw it in. A split or a move that
    meets a merge thus waits for it and is refused as stale, naming the merge."""
    shown_doc_pk = article.doc_pk
    found = Article.objects.filter(pk=article.pk).lock_with_doc(
        *([target.pk] if target is not None else []))
    if found is None:
        raise EditError("the article is gone")
    locked, docs = found
    if locked.doc_pk is None:
        raise EditError("the article has no docId yet")
    if version is not None and shown_doc_pk is not None and locked.doc_pk != shown_doc_pk:
        # Moved away since the page was read: the page's doc is stale (its version moved on).
        raise StaleVersion(Doc.objects.get(pk=shown_doc_pk), version)
    doc = docs[locked.doc_pk]
    _check_version(doc, version)
    return locked, doc, docs


def confirm_doc(doc: Doc, user: Actor, note: str = "", *, version: int | None = None,
                bulk: BulkAction | None = None) -> Doc:
    """Confirm the cluster: status confirmed, every member pinned and must-linked. `bulk`:
    the bulk action this is one cluster of (named by the decision and its audit entry)."""
    with transaction.atomic():
        doc = Doc.objects.select_for_update().get(pk=doc.pk)
        _check_version(doc, version)
        before = _Before()
        before.doc(doc)
        before.articles_of(Article.objects.filter(doc=doc))
        doc.status = DocStatus.CONFIRMED
        _bump(doc)
        doc.save(update_fields=["status", "version", "updated_at"])
        nids = _member_nids(doc)
        Article.objects.filter(doc=doc).update(pinned=True)
        if nids:
            for nid in nids[1:]:
                _link(LinkKind.MUST, nids[0], [nid], user, before)
        decision = _decision("confirm", doc, user, before, [doc], bulk)
        _audit(user, "confirm", doc, note=note, size=doc.size, decision=decision.pk,
               **_of_bulk(bulk))
    return doc


def split_article(article: Article, user: Actor, note: str = "", *,
                  version: int | None = None) -> Doc:
    """Take a member out of its doc into a new docId of its own (cannot-link to the rest)."""
    with transaction.atomic():
        article, old, _ = _locked(article, version)
        if old.size <= 1:
            raise EditError("the article is the only member of its docId")
        others = _member_nids(old, exclude=article)
        before = _Before()
        before.doc(old)
        before.articles_of(Article.objects.filter(pk=article.pk))
        _bump(old)
        _leave(old, article)
        now = timezone.now()
        new = Doc.objects.create(
            doc_id=Doc.objects.fresh_doc_id(article.nid), anchor=article, representative=article,
            size=1, status=DocStatus.CONFIRMED, first_seen=now, last_seen=now,
        )
        _place(article, new)
        article.distance = article.similarity = None
        article.save(update_fields=["distance", "similarity"])
        before.doc(new, created=True)
        _link(LinkKind.CANNOT, article.nid, others, user, before)
        election.refresh(old, logged=False)
        election.refresh(new, logged=False)
        decision = _decision("split", old, user, before, [old, new])
        _audit(user, "split", old, article.nid, note, to=new.doc_id, decision=decision.pk)
        _audit(user, "split", new, article.nid, note, decision=decision.pk,
               **{"from": old.doc_id})
    return new


def move_article(article: Article, target: Doc, user: Actor,
                 note: str = "", *, version: int | None = None) -> Doc:
    """Move a member to another docId (must-link there, cannot-link to where it was)."""
    with transaction.atomic():
        article, old, docs = _locked(article, version, target)
        target = docs[target.pk]
        if target.pk == old.pk:
            raise EditError("the article is already in that docId")
        others = _member_nids(old, exclude=article)
        before = _Before()
        before.doc(old)
        before.doc(target)
        before.articles_of(Article.objects.filter(pk=article.pk))
        _bump(old)
        _leave(old, article)
        _place(article, target)
        target.size += 1
        target.last_seen = max(target.last_seen, article.received_at)
        _bump(target)
        target.save(update_fields=["size", "last_seen", "version", "updated_at"])
        _link(LinkKind.CANNOT, article.nid, others, user, before)
        _link(LinkKind.MUST, article.nid, _member_nids(target, exclude=article), user, before)
        election.refresh(old, logged=False)
        election.refresh(target, logged=False)
        decision = _decision("move", old, user, before, [old, target])
        _audit(user, "move", old, article.nid, note, to=target.doc_id, decision=decision.pk)
        _audit(user, "move", target, article.nid, note, decision=decision.pk,
               **{"from": old.doc_id})
    return target


def merge_docs(source: Doc, target: Doc, user: Actor, note: str = "", *,
               version: int | None = None, target_version: int | None = None,
               representative: str = "target") -> Doc:
    """Merge every member of `source` into `target`; `source` is left empty.

    Refused when either side changed since the editor's page showed them (``version``
    for the source, ``target_version`` for the target). The merged cluster keeps the
    target's representative (``representative="source"``: the source's), pinned as the
    editor's choice: a merge never hands the cluster to the incoming copy by hotness."""
    if source.pk == target.pk:
        raise EditError("a docId cannot be merged into itself")
    with transaction.atomic():
        first, second = sorted([source.pk, target.pk])
        locked = {d.pk: d for d in Doc.objects.select_for_update().filter(pk__in=[first, second])}
        source, target = locked[source.pk], locked[target.pk]
        _check_version(source, version)
        _check_version(target, target_version)
        if source.size == 0:
            raise EditError("the docId has no articles to merge")
        kept = (source if representative == "source" else target).representative_id
        before = _Before()
        before.doc(source)
        before.doc(target)
        before.articles_of(Article.objects.filter(doc__in=[source, target]))
        moving = _member_nids(source)
        staying = _member_nids(target)
        Article.objects.filter(doc=source).update(doc=target, pinned=True)
        Article.objects.filter(nid__in=moving).update(matched_by=MatchedBy.EDITOR)
        Article.objects.filter(doc=target).update(pinned=True)
        target.size += source.size
        target.first_seen = min(target.first_seen, source.first_seen)
        target.last_seen = max(target.last_seen, source.last_seen)
        target.status = DocStatus.CONFIRMED
        _bump(target)
        target.save(update_fields=["size", "first_seen", "last_seen", "status", "version",
                                   "updated_at"])
        source.size = 0
        source.anchor = None
        source.representative_pinned = False
        _bump(source)
        source.save(update_fields=["size", "anchor", "representative_pinned", "version",
                                   "updated_at"])
        if moving and staying:
            for nid in moving:
                _link(LinkKind.MUST, nid, [staying[0]], user, before)
        election.refresh(source, logged=False)
        if kept is not None:
            target.representative_id = kept
            target.representative_pinned = True
            target.save(update_fields=["representative", "representative_pinned"])
        election.refresh(target, logged=False)
        decision = _decision("merge", source, user, before, [source, target])
        moved_from: dict[str, Any] = {"from": source.doc_id, "moved": len(moving)}
        _audit(user, "merge", target, note=note, decision=decision.pk, **moved_from)
        _audit(user, "merge", source, note=note, to=target.doc_id, moved=len(moving),
               decision=decision.pk)
    return target


def choose_representative(article: Article, user: Actor,
                          note: str = "", *, version: int | None = None) -> Doc:
    """An editor's choice of representative; it wins over hotness until undone."""
    with transaction.atomic():
        article, doc, _ = _locked(article, version)
        before = _Before()
        before.doc(doc)
        doc.representative = article
        doc.representative_pinned = True
        _bump(doc)
        doc.save(update_fields=["representative", "representative_pinned", "version",
                                "updated_at"])
        election.refresh(doc, logged=False)
        decision = _decision("representative", doc, user, before, [doc])
        _audit(user, "representative", doc, article.nid, note, decision=decision.pk)
    return doc


def release_representative(doc: Doc, user: Actor, note: str = "", *,
                           version: int | None = None) -> Doc:
    """Undo an editor's choice: the hottest member is elected again."""
    with transaction.atomic():
        doc = Doc.objects.select_for_update().get(pk=doc.pk)
        _check_version(doc, version)
        before = _Before()
        before.doc(doc)
        doc.representative_pinned = False
        _bump(doc)
        doc.save(update_fields=["representative_pinned", "version", "updated_at"])
        election.refresh(doc, logged=False)
        decision = _decision("representative_released", doc, user, before, [doc])
        _audit(user, "representative_released", doc, note=note, decision=decision.pk)
    return doc


def flag_for_review(doc_ids: Iterable[str], user: Actor, note: str = "") -> int:
    """Put automatic docs in the review queue (status needs_review; each flag audited).
    Confirmed docs are left alone: an editor has decided them. Returns how many."""
    with transaction.atomic():
        docs = list(Doc.objects.select_for_update().filter(doc_id__in=list(doc_ids),
                                                           status=DocStatus.AUTO))
        for doc in docs:
            doc.status = DocStatus.NEEDS_REVIEW
            _bump(doc)
            doc.save(update_fields=["status", "version", "updated_at"])
            _audit(user, "flag_for_review", doc, note=note)
        with changes.cause("editor:flag_for_review", changes.editor_actor(user)):
            changes.record([changes.status(d.doc_id, d.status, _key_of(d.representative_id))
                            for d in docs])
    return len(docs)


def mark_for_review(doc: Doc, user: Actor, note: str = "", *, version: int | None = None,
                    bulk: BulkAction | None = None) -> Doc:
    """An editor's "mark for review": status needs_review, so that every automatic member
    enters the review queue (reason *flagged*). Unlike the admin's flag it is a decision:
    version-checked and undoable. A confirmed docId is refused: an editor decided it (undo
    that decision to review it again)."""
    with transaction.atomic():
        doc = Doc.objects.select_for_update().get(pk=doc.pk)
        _check_version(doc, version)
        if doc.status == DocStatus.CONFIRMED:
            raise EditError("the docId is confirmed")
        before = _Before()
        before.doc(doc)
        doc.status = DocStatus.NEEDS_REVIEW
        _bump(doc)
        doc.save(update_fields=["status", "version", "updated_at"])
        decision = _decision("mark_for_review", doc, user, before, [doc], bulk)
        _audit(user, "mark_for_review", doc, note=note, decision=decision.pk, **_of_bulk(bulk))
    return doc


# --- undo --------------------------------------------------------------------------


class UndoRefused(EditError):
    """A decision that cannot be undone: ``reason`` is "undone" (it was already),
    "changed" (a docId it changed was decided on since; ``doc_id`` names it) or "joined"
    (articles joined the docId it created since)."""

    def __init__(self, reason: str, doc_id: str = "") -> None:
        super().__init__(f"cannot undo: {reason} {doc_id}".strip())
        self.reason = reason
        self.doc_id = doc_id


UNDOABLE = frozenset({"confirm", "split", "move", "merge", "representative",
                      "representative_released", "mark_for_review"})


def would_undo(decision: Decision) -> bool:
    """Would :func:`undo` accept ``decision`` now? Read without locks: what the history
    offers (undo checks again under the locks and may still refuse)."""
    if decision.action not in UNDOABLE:
        return False
    docs = {d.pk: d for d in Doc.objects.filter(pk__in=[int(k) for k in decision.versions])}
    try:
        _check_undoable(decision, docs)
    except UndoRefused:
        return False
    return True


def _check_undoable(decision: Decision, docs: dict[int, Doc]) -> None:
    if decision.undone_at is not None:
        raise UndoRefused("undone")
    for key, version in decision.versions.items():
        doc = docs.get(int(key))
        # A later decision on the doc that was undone since moved the version on twice
        # (itself, its undo) and left the doc as this decision left it; anything else
        # (a later decision still in force, an admin's flag) depends on this one.
        undone_since = Decision.objects.filter(
            pk__gt=decision.pk, undone_at__isnull=False, versions__has_key=key).count()
        if doc is None or doc.version != version + 2 * undone_since:
            raise UndoRefused("changed", doc.doc_id if doc is not None else "")
    restored = {int(pk) for pk in decision.before.get("articles", {})}
    for key, state in decision.before.get("docs", {}).items():
        if state.get("created") and Article.objects.filter(doc=int(key)).exclude(
                pk__in=restored).exists():
            raise UndoRefused("joined", docs[int(key)].doc_id)


def _restore_links(links: list[list[Any]]) -> None:
    for nid_a, nid_b, kind in links:
        if kind is None:
            EditorLink.objects.filter(nid_a=nid_a, nid_b=nid_b).delete()
        else:
            EditorLink.objects.update_or_create(nid_a=nid_a, nid_b=nid_b,
                                                defaults={"kind": kind})


def _restore_doc(doc: Doc, state: dict[str, Any]) -> None:
    if state.get("created"):
        # Created by the decision: left empty, like a docId merged away.
        doc.anchor_id = doc.representative_id = None
        doc.representative_pinned = False
    else:
        for field in DOC_STATE:
            value = state[field]
            setattr(doc, field, dt.datetime.fromisoformat(value) if field in _TIMES else value)
    doc.size = Article.objects.filter(doc=doc, status=ArticleStatus.DONE).count()
    _bump(doc)
    doc.save(update_fields=["status", "anchor", "representative", "representative_pinned",
                            "first_seen", "last_seen", "size", "version", "updated_at"])
    # Keeps the restored choice when it was an editor's, else elects as before the
    # decision (same members, same hotness); pushes the row to the representative store.
    election.refresh(doc, logged=False)


def undo(decision: Decision, user: Actor, note: str = "", *,
         bulk: BulkAction | None = None) -> Decision:
    """Put back what `decision` changed: docIds, pins, editor links, the docs' status and
    representative (pushed to the store). Refused (UndoRefused, nothing written) when it
    was undone already or a docId it changed has been decided on since."""
    with transaction.atomic():
        decision = Decision.objects.select_for_update().get(pk=decision.pk)
        if decision.action not in UNDOABLE:
            raise EditError(f"{decision.action} cannot be undone")
        keys = sorted(int(key) for key in decision.versions)
        docs = {d.pk: d for d in Doc.objects.select_for_update().filter(pk__in=keys)
                .order_by("pk")}
        _check_undoable(decision, docs)
        restored = {int(key): state for key, state in decision.before.get("articles", {}).items()}
        now = _Before()  # what the undo changes, for the change log
        now.articles_of(Article.objects.filter(pk__in=list(restored)))
        for doc in docs.values():
            now.doc(doc)
        for pk, state in restored.items():
            Article.objects.filter(pk=pk).update(**state)
        _restore_links(decision.before.get("links", []))
        for key, state in decision.before.get("docs", {}).items():
            _restore_doc(docs[int(key)], state)
        _log_changes(now.articles, {pk: {**s, "created": False} for pk, s in now.docs.items()},
                     list(docs.values()), "editor:undo", user)
        decision.undone_at = timezone.now()
        decision.undone_by = _signed_in(user)
        decision.save(update_fields=["undone_at", "undone_by"])
        _count_decision("undo", bulk)
        for key in keys:
            _audit(user, "undo", docs[key], note=note, undid=decision.action,
                   decision=decision.pk, **_of_bulk(bulk))
    return decision
