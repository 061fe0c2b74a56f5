"""Load a batch result (``spark_dedup`` output) into the database, keeping editor decisions.

The batch engines write ``DIR/articles/`` (Parquet: each article with its docId,
fingerprints, features and fields). Importing it makes MySQL equal to the batch
result, except where editors decided otherwise:

1. a *pinned* article (placed by an editor: split, move, merge, confirm) stays in
   the doc it is in now;
2. *must-link* groups (merge, move, confirm) end up in one doc: the doc of their
   earliest pinned member, else the batch doc of their earliest member;
3. a *cannot-link* pair (split, move) never shares a doc: the movable side
   (not pinned, else the later one) leaves for a new doc of its own.

Then sizes, anchors and representatives of every touched doc are recomputed (an
editor's chosen representative stays while it is a member), each change is queued
for the representative store, and the Redis indexes are rebuilt from MySQL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from articles.changes import log as changes
from articles.models import (
    Article,
    ArticleStatus,
    AuditEntry,
    Doc,
    EditorLink,
    LinkKind,
    MatchedBy,
    RepresentativeOutbox,
)
from articles.representatives import election, outbox
from fingerprints.batch.unionfind import UnionFind
from fingerprints.rule.ids import to_unsigned, unused_doc_id

CHUNK = 1000
LIGHT_COLUMNS = ["seq", "nid", "docId", "isAnchor", "hotness", "media"]


class ResultError(ValueError):
    """The result folder is missing or malformed."""


@dataclass
class ImportReport:
    articles: int = 0
    created: int = 0
    updated: int = 0
    kept_pinned: int = 0
    moved_by_must_link: int = 0
    moved_by_cannot_link: int = 0
    docs_touched: int = 0
    docs_emptied: int = 0
    indexed: int = 0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "notes"}


def _dataset(result_dir: str | Path) -> Any:
    import pyarrow.dataset as ds

    folder = Path(result_dir) / "articles"
    if not folder.is_dir():
        raise ResultError(f"{folder} does not exist: not a spark_dedup result folder")
    return ds.dataset(str(folder), format="parquet")


def _batches(dataset: Any, columns: list[str] | None = None) -> Iterator[list[dict[str, Any]]]:
    for batch in dataset.to_batches(columns=columns, batch_size=CHUNK):
        yield batch.to_pylist()


def _unsigned(value: int | None) -> int | None:
    return None if value is None else to_unsigned(value)


def _chunked(values: Iterable[Any], size: int = CHUNK) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for value in values:
        chunk.append(value)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


@dataclass
class _Placement:
    """Where each article stands while ``plan_targets`` applies the editor rules.

    ``target`` is the plan being built (nid -> docId for every batch article); it is
    shared with the rule helpers, which update it in place.
    """

    batch: dict[str, tuple[int, str]]
    existing: dict[str, tuple[int, str | None, bool]]
    target: dict[str, str]

    def fixed(self, nid: str) -> bool:
        """An article whose doc the import does not change."""
        state = self.existing.get(nid)
        return nid not in self.batch or (state is not None and state[2] and state[1] is not None)

    def current(self, nid: str) -> str | None:
        if nid in self.target:
            return self.target[nid]
        state = self.existing.get(nid)
        return state[1] if state else None

    def order(self, nid: str) -> tuple[int, int]:
        if nid in self.batch:
            return (0, self.batch[nid][0])
        return (1, self.existing[nid][0] if nid in self.existing else 0)


def plan_targets(
    batch: dict[str, tuple[int, str]],
    existing: dict[str, tuple[int, str | None, bool]],
    must: list[tuple[str, str]],
    cannot: list[tuple[str, str]],
    report: ImportReport,
) -> tuple[dict[str, str], dict[str, str]]:
    """The docId of every article in ``batch`` after the editors' decisions.

    ``batch``: nid -> (seq, batch docId); ``existing``: nid -> (article id, current
    docId or None, pinned) for articles already in the database. Returns the target
    docIds and, for articles an editor rule moved, the rule ("editor" or "split").
    Pure function of its inputs (tested without a database).
    """
    placement = _Placement(batch, existing, {nid: doc for nid, (_seq, doc) in batch.items()})
    why: dict[str, str] = {}
    # Order matters: pins first, then must-links gather around them, then
    # cannot-links split what is still together.
    _keep_pinned(placement, report)
    _join_must_links(placement, must, why, report)
    _split_cannot_links(placement, cannot, why, report)
    return placement.target, why


def _keep_pinned(placement: _Placement, report: ImportReport) -> None:
    """Rule 1: a pinned article stays in the doc it is in now."""
    target = placement.target
    for nid, (_id, doc, pinned) in placement.existing.items():
        if pinned and doc is not None and nid in placement.batch:
            if target[nid] != doc:
                report.kept_pinned += 1
            target[nid] = doc


def _must_link_doc(placement: _Placement, group: list[str]) -> str | None:
    """The doc a must-link group ends up in (rule 2), or None if it has none."""
    anchors = sorted((n for n in group if placement.fixed(n) and placement.current(n)),
                     key=placement.order)
    if anchors:
        return placement.current(anchors[0])
    known = sorted((n for n in group if n in placement.batch), key=placement.order)
    return placement.target[known[0]] if known else None


def _join_must_links(
    placement: _Placement,
    must: list[tuple[str, str]],
    why: dict[str, str],
    report: ImportReport,
) -> None:
    """Rule 2: move the movable members of each must-link group into the group's doc."""
    target = placement.target
    groups: UnionFind[str] = UnionFind()
    for a, b in must:
        groups.union(a, b)
    for group in groups.groups():
        doc = _must_link_doc(placement, group)
        if doc is None:
            continue
        for nid in group:
            if nid in placement.batch and not placement.fixed(nid) and target[nid] != doc:
                target[nid] = doc
                why[nid] = MatchedBy.EDITOR
                report.moved_by_must_link += 1


def _unused_doc_id(nid: str, taken: set[str]) -> str:
    """A new docId derived from ``nid`` that no doc uses yet; reserves it in ``taken``."""
    doc = unused_doc_id(nid, taken.__contains__)
    taken.add(doc)
    return doc


def _split_cannot_links(
    placement: _Placement,
    cannot: list[tuple[str, str]],
    why: dict[str, str],
    report: ImportReport,
) -> None:
    """Rule 3: the movable side of a cannot-link pair sharing a doc gets a new doc.

    Runs in rounds until one moves nothing (at most one round per pair, plus one).
    """
    target, existing, current = placement.target, placement.existing, placement.current
    taken = set(target.values()) | {s[1] for s in existing.values() if s[1]}
    for _round in range(len(cannot) + 1):
        changed = False
        for a, b in cannot:
            if current(a) is None or current(a) != current(b):
                continue
            movable = [n for n in (a, b) if n in placement.batch and not placement.fixed(n)]
            if not movable:
                report.notes.append(f"cannot-link {a} / {b}: both fixed in one doc")
                continue
            nid = max(movable, key=placement.order)
            target[nid] = _unused_doc_id(nid, taken)
            why[nid] = "split"
            report.moved_by_cannot_link += 1
            changed = True
        if not changed:
            break


def _read_batch(dataset: Any) -> tuple[dict[str, tuple[int, str]], dict[str, str]]:
    """nid -> (seq, batch docId) for every result row, and docId -> anchor nid."""
    batch: dict[str, tuple[int, str]] = {}
    anchors: dict[str, str] = {}
    for rows in _batches(dataset, LIGHT_COLUMNS):
        for row in rows:
            batch[row["nid"]] = (int(row["seq"]), row["docId"])
            if row["isAnchor"]:
                anchors[row["docId"]] = row["nid"]
    return batch, anchors


def _existing_states(nids: Iterable[str]) -> dict[str, tuple[int, str | None, bool]]:
    """nid -> (article id, current docId or None, pinned) for those already stored."""
    existing: dict[str, tuple[int, str | None, bool]] = {}
    for chunk in _chunked(nids):
        for pk, nid, doc, pinned in Article.objects.filter(nid__in=chunk).values_list(
            "id", "nid", "doc__doc_id", "pinned"
        ):
            existing[nid] = (pk, doc, pinned)
    return existing


def _editor_links(
    nids: Iterable[str],
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Sorted, distinct (must-link, cannot-link) pairs touching any of ``nids``."""
    must: list[tuple[str, str]] = []
    cannot: list[tuple[str, str]] = []
    for chunk in _chunked(nids):
        links = EditorLink.objects.filter(nid_a__in=chunk) | EditorLink.objects.filter(
            nid_b__in=chunk)
        for kind, a, b in links.values_list("kind", "nid_a", "nid_b"):
            (must if kind == LinkKind.MUST else cannot).append((a, b))
    return sorted(set(must)), sorted(set(cannot))


def import_result(
    result_dir: str | Path,
    *,
    rebuild: bool = True,
    progress: Callable[[int], object] | None = None,
) -> ImportReport:
    """Load ``result_dir`` (written by ``spark_dedup``) into the database."""
    dataset = _dataset(result_dir)
    report = ImportReport()
    batch, anchors = _read_batch(dataset)
    report.articles = len(batch)

    existing = _existing_states(batch)
    must, cannot = _editor_links(batch)
    # Linked articles outside the batch still anchor or block a doc, so load them too.
    others = ({n for pair in must + cannot for n in pair} - batch.keys()) - existing.keys()
    existing.update(_existing_states(others))

    target, why = plan_targets(batch, existing, must, cannot, report)
    with transaction.atomic():
        docs = _ensure_docs(set(target.values()))
        previous = {existing[n][1] for n in batch if n in existing and existing[n][1]}
        now = timezone.now()
        ids: dict[str, int] = {n: s[0] for n, s in existing.items()}
        pending_matches: list[tuple[str, str]] = []
        moves: list[tuple[str, str, str]] = []  # (nid, docId, previous docId)
        for rows in _batches(dataset):
            rows.sort(key=lambda r: r["seq"])
            created, updated = _write_articles(rows, target, why, existing, docs, now,
                                               pending_matches, moves)
            report.created += len(created)
            report.updated += updated
            ids.update((a.nid, a.pk) for a in created)
            if progress is not None:
                progress(len(rows))
        _link_matches(pending_matches, ids)
        touched = {d for d in set(target.values()) | previous if d is not None}
        elected: list[changes.Pending] = []
        report.docs_touched, report.docs_emptied = _refresh_docs(touched, anchors, elected)
        with changes.cause("rebuild", "spark_dedup --import"):
            changes.record(_membership_changes(moves) + elected)
        AuditEntry.objects.create(
            actor_label="spark_dedup --import", action="batch_import",
            note=str(result_dir)[:2000], data=report.as_dict(),
        )
        transaction.on_commit(outbox.enqueue_push)
    if rebuild:
        from articles.index.reindex import rebuild_index

        report.indexed = rebuild_index()
    return report


def _ensure_docs(doc_ids: set[str]) -> dict[str, Doc]:
    docs: dict[str, Doc] = {}
    for chunk in _chunked(sorted(doc_ids)):
        docs.update((d.doc_id, d) for d in Doc.objects.filter(doc_id__in=chunk))
    missing = [Doc(doc_id=d) for d in sorted(doc_ids - docs.keys())]
    for chunk in _chunked(missing):
        Doc.objects.bulk_create(chunk)
    for chunk in _chunked(sorted(doc_ids - docs.keys())):
        docs.update((d.doc_id, d) for d in Doc.objects.filter(doc_id__in=chunk))
    return docs


_UPDATE_FIELDS = [
    "url", "url_hash", "title", "content", "category", "media", "image_count", "hotness",
    "published_at", "status", "failure_reason", "doc", "matched_by", "distance",
    "similarity", "title_fp", "content_fp", "features", "processed_at",
]


def _write_articles(
    rows: list[dict[str, Any]],
    target: dict[str, str],
    why: dict[str, str],
    existing: dict[str, tuple[int, str | None, bool]],
    docs: dict[str, Doc],
    now: Any,
    pending_matches: list[tuple[str, str]],
    moves: list[tuple[str, str, str]],
) -> tuple[list[Article], int]:
    new: list[Article] = []
    changed: list[Article] = []
    for row in rows:
        nid = row["nid"]
        state = existing.get(nid)
        if state is not None and state[2] and state[1] is not None:
            continue  # pinned: the editor's placement and fields stay
        doc = docs[target[nid]]
        moved = why.get(nid)
        matched_by = (MatchedBy.EDITOR if moved == MatchedBy.EDITOR
                      else None if moved == "split" else row["matchedBy"])
        fields = {
            "url": row["url"] or "", "url_hash": _unsigned(row["urlHash"]),
            "title": row["title"] or "", "content": row["content"] or "",
            "content_length": len(row["content"] or ""),
            "category": (row["category"] or "")[:100], "media": (row["media"] or "")[:200],
            "image_count": int(row["imageCount"] or 0), "hotness": float(row["hotness"] or 0),
            "published_at": parse_datetime(row["publishedAt"]) if row["publishedAt"] else None,
            "status": ArticleStatus.DONE, "failure_reason": "", "doc": doc,
            "matched_by": matched_by,
            "distance": row["distance"] if not moved else None,
            "similarity": row["similarity"] if not moved else None,
            "title_fp": _unsigned(row["titleFp"]) or None,
            "content_fp": _unsigned(row["contentFp"]),
            "features": bytes(row["features"]), "processed_at": now,
        }
        if row["matchedNid"] and not moved:
            pending_matches.append((nid, row["matchedNid"]))
        previous = (state[1] or "") if state is not None else ""
        if previous != target[nid]:
            moves.append((nid, target[nid], previous))
        if state is None:
            new.append(Article(nid=nid, received_at=now, **fields))
        else:
            article = Article(pk=state[0], nid=nid, **fields)
            article.matched_article_id = None
            changed.append(article)
    Article.objects.bulk_create(new, batch_size=CHUNK)
    if changed:
        Article.objects.bulk_update(
            changed, [*_UPDATE_FIELDS, "matched_article"], batch_size=CHUNK)
    if new and new[0].pk is None:  # backends that do not return ids (older MySQL)
        by_nid = dict(Article.objects.filter(nid__in=[a.nid for a in new])
                      .values_list("nid", "id"))
        for article in new:
            article.pk = by_nid[article.nid]
    return new, len(changed)


def _link_matches(pending: list[tuple[str, str]], ids: dict[str, int]) -> None:
    updates = [Article(pk=ids[nid], matched_article_id=ids.get(other))
               for nid, other in pending if nid in ids]
    Article.objects.bulk_update(updates, ["matched_article"], batch_size=CHUNK)


def _membership_changes(moves: list[tuple[str, str, str]]) -> list[changes.Pending]:
    """The change log's rows of the articles whose docId the import changed."""
    keys: dict[str, int | None] = {}
    for chunk in _chunked([nid for nid, _d, _p in moves]):
        keys.update(Article.objects.filter(nid__in=chunk).values_list("nid", "api_key"))
    return [changes.membership(nid, doc_id, previous, keys.get(nid))
            for nid, doc_id, previous in moves]


def _refresh_docs(doc_ids: set[str], anchors: dict[str, str],
                  elected: list[changes.Pending]) -> tuple[int, int]:
    """Size, anchor and representative of each doc from its members; outbox rows; the
    changes of representative appended to ``elected``."""
    emptied = 0
    touched = 0
    for chunk in _chunked(sorted(doc_ids)):
        docs = {d.doc_id: d for d in Doc.objects.filter(doc_id__in=chunk)}
        members: dict[int, list[Article]] = {}
        for article in (
            Article.objects.filter(doc__in=docs.values(), status=ArticleStatus.DONE)
            .only("id", "nid", "doc", "hotness", "media", "received_at", "content_length",
                  "api_key")
        ):
            members.setdefault(article.doc_pk, []).append(article)  # type: ignore[arg-type]
        weights = election.media_weights(
            a.media for group in members.values() for a in group)
        changed: list[Doc] = []
        outbox: list[RepresentativeOutbox] = []
        for doc in docs.values():
            group = members.get(doc.pk, [])
            touched += 1
            was = doc.representative_id
            if not group:
                emptied += doc.size > 0
                doc.size, doc.anchor, doc.representative = 0, None, None
                doc.representative_pinned = False
            else:
                ids = {a.pk for a in group}
                earliest = min(group, key=lambda a: (a.received_at, a.pk))
                anchor = next((a for a in group if a.nid == anchors.get(doc.doc_id)), None)
                if anchor is not None:
                    doc.anchor = anchor
                elif doc.anchor_id not in ids:
                    doc.anchor = earliest
                if not (doc.representative_pinned and doc.representative_id in ids):
                    doc.representative_pinned = False
                    doc.representative = max(  # the online rule: complete copies only
                        election.complete(group), key=lambda a: election.score(a, weights))
                doc.size = len(group)
                doc.first_seen = min(doc.first_seen, earliest.received_at)
            if doc.representative is not None and doc.representative_id != was:
                elected.append(changes.representative(
                    doc.doc_id, doc.representative.nid, doc.representative.api_key_id))
            doc.rep_version += 1
            changed.append(doc)
            outbox.append(RepresentativeOutbox(doc_id=doc.doc_id, version=doc.rep_version))
        Doc.objects.bulk_update(
            changed, ["size", "anchor", "representative", "representative_pinned",
                      "rep_version", "first_seen"], batch_size=CHUNK)
        RepresentativeOutbox.objects.bulk_create(outbox, batch_size=CHUNK)
    return touched, emptied
