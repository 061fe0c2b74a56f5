"""Read paths over the candidate stores: nothing here writes.

:func:`find_similar` answers ``POST /api/v1/similar`` (the docIds an article would
join, stored nowhere); :func:`pictures_like` answers ``/api/v1/images/similar`` (the
docIds showing a picture); :func:`related_docs` gives the editor's cluster page the other
docIds its members verify against (merge candidates).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import Q

from articles.images.hashes import stock_pictures
from articles.index import reindex
from articles.index.candidates import Indexes, IndexUnavailable, load_candidates
from articles.models import (
    ApiKey,
    Article,
    ArticleImage,
    ArticleStatus,
    Doc,
    EditorLink,
    ImageStatus,
)
from articles.tuning.boilerplate import active_boilerplate
from articles.tuning.state import active_config
from fingerprints.rule import EngineConfig, Features, content_probes, decide, extract_many
from fingerprints.rule.ids import url_hash
from fingerprints.rule.keys import query_keys
from fingerprints.rule.simhash import hamming
from fingerprints.rule.verification import verify


def find_similar(title: str, content: str, url: str | None = None, limit: int = 10,
                 reader: ApiKey | None = None) -> dict[str, Any]:
    """The docIds nearest to an article, without storing anything (POST /api/v1/similar);
    an article ``reader`` may not read (:meth:`ApiKey.reads`) is named by its docId only
    (``nid`` empty)."""
    config = active_config()
    feats = extract_many([(title, content)], config,
                         boilerplate=active_boilerplate())[0]
    indexes = Indexes.open(config, reindex.ensure_index())
    matches: dict[str, dict[str, Any]] = {}
    if url:
        hashed = url_hash(url)
        known = indexes.url_owners([hashed], indexes.urls.lookup([hashed]))[0]
        row = (
            Article.objects.filter(pk=int(known), doc__isnull=False)
            .values_list("nid", "doc__doc_id", "api_key_id").first()
            if known is not None else None
        )
        if row is not None:
            matches[row[1]] = {"docId": row[1], "nid": _readable(reader, row[0], row[2]),
                               "matchedBy": "url",
                               "distance": 0, "similarity": 1.0, "probability": 1.0,
                               "verified": True}
    hits = _index_hits(indexes, [feats], config)[0]
    nids = {pk: _readable(reader, nid, owner) for pk, nid, owner in
            Article.objects.filter(pk__in=list(hits)).values_list("id", "nid", "api_key_id")}
    candidates = load_candidates(hits)
    for cand in candidates:
        if cand.article_id not in hits:
            continue  # an anchor loaded for context, not an index hit
        rule, dist = hits[cand.article_id]
        if dist < 0:  # found through the key index
            dist = hamming(feats.content_fp, cand.features.content_fp)
        check = verify(feats, cand.features, config)
        entry: dict[str, Any] = {"docId": cand.doc_key, "nid": nids.get(cand.article_id, ""),
                 "matchedBy": rule, "distance": dist,
                 "similarity": round(max(check.similarity, check.containment), 4),
                 "probability": check.probability, "verified": check.ok}
        best = matches.get(cand.doc_key)
        if best is None or (entry["verified"], -entry["distance"]) > (
                best["verified"], -best["distance"]):
            matches[cand.doc_key] = entry
    decision = decide(feats, candidates, config)
    ordered = sorted(matches.values(), key=lambda m: (not m["verified"], m["distance"]))
    would_join = next((m["docId"] for m in ordered if m["matchedBy"] == "url"), None)
    return {"docId": would_join or (decision.doc_key if decision else None),
            "matches": ordered[:limit]}


def _index_hits(indexes: Indexes, feats: Sequence[Features], config: EngineConfig
                ) -> list[dict[int, tuple[str, int]]]:
    """For each article's features, what the content index (with its probes), the title
    index and the key index find: article id -> (rule, distance); distance -1 for a hit
    of the key index alone. Content and keys in one round trip each."""
    contents = indexes.content.query_probes(
        [[f.content_fp, *content_probes(f, config)] for f in feats], config.content_radius)
    keyed = indexes.keys.query_many([query_keys(f.keys) for f in feats])
    titled = [f.title_fp for f in feats if f.title_fp]
    found = iter(indexes.title.query_many(titled, config.title_radius) if titled else [])
    out = []
    for f, content_hits, key_hits in zip(feats, contents, keyed, strict=True):
        hits = {item_id: ("content", dist) for item_id, _fp, dist in content_hits}
        for item_id, _fp, dist in (next(found) if f.title_fp else ()):
            hits.setdefault(item_id, ("title", dist))
        for item_id in key_hits:
            hits.setdefault(item_id, ("content", -1))
        out.append(hits)
    return out


RELATED_MEMBERS = 20  # the hottest members of a doc whose matches are looked up


def related_docs(doc: Doc, limit: int = 5) -> list[dict[str, Any]]:
    """Other docIds that a member of ``doc`` verifies against (against one of their
    members), best first: merge candidates for an editor. An article joins one docId
    even when it also matches another, and a doc accepts a member only when it matches
    the doc's anchor (no chaining), so one story can end in two docIds (docs/engine.md,
    "The cascade"; docs/glossary.md, "star rule's split"). Docs holding an article
    cannot-linked to one of ``doc``'s (every member's links, not only the looked-up
    ones') are left out. Reads the index; stores nothing. Raises ``IndexUnavailable``
    when the index is being rebuilt."""
    config = active_config()
    members = list(
        Article.objects.filter(doc=doc, status=ArticleStatus.DONE, features__isnull=False)
        .order_by("-hotness", "id").values_list("nid", "features")[:RELATED_MEMBERS])
    if not members:
        return []
    generation = reindex.active_generation()
    if generation is None:
        raise IndexUnavailable("the index is being rebuilt")
    indexes = Indexes.open(config, generation)
    feats = [Features.from_bytes(bytes(features or b"")) for _nid, features in members]
    hits = _index_hits(indexes, feats, config)
    forbidden = EditorLink.objects.cannot_link_docs_of(
        Article.objects.filter(doc=doc).values_list("nid", flat=True))  # every member's
    candidates = {c.article_id: c for c in load_candidates(set().union(*hits))
                  if c.doc_key != doc.doc_id and c.doc_key not in forbidden}
    best: dict[str, dict[str, Any]] = {}
    for (nid, _f), mine, found in zip(members, feats, hits, strict=True):
        for cand in (candidates[i] for i in found if i in candidates):
            check = verify(mine, cand.features, config)
            similarity = max(check.similarity, check.containment)
            if check.ok and similarity > best.get(cand.doc_key, {}).get("similarity", -1.0):
                best[cand.doc_key] = {"doc_key": cand.doc_key, "member": nid,
                                      "other": cand.article_id, "reason": check.reason,
                                      "similarity": similarity}
    ranked = sorted(best.values(), key=lambda m: (-m["similarity"], m["doc_key"]))[:limit]
    docs = Doc.objects.select_related("representative").in_bulk(
        [m["doc_key"] for m in ranked], field_name="doc_id")
    nids = dict(Article.objects.filter(pk__in=[m["other"] for m in ranked])
                .values_list("id", "nid"))
    return [{**m, "doc": docs[m["doc_key"]], "other": nids.get(m["other"], "")}
            for m in ranked if m["doc_key"] in docs and docs[m["doc_key"]].size]



def _readable(reader: ApiKey | None, nid: str, owner_id: int | None) -> str:
    """``nid`` when ``reader`` (None: an internal caller) may read its article, else ""."""
    return nid if reader is None or reader.reads(owner_id) else ""


def pictures_like(hashes: Sequence[int], limit: int = 50, reader: ApiKey | None = None
                  ) -> dict[str, Any]:
    """The docIds whose articles show a picture one of whose hashes is within
    ``picture_bits`` of one of ``hashes`` (a picture's hashes: its own first, then its
    mirror image's and its regions', as ``picture_hashes(...).all()``; GET/POST
    /api/v1/images/similar): the picture index of the window, and MySQL for the
    identical hashes beyond it. Both hold every hash of each stored picture, so a
    mirrored, captioned or cropped copy is found. Closest first, then newest doc. Only the
    nids of articles ``reader`` may read are listed (:meth:`ApiKey.reads`)."""
    value = hashes[0]
    config = active_config()
    indexes = Indexes.open(config, reindex.ensure_index())
    distances: dict[int, int] = {}
    for query in dict.fromkeys(hashes):
        for article_id, _fp, distance in indexes.pictures.query(query, config.picture_bits):
            if distance <= config.picture_bits:
                distances[article_id] = min(distance, distances.get(article_id, 64))
    exact = Q()
    for column in ArticleImage.HASH_COLUMNS:
        exact |= Q(**{f"{column}__in": list(hashes)})
    for article_id in (ArticleImage.objects.filter(exact, status=ImageStatus.READ)
                       .values_list("article_id", flat=True)[:1000]):
        distances[article_id] = 0
    docs: dict[str, dict[str, Any]] = {}
    rows = (Article.objects.filter(pk__in=list(distances), status=ArticleStatus.DONE,
                                   doc__isnull=False)
            .values_list("id", "nid", "doc__doc_id", "doc__last_seen", "api_key_id")
            .order_by("id"))
    for article_id, nid, doc_id, last_seen, owner in rows:
        entry = docs.setdefault(doc_id, {"docId": doc_id, "distance": 64, "nids": [],
                                         "lastSeen": last_seen})
        entry["distance"] = min(entry["distance"], distances[article_id])
        if _readable(reader, nid, owner):
            entry["nids"].append(nid)
    ranked = sorted(docs.values(), key=lambda d: (d["distance"], -d["lastSeen"].timestamp()))
    stock = stock_pictures([value], [], config.boilerplate_min_docs)
    return {"hash": f"{value:016x}", "stock": value in stock, "pictureBits": config.picture_bits,
            "docs": [{k: v for k, v in d.items() if k != "lastSeen"} for d in ranked[:limit]],
            "more": max(0, len(ranked) - limit)}


def read_picture_hashes(url: str) -> tuple[int, ...]:
    """The hashes of the picture read at ``url`` (for any article), its own first; empty
    when none was read there."""
    image = ArticleImage.read_at(url).filter(phash__isnull=False).first()
    return () if image is None else image.hashes()
