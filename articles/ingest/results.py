"""Result objects for the API (docs/api.md: nid, status, docId, duplicate, matchedBy, ...)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from articles.models import ApiKey, Article, ArticleImage, Doc


def load_articles(nids: Sequence[str]) -> list[Article]:
    if not nids:
        return []
    rows = {
        a.nid: a
        for a in Article.objects.select_related("doc", "doc__representative")
        .defer("content", "features", "doc__representative__content",
               "doc__representative__features")
        .filter(nid__in=list(nids))
    }
    return [rows[nid] for nid in nids if nid in rows]


def images_of(articles: Sequence[Article]) -> dict[str, list[dict[str, Any]]]:
    """The pictures of these articles as the API reports them, by nid (one query)."""
    out: dict[str, list[dict[str, Any]]] = {}
    rows = (ArticleImage.objects.filter(article__nid__in=[a.nid for a in articles])
            .order_by("position").values_list("article__nid", "url", "status", "reason",
                                              "width", "height"))
    for nid, url, status, reason, width, height in rows:
        out.setdefault(nid, []).append({
            "url": url, "status": status, "reason": reason or None,
            "width": width, "height": height})
    return out


def article_result(article: Article, images: list[dict[str, Any]] | None = None,
                   reader: ApiKey | None = None) -> dict[str, Any]:
    """The article's result; ``duplicateOf`` (the representative's nid) null when
    ``reader`` may not read the representative (:meth:`ApiKey.reads`)."""
    doc = article.doc
    rep = doc.representative if doc is not None else None
    if rep is not None and reader is not None and not reader.reads(rep.api_key_id):
        rep = None
    return {
        "nid": article.nid,
        "status": article.status,
        "docId": doc.doc_id if doc is not None else None,
        "duplicate": article.matched_by is not None,
        "matchedBy": article.matched_by,
        "duplicateOf": rep.nid if rep is not None else None,
        "distance": article.distance,
        "similarity": round(article.similarity, 4) if article.similarity is not None else None,
        "matchProbability": article.match_probability,
        "matchExplanation": article.match_explanation,
        "failureReason": article.failure_reason or None,
        "images": images or [],
    }


def _member(article: Article) -> dict[str, Any]:
    return {
        "nid": article.nid, "url": article.url, "title": article.title, "media": article.media,
        "hotness": article.hotness, "matchedBy": article.matched_by,
        "distance": article.distance, "similarity": article.similarity,
        "matchProbability": article.match_probability,
    }


def doc_result(doc: Doc, reader: ApiKey | None = None) -> dict[str, Any] | None:
    """The docId's result: its members (those ``reader`` may read, :meth:`ApiKey.reads`;
    ``size`` counts them all) — None when ``reader`` may read none of them."""
    members = [a for a in doc.members.defer("content", "features")
               .order_by("-hotness", "received_at", "id")
               if reader is None or reader.reads(a.api_key_id)]
    if not members:
        return None
    rep = doc.representative
    if rep is not None and reader is not None and not reader.reads(rep.api_key_id):
        rep = None
    return {
        "docId": doc.doc_id,
        "size": doc.size,
        "status": doc.status,
        "representative": _member(rep) if rep else None,
        "members": [_member(a) for a in members],
    }
