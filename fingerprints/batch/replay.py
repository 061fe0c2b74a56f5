"""The in-process batch engine: a whole corpus in arrival order -> docIds.

The online engine (``articles.ingest.assign``) gives each article, in arrival order, the
docId chosen by the url -> title -> content cascade against everything processed
before it: same canonical URL as an earlier article -> that article's docId; else
:func:`fingerprints.rule.decide` over the index hits (content fingerprints within
``k``, title fingerprints within ``title_k``) plus the anchor of every hit's doc;
else a new docId named after the founding article (:func:`make_doc_id`).

:class:`Replayer` is that rule with in-memory indexes instead of Redis and MySQL,
and :func:`run` replays a whole corpus through it. The Spark job
(:mod:`fingerprints.batch.spark`) runs the same :class:`Replayer` inside each connected
component of candidate pairs; :func:`candidate_components` is the in-memory version
of that partition, used by the tests. Nothing here imports Django or Spark.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fingerprints.batch.unionfind import UnionFind
from fingerprints.rule import (
    Candidate,
    EngineConfig,
    Features,
    cascade,
    content_probes,
    decision,
    extract_many,
)
from fingerprints.rule.features import field_values
from fingerprints.rule.ids import make_doc_id, unused_doc_id, url_hash
from fingerprints.rule.kernel import kernel
from fingerprints.rule.keys import query_keys, stored_keys
from fingerprints.rule.picture_evidence import PictureStories, stock_among, without_stock
from fingerprints.rule.verification import frozen_made
from fingerprints.stores.block_index import MemoryBlockIndex
from fingerprints.stores.key_index import MemoryKeyIndex

__all__ = [
    "Assignment",
    "BatchResult",
    "DocSummary",
    "Item",
    "Replayer",
    "write_result",
    "candidate_components",
    "doc_ids_for",
    "make_doc_id",
    "prepare",
    "read_jsonl",
    "read_jsonl_texts",
    "run",
    "url_hash",
]

DEFAULT_CONFIG = EngineConfig()


@dataclass(frozen=True)
class Item:
    """One article as the batch sees it: its arrival position and features."""

    seq: int  # arrival order: smaller arrived first (the online engine's article id)
    nid: str
    features: Features
    url_hash: int | None = None
    hotness: float = 0.0
    media: str = ""


@dataclass(frozen=True)
class Assignment:
    seq: int
    nid: str
    anchor: int  # seq of the doc's founding article (its anchor)
    matched_by: str | None  # "url", "title", "content", or None for a anchor
    matched_seq: int | None
    distance: int | None
    similarity: float | None


@dataclass(frozen=True)
class DocSummary:
    doc_id: str
    anchor_nid: str
    representative_nid: str
    size: int
    anchor_seq: int


def _item(seq: int, nid: str, features: Features, url_hash: int | None, hotness: float,
          media: str) -> Item:
    """``Item(seq, nid, ...)`` without its ``__init__`` (:func:`frozen_made`): a frozen
    dataclass's sets each field through ``object.__setattr__``, a call each (about 11
    thousand instructions an ``Item``, made once an article). The same object."""
    return frozen_made(Item, {"seq": seq, "nid": nid, "features": features,
                              "url_hash": url_hash, "hotness": hotness, "media": media})


def _assignment(seq: int, nid: str, anchor: int, matched_by: str | None,
                matched_seq: int | None, distance: int | None, similarity: float | None
                ) -> Assignment:
    """``Assignment(...)`` as :func:`_item` makes an ``Item``."""
    return frozen_made(Assignment, {
        "seq": seq, "nid": nid, "anchor": anchor, "matched_by": matched_by,
        "matched_seq": matched_seq, "distance": distance, "similarity": similarity})


def _candidate(article_id: int, doc_key: str, features: Features, is_anchor: bool
               ) -> Candidate:
    """``Candidate(...)`` (the rule's) as :func:`_item` makes an ``Item``."""
    return frozen_made(Candidate, {"article_id": article_id, "doc_key": doc_key,
                                   "features": features, "is_anchor": is_anchor})


def _doc_summary(doc_id: str, anchor_nid: str, representative_nid: str, size: int,
                 anchor_seq: int) -> DocSummary:
    """``DocSummary(...)`` as :func:`_item` makes an ``Item``."""
    return frozen_made(DocSummary, {
        "doc_id": doc_id, "anchor_nid": anchor_nid, "representative_nid": representative_nid,
        "size": size, "anchor_seq": anchor_seq})


@dataclass
class BatchResult:
    assignments: list[Assignment]  # in arrival order
    doc_ids: dict[int, str]  # anchor seq -> docId
    docs: list[DocSummary]
    stats: dict[str, Any] = field(default_factory=dict)

    def mapping(self) -> dict[str, str]:
        """nid -> docId."""
        return {a.nid: self.doc_ids[a.anchor] for a in self.assignments}

    def partition(self) -> set[frozenset[str]]:
        """The clusters as sets of nids (order- and name-independent, for comparisons)."""
        groups: dict[int, set[str]] = {}
        for a in self.assignments:
            groups.setdefault(a.anchor, set()).add(a.nid)
        return {frozenset(g) for g in groups.values()}


# --- the online rule, in memory --------------------------------------------------


class Replayer:
    """Assign articles one at a time, in arrival order, exactly as the online engine.

    Indexes are keyed by *distinct* fingerprint; under each fingerprint only the
    earliest article per (doc, features) is kept as a candidate (features by a number
    given to each distinct value once: a tuple of two ints hashes far faster than one
    holding a whole :class:`Features`). A later member of
    the same doc with identical features can never be the member ``decide`` picks
    (the earlier one has the same distances and verifications and comes first), so
    this changes no decision, and a bucket of thousands of identical copies costs one
    candidate instead of thousands.
    """

    def __init__(self, config: EngineConfig = DEFAULT_CONFIG, *,
                 record_pairs: bool = False) -> None:
        self.config = config
        # (candidate seq, item seq) of every candidate an item was verified against, when
        # asked (the unlabelled pairs the match model's EM learns from)
        self.pairs: list[tuple[int, int]] | None = [] if record_pairs else None
        self._content = MemoryBlockIndex(config.k)
        self._title = MemoryBlockIndex(config.title_k)
        self._by_content: dict[int, dict[tuple[int, int], int]] = {}
        self._by_title: dict[int, dict[tuple[int, int], int]] = {}
        # each distinct features value's number (_number)
        self._feature_numbers: dict[tuple[int, int, int], list[tuple[Features, int]]] = {}
        self._distinct_features = 0
        self._urls: dict[int, int] = {}
        self._keys = MemoryKeyIndex()
        self._pictures = MemoryBlockIndex(config.picture_k)
        self._by_picture: dict[int, list[int]] = {}  # picture hash -> items showing it
        self._stories = PictureStories()
        self.anchor_of: dict[int, int] = {}  # seq -> anchor seq of its doc
        # seq -> the article as a candidate: made once, as a hit it comes back many times
        self._candidates: dict[int, Candidate] = {}
        # doc key -> its anchor's candidate (a doc key is its anchor's seq as a str)
        self._anchors: dict[str, Candidate] = {}
        self._last = -1

    def add(self, item: Item) -> Assignment:
        seq, feats = item.seq, item.features
        if seq <= self._last:
            raise ValueError(f"items must come in increasing seq order: {seq} after "
                             f"{self._last}")
        self._last = seq
        assignment = self._assign(item)
        anchor = assignment.anchor
        self.anchor_of[seq] = anchor
        # the members of a doc share its anchor's doc key (one str per doc)
        doc_key = str(seq) if anchor == seq else self._candidates[anchor].doc_key
        candidate = self._candidates[seq] = _candidate(seq, doc_key, feats, anchor == seq)
        if anchor == seq:
            self._anchors[doc_key] = candidate
        key = (anchor, self._number(feats))
        # zero too: the online index holds it
        _index(self._content, self._by_content, feats.content_fp, key, seq)
        if feats.title_fp:
            _index(self._title, self._by_title, feats.title_fp, key, seq)
        if item.url_hash is not None:
            self._urls.setdefault(item.url_hash, seq)
        if feats.keys:
            self._keys.add(seq, stored_keys(feats.keys))
        if feats.pictures:
            self._add_pictures(item, anchor)
        return assignment

    def _number(self, feats: Features) -> int:
        """The number of ``feats``' value: the same number exactly for equal features
        (their fields' values equal, :func:`field_values`), numbered in order of first
        appearance. Looked up by three of the fields (equal features have them equal),
        the whole values compared only among the features that share them (a copy's):
        a hash of every field (a tuple of 19 values, its bytes and the sketch's
        dataclass ``__hash__``, each bytes value hashed once) cost 6.5 thousand instructions
        an item more on Xinhua."""
        numbers = self._feature_numbers
        digest = (feats.content_fp, feats.title_fp, feats.token_count)
        same = numbers.get(digest)
        if same is None:
            number = self._distinct_features
            numbers[digest] = [(feats, number)]
        else:
            values = field_values(feats)
            for other, number in same:
                if other is feats or field_values(other) == values:
                    return number
            number = self._distinct_features
            same.append((feats, number))
        self._distinct_features = number + 1
        return number

    def _add_pictures(self, item: Item, anchor: int) -> None:
        stock = self._stock(item.features.pictures)
        for picture in item.features.pictures:
            if picture not in stock:  # as online: stock pictures are not indexed
                if picture not in self._by_picture:
                    self._pictures.add(picture, picture)
                self._by_picture.setdefault(picture, []).append(item.seq)
        self._stories.add(item.features.pictures, str(anchor))

    def _with_pictures(self, feats: Features, members: set[int]
                       ) -> tuple[Features, list[Candidate], frozenset[int]]:
        """As online, for an article with pictures: the picture index's hits join the
        candidates, and stock pictures are no evidence on either side."""
        stock = self._stock(feats.pictures)
        members = members | self._picture_hits(feats, stock)
        candidates = [self._candidate(member) for member in sorted(members)]
        stock |= self._stock(p for c in candidates for p in c.features.pictures)
        return (without_stock(feats, stock),
                [replace(c, features=without_stock(c.features, stock)) for c in candidates],
                stock)

    def _picture_hits(self, feats: Features, stock: frozenset[int]) -> set[int]:
        """As online: the picture index's hits for the non-stock pictures."""
        found: set[int] = set()
        for picture in feats.pictures:
            if picture not in stock:
                for near, _value, _distance in self._pictures.query(
                        picture, self.config.picture_bits):
                    found.update(self._by_picture[near])
        return found

    def _stock(self, pictures: Iterable[int]) -> frozenset[int]:
        """The stock pictures among ``pictures`` (seen in boilerplate_min_docs stories
        before the item being assigned): as online, articles/images/hashes.py."""
        pictures = list(pictures)
        return stock_among(pictures, self._stories.counts(pictures),
                           self.config.boilerplate_min_docs)

    def _assign(self, item: Item) -> Assignment:
        seq, feats = item.seq, item.features
        known = self._urls.get(item.url_hash) if item.url_hash is not None else None
        members = self._members(feats)
        if known is None and not members and not feats.pictures:
            return _assignment(seq, item.nid, seq, None, None, None, None)  # as cascade
        stock: frozenset[int] = frozenset()
        by_seq = self._candidates
        if feats.pictures:
            feats, candidates, stock = self._with_pictures(feats, members)
        else:
            candidates = [by_seq[member] for member in sorted(members)]
        if self.pairs is not None:
            self.pairs.extend((c.article_id, seq) for c in candidates)

        anchors = self._anchors

        def anchors_of(doc_key: str) -> tuple[Candidate]:
            anchor = anchors[doc_key]
            if stock and anchor.features.pictures:
                anchor = replace(anchor, features=without_stock(anchor.features, stock))
            return (anchor,)

        if known is None:
            candidates = self._possible(feats, candidates, anchors_of)
        match = cascade(
            feats, url_owner=by_seq[known] if known is not None else None,
            hits=candidates, anchors_of=anchors_of, config=self.config)
        if match is None:
            return _assignment(seq, item.nid, seq, None, None, None, None)
        return _assignment(seq, item.nid, int(match.doc_key), match.matched_by,
                           match.article_id, match.distance, match.similarity)

    def _possible(self, feats: Features, candidates: list[Candidate],
                  anchors_of: Callable[[str], tuple[Candidate]]) -> list[Candidate]:
        """``candidates`` less the docs whose anchor cannot match ``feats``
        (``decision.cannot_match``, the early exit ``decide`` itself takes): ``decide``
        accepts a doc only when its anchor verifies, so it refuses those docs whatever
        their members give, and the same decision is made without its distances and
        loops over their members (a batch learns no boilerplate: thousands of docs
        share only a footer's keys with an article). The anchor is the one ``decide``
        would get: the hit itself when it is one, else ``anchors_of``'s."""
        hits = {c.doc_key: c for c in candidates if c.is_anchor}  # the anchors among them
        config, pictures = self.config, bool(feats.pictures)
        refused: dict[str, bool] = {}
        kept = []
        for candidate in candidates:
            doc_key = candidate.doc_key
            out = refused.get(doc_key)
            if out is None:
                anchor = hits.get(doc_key) or anchors_of(doc_key)[0]
                out = refused[doc_key] = decision.cannot_match(
                    feats, anchor.features, config, pictures=pictures)
            if not out:
                kept.append(candidate)
        return kept

    def _members(self, feats: Features) -> set[int]:
        """The index hits of ``feats``: content (and probes), title and key indexes.

        A (doc, features) key lives under one content fingerprint and one title
        fingerprint (those of its features), and both maps hold the same member for it
        (the first item added with it), so the hits are the union of the maps' members."""
        config = self.config
        # as online: every key hit
        members = self._keys.query(query_keys(feats.keys)) if feats.keys else set()
        # As online: every item within the candidate radius among those sharing a block
        # with the content fingerprint or one of its probes (engine.content_probes).
        by_content = self._by_content
        for fp in self._content.query_union([feats.content_fp, *content_probes(feats, config)],
                                            config.content_radius):
            members.update(by_content[fp].values())
        if feats.title_fp:
            by_title = self._by_title
            for fp, _value, _distance in self._title.query(feats.title_fp,
                                                           config.title_radius):
                members.update(by_title[fp].values())
        return members

    def _candidate(self, member: int) -> Candidate:
        """A replayed article as a candidate: its doc is named by its anchor's seq."""
        return self._candidates[member]


def _index(index: MemoryBlockIndex, by_fp: dict[int, dict[tuple[int, int], int]], fp: int,
           key: tuple[int, int], seq: int) -> None:
    """``seq`` as the candidate of ``key`` under ``fp`` unless an earlier item is. A
    fingerprint is in the block index exactly when it has a candidate map: the index is
    written once per distinct fingerprint."""
    found = by_fp.get(fp)
    if found is None:
        index.add(fp, fp)
        by_fp[fp] = {key: seq}
    elif key not in found:
        found[key] = seq


def replay(items: Iterable[Item], config: EngineConfig = DEFAULT_CONFIG) -> list[Assignment]:
    """Assignments of ``items`` (sorted here by seq) through one :class:`Replayer`."""
    replayer = Replayer(config)
    return [replayer.add(item) for item in sorted(items, key=lambda i: i.seq)]


# --- inputs --------------------------------------------------------------------------


#: The record fields whose UTF-8 the reading keeps for the writing (``write_result``'s
#: text columns, in this order).
TEXT_FIELDS = ("title", "content")


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Records of a JSON-lines file (blank lines skipped): :func:`read_jsonl_texts`'s."""
    return read_jsonl_texts(path)[0]


def read_jsonl_texts(path: str | Path
                     ) -> tuple[list[dict[str, Any]], list[tuple[bytes, ...] | None]]:
    """Records of a JSON-lines file (blank lines skipped), and for each the UTF-8 of its
    :data:`TEXT_FIELDS` as :func:`write_result` writes them, or None.

    The kernel reads a line of an object of strings, numbers, true, false and null from
    the file's bytes (``json_record``: the dict ``json.loads`` gives, and the texts'
    UTF-8 as the file has them, so that the writing does not encode them again); any
    other line, and every line without the kernel, is decoded and read by
    ``json.loads``'s scanner: its value or its error, its texts None. The file is cut
    at its line feeds (a text file's line reader scans every character again for
    carriage returns); its lines are those of a text file's iteration, a lone carriage
    return as well."""
    data = Path(path).read_bytes()
    if b"\r" in data:  # universal newlines, as a text file's reader translates them
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    record_of = kernel.json_record if kernel is not None else None
    loads, scan, find = json.loads, _SCAN, data.find
    records: list[dict[str, Any]] = []
    texts: list[tuple[bytes, ...] | None] = []
    start, size = 0, len(data)
    while start < size:
        end_of_line = find(b"\n", start)
        if end_of_line < 0:
            end_of_line = size
        if end_of_line > start:
            found = record_of(data, start, end_of_line, TEXT_FIELDS) if record_of else None
            if found is not None:
                records.append(found[0])
                texts.append(found[1])
            else:
                # json.loads's scanner without its Python around it: a line that is one
                # value and nothing else; any other line is json.loads's, its value or
                # its error, or skipped when blank
                line = data[start:end_of_line].decode("utf-8")
                try:
                    record, end = scan(line, 0)
                except (StopIteration, ValueError):
                    end = -1
                if end != len(line):
                    if line.isspace():
                        start = end_of_line + 1
                        continue
                    record = loads(line)
                records.append(record)
                texts.append(None)
        start = end_of_line + 1
    return records, texts


#: the scanner json.loads calls (a default decoder's, as json.loads's own)
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # (set in __init__)


def _item_chunk(args: tuple[int, list[dict[str, Any]], EngineConfig, frozenset[int]]
                ) -> list[Item]:
    start, records, config, boilerplate = args
    features = extract_many(
        [(r.get("title") or "", r.get("content") or "") for r in records], config,
        boilerplate=boilerplate,
    )
    return [
        _item(
            start + i,
            str(r["nid"]),
            with_record_pictures(feats, r) if r.get("pictures") else feats,
            url_hash(r["url"]) if r.get("url") else None,
            float(r.get("hotness") or 0.0),
            str(r.get("media") or ""),
        )
        for i, (r, feats) in enumerate(zip(records, features, strict=True))
    ]


def record_pictures(record: Mapping[str, Any]) -> tuple[int, ...]:
    """The picture hashes a batch record carries (``pictures``: 64-bit perceptual hashes
    as integers or 16 hex digits, those the online engine stored for the article), sorted
    and distinct: what the online engine puts in ``Features.pictures``."""
    values = record.get("pictures") or ()
    if isinstance(values, (str, bytes)):
        raise ValueError("pictures must be a list of 64-bit hashes")
    out = set()
    for value in values:
        number = int(value, 16) if isinstance(value, str) else int(value)
        out.add(number & (2**64 - 1))  # a signed 64-bit value (Spark LongType) too
    return tuple(sorted(out))


def with_record_pictures(features: Features, record: Mapping[str, Any]) -> Features:
    """``features`` with the record's picture hashes (:func:`record_pictures`)."""
    pictures = record_pictures(record)
    return replace(features, pictures=pictures) if pictures else features


def prepare(
    records: Iterable[Mapping[str, Any]],
    config: EngineConfig = DEFAULT_CONFIG,
    *,
    workers: int = 1,
    chunk: int = 2000,
    boilerplate: frozenset[int] = frozenset(),
) -> tuple[list[Item], int]:
    """Items in arrival order (``seq`` = position) and how many records repeated an
    earlier nid (skipped: the first record of a nid wins). ``workers`` > 1 extracts
    features in that many processes (fingerprints do not depend on the process).
    ``boilerplate``: the clause hashes removed from bodies (the online engine's learned
    list, ``articles.tuning.boilerplate.active_boilerplate``); fixed for the run."""
    unique: list[dict[str, Any]] = []
    seen: set[str] = set()
    repeated = 0
    for record in records:
        nid = str(record["nid"])
        if nid in seen:
            repeated += 1
            continue
        seen.add(nid)
        # read, never changed: a dict as it is (a copy an article cost more than its key)
        unique.append(record if type(record) is dict else dict(record))
    jobs = [(i, unique[i : i + chunk], config, boilerplate)
            for i in range(0, len(unique), chunk)]
    if workers > 1 and len(jobs) > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_item_chunk, jobs)
    else:
        parts = [_item_chunk(job) for job in jobs]
    return [item for part in parts for item in part], repeated


# --- results ----------------------------------------------------------------------


def doc_ids_for(anchors: Iterable[tuple[int, str]]) -> dict[int, str]:
    """anchor seq -> docId: ``make_doc_id(anchor nid)``, salted ``#1``, ``#2``... only
    when an earlier anchor already holds that docId (as the online engine salts)."""
    taken: set[str] = set()
    out: dict[int, str] = {}
    for seq, nid in sorted(anchors):
        doc_id = make_doc_id(nid)
        if doc_id in taken:  # unused_doc_id's salts, only on a clash
            doc_id = unused_doc_id(nid, taken.__contains__)
        taken.add(doc_id)
        out[seq] = doc_id
    return out


def representative_key(item: Item, weights: Mapping[str, float] | None = None
                       ) -> tuple[float, int]:
    """Higher is better: hotness x media weight, ties to the earliest."""
    weight = weights.get(item.media, 1.0) if weights else 1.0
    return (item.hotness * weight, -item.seq)


def summarize(
    items: Sequence[Item],
    assignments: Sequence[Assignment],
    media_weights: Mapping[str, float] | None = None,
) -> BatchResult:
    """Each doc's docId, size and representative (its best member by
    :func:`representative_key`), and the cluster statistics, from the ``assignments``
    of the ``items`` as :func:`replay` gives them: each doc's founder among them (its
    anchor: the member whose seq it is), every other member an article that joined it."""
    by_seq = {item.seq: item for item in items}
    sizes = Counter([a.anchor for a in assignments])
    # the representatives that are not their doc's founder: only the docs that others
    # joined are looked at (on a corpus, most docs have no other member)
    best: dict[int, tuple[tuple[float, int], Item]] = {}
    for a in [a for a in assignments if a.anchor != a.seq]:
        current = best.get(a.anchor)
        if current is None:
            founder = by_seq[a.anchor]
            current = (representative_key(founder, media_weights), founder)
        item = by_seq[a.seq]
        key = representative_key(item, media_weights)
        best[a.anchor] = (key, item) if key > current[0] else current
    anchors = sorted(sizes)
    nids = [by_seq[seq].nid for seq in anchors]
    doc_ids = doc_ids_for(zip(anchors, nids, strict=True))
    docs = [_doc_summary(doc_ids[f], nid, best[f][1].nid if f in best else nid, sizes[f], f)
            for f, nid in zip(anchors, nids, strict=True)]
    return BatchResult(list(assignments), doc_ids, docs, cluster_stats(sizes.values()))


def cluster_stats(sizes: Iterable[int]) -> dict[str, Any]:
    docs_of_size = Counter(sizes)  # a size -> how many docs have it
    histogram: Counter[str] = Counter()
    for size, docs in docs_of_size.items():
        histogram["1" if size == 1 else "2" if size == 2 else "3-4" if size <= 4
                  else "5-9" if size <= 9 else "10+"] += docs
    articles = sum(size * docs for size, docs in docs_of_size.items())
    count = docs_of_size.total()
    return {
        "articles": articles,
        "docs": count,
        "clusters": count - docs_of_size[1],
        "duplicates": articles - count,
        "largestCluster": max(docs_of_size, default=0),
        "sizeHistogram": dict(sorted(histogram.items())),
    }


def run(
    records: Iterable[Mapping[str, Any]],
    config: EngineConfig = DEFAULT_CONFIG,
    *,
    workers: int = 1,
    media_weights: Mapping[str, float] | None = None,
    boilerplate: frozenset[int] = frozenset(),
) -> BatchResult:
    """Deduplicate a corpus in this process: the online rule replayed in arrival order."""
    items, repeated = prepare(records, config, workers=workers, boilerplate=boilerplate)
    result = run_items(items, config, media_weights=media_weights)
    result.stats["repeatedNids"] = repeated
    return result


def run_items(
    items: Sequence[Item],
    config: EngineConfig = DEFAULT_CONFIG,
    *,
    media_weights: Mapping[str, float] | None = None,
) -> BatchResult:
    return summarize(items, replay(items, config), media_weights)


# --- output (same layout as the Spark job) ------------------------------------------


#: The ``articles/`` Parquet columns (Spark job and in-process engine alike).
ARTICLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("seq", "int64"), ("nid", "string"), ("docId", "string"), ("matchedBy", "string"),
    ("matchedNid", "string"), ("distance", "int32"), ("similarity", "double"),
    ("isAnchor", "bool"), ("isRepresentative", "bool"), ("urlHash", "int64"),
    ("titleFp", "int64"), ("contentFp", "int64"), ("features", "binary"), ("url", "string"),
    ("title", "string"), ("content", "string"), ("category", "string"), ("media", "string"),
    ("imageCount", "int64"), ("hotness", "double"), ("publishedAt", "string"),
)


def write_result(
    out_dir: str | Path,
    records: Sequence[Mapping[str, Any]],
    items: Sequence[Item],
    result: BatchResult,
    texts: Sequence[tuple[bytes, ...] | None] | None = None,
) -> None:
    """Write ``articles/`` and ``clusters/`` (Parquet, needs pyarrow), ``mapping.jsonl``
    and ``stats.json`` — the layout of :func:`fingerprints.batch.spark.run_job`, so that
    ``spark_dedup --import`` loads either. ``records`` are the input records by seq;
    ``texts``, when given, the UTF-8 of their :data:`TEXT_FIELDS` by seq as well
    (:func:`read_jsonl_texts`; a record's None: encoded here)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out_dir)
    (out / "articles").mkdir(parents=True, exist_ok=True)
    (out / "clusters").mkdir(parents=True, exist_ok=True)
    # Column by column, each a comprehension over the rows: a row at a time (a dict per
    # row, appended to 21 lists) cost as much as the replay's decisions.
    assignments = result.assignments
    by_seq = {item.seq: item for item in items}
    rows = [by_seq[a.seq] for a in assignments]
    row_records = [records[a.seq] for a in assignments]
    row_texts = [texts[a.seq] for a in assignments] if texts is not None else None
    feats = [item.features for item in rows]
    doc_ids = [result.doc_ids[a.anchor] for a in assignments]
    reps = {d.doc_id: d.representative_nid for d in result.docs}
    columns: dict[str, Any] = {
        "seq": [a.seq for a in assignments],
        "nid": [a.nid for a in assignments],
        "docId": doc_ids,
        "matchedBy": [a.matched_by for a in assignments],
        "matchedNid": [by_seq[a.matched_seq].nid if a.matched_seq is not None else None
                       for a in assignments],
        "distance": [a.distance for a in assignments],
        "similarity": [a.similarity for a in assignments],
        "isAnchor": [a.anchor == a.seq for a in assignments],
        "isRepresentative": [reps[doc_id] == a.nid
                             for a, doc_id in zip(assignments, doc_ids, strict=True)],
        # unsigned 64-bit values as the signed ones with the same bits (to_signed), by
        # viewing the unsigned Arrow array as int64
        "urlHash": pa.array([item.url_hash for item in rows], pa.uint64()).view(pa.int64()),
        "titleFp": pa.array([f.title_fp for f in feats], pa.uint64()).view(pa.int64()),
        "contentFp": pa.array([f.content_fp for f in feats], pa.uint64()).view(pa.int64()),
        "features": _joined([f.to_bytes() for f in feats], pa.binary()),
        "url": [str(r.get("url") or "") for r in row_records],
        "title": _joined(_utf8(row_records, row_texts, 0), pa.string()),
        "content": _joined(_utf8(row_records, row_texts, 1), pa.string()),
        "category": [str(r.get("category") or "") for r in row_records],
        "media": [item.media for item in rows],
        "imageCount": [int(r.get("imageCount") or 0) for r in row_records],
        "hotness": [item.hotness for item in rows],
        "publishedAt": [str(r["publishedAt"]) if r.get("publishedAt") else None
                        for r in row_records],
    }
    schema = pa.schema([(name, pa.type_for_alias(kind)) for name, kind in ARTICLE_COLUMNS])
    pq.write_table(pa.table(columns, schema=schema), out / "articles" / "part-00000.parquet")
    pq.write_table(pa.table({
        "docId": [d.doc_id for d in result.docs],
        "size": pa.array([d.size for d in result.docs], pa.int64()),
        "anchorNid": [d.anchor_nid for d in result.docs],
        "representativeNid": [d.representative_nid for d in result.docs],
        "anchorSeq": pa.array([d.anchor_seq for d in result.docs], pa.int64()),
    }), out / "clusters" / "part-00000.parquet")
    # the lines json.dumps({"nid": ..., "docId": ...}, ensure_ascii=False) writes: a nid
    # encoded by the function that JSONEncoder(ensure_ascii=False).encode calls for a
    # str, without its Python around it; a docId (make_doc_id's: hex digits and a
    # hyphen, nothing JSON escapes) is its own JSON string between quotes
    quote = json.encoder.encode_basestring
    with (out / "mapping.jsonl").open("w", encoding="utf-8") as mapping:
        mapping.write("".join([f'{{"nid": {quote(a.nid)}, "docId": "{doc_id}"}}\n'
                               for a, doc_id in zip(assignments, doc_ids, strict=True)]))
    (out / "stats.json").write_text(json.dumps(result.stats, indent=2, ensure_ascii=False))


def _utf8(records: Sequence[Mapping[str, Any]],
          texts: Sequence[tuple[bytes, ...] | None] | None, field: int) -> list[bytes]:
    """The UTF-8 of each record's ``TEXT_FIELDS[field]`` (a missing or empty value: b""),
    from ``texts`` where it has it."""
    name = TEXT_FIELDS[field]
    if texts is None:
        return [str(r.get(name) or "").encode() for r in records]
    return [utf8[field] if utf8 is not None else str(r.get(name) or "").encode()
            for r, utf8 in zip(records, texts, strict=True)]


def _joined(values: list[bytes], kind: Any) -> Any:
    """The Arrow array (``kind``: binary, or string for UTF-8 values) of ``values``
    without nulls, built on their bytes joined once: ``pa.array`` copies each value into
    a builder whose buffer grows by reallocation, a copy of all written so far each time
    (a fifth of the writing's copies, the texts' 10 MB on Xinhua). The same array."""
    import numpy as np
    import pyarrow as pa

    ends = np.cumsum([len(value) for value in values], dtype=np.int64)
    if len(ends) and ends[-1] >= 2**31:  # beyond 32-bit offsets: Arrow's own way
        return pa.array(values, kind)
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    offsets[1:] = ends
    return pa.Array.from_buffers(kind, len(values), [
        None, pa.py_buffer(offsets), pa.py_buffer(b"".join(values))], null_count=0)


# --- the partition the Spark job works in -------------------------------------------


def candidate_components(items: Sequence[Item], config: EngineConfig = DEFAULT_CONFIG
                         ) -> list[list[int]]:
    """Connected components (lists of seq) of the candidate graph: what the online index
    lookups can return — content fingerprints (zero included) sharing a pigeonhole block
    of ``k`` and within ``content_radius``, non-zero title fingerprints sharing a block
    of ``title_k`` and within ``title_radius``, a shared key (fingerprints/stores/key_index.py)
    — and the same canonical URL.

    Every online decision joins an article to a doc through one of these pairs (a
    URL hit, or an index hit in that doc), so every doc lies inside one component and
    replaying each component alone gives the online partition.
    """
    sets: UnionFind[int] = UnionFind(range(len(items)))
    union = sets.union

    for attr, k, radius, zero in (("content_fp", config.k, config.content_radius, True),
                                  ("title_fp", config.title_k, config.title_radius, False)):
        leader: dict[int, int] = {}
        for pos, item in enumerate(items):
            fp = getattr(item.features, attr)
            if fp or zero:
                union(pos, leader.setdefault(fp, pos))
            if attr == "content_fp":
                # A probe stands for its article like a second fingerprint: linking
                # it with everything near it is a superset of what its lookup returns.
                for probe in content_probes(item.features, config):
                    union(pos, leader.setdefault(probe, pos))
        index = MemoryBlockIndex(k)
        for fp in leader:
            index.add(fp, fp)
        for fp, pos in leader.items():
            for other, _value, _distance in index.query(fp, radius):
                union(pos, leader[other])
    _link_pictures(items, sets, config)
    first_url: dict[int, int] = {}
    for pos, item in enumerate(items):
        if item.url_hash is not None:
            union(pos, first_url.setdefault(item.url_hash, pos))
    _link_keys(items, sets)
    groups = [[items[pos].seq for pos in group] for group in sets.groups()]
    return sorted(groups, key=lambda g: g[0])


def _link_pictures(items: Sequence[Item], sets: UnionFind[int], config: EngineConfig) -> None:
    """The picture index: link articles whose picture hashes share a pigeonhole block of
    ``picture_k`` and are within ``picture_bits`` (stock ones too: a superset)."""
    leader: dict[int, int] = {}
    for pos, item in enumerate(items):
        for picture in item.features.pictures:
            sets.union(pos, leader.setdefault(picture, pos))
    index = MemoryBlockIndex(config.picture_k)
    for picture in leader:
        index.add(picture, picture)
    for picture, pos in leader.items():
        for other, _value, _distance in index.query(picture, config.picture_bits):
            sets.union(pos, leader[other])


def _link_keys(items: Sequence[Item], sets: UnionFind[int]) -> None:
    """The key index (fingerprints/stores/key_index.py): link each article with every article
    indexed under one of its keys."""
    by_key: dict[int, int] = {}
    for pos, item in enumerate(items):
        for key in stored_keys(item.features.keys):
            sets.union(pos, by_key.setdefault(key, pos))
    for pos, item in enumerate(items):
        for key in query_keys(item.features.keys):
            if key in by_key:
                sets.union(pos, by_key[key])
