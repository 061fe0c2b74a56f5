"""The cluster page's read model (``/clusters/<docId>/``): each member with how it
compares to the representative (Hamming distance, verified similarity and containment),
its pictures, why the engine put it there, and the side-by-side comparison of one member
with the representative. Reads only; the view adds the page's history and forms.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from django.utils import timezone

from articles.editor.diff import shared_keywords, word_diff
from articles.editor.explain import RuleMatch, Waterfall, explain
from articles.images.shared import MemberPicture, member_pictures
from articles.models import Article, ArticleStatus, Doc, MatchedBy
from articles.templatetags.dashboard import http_url
from articles.tuning.state import active_config
from fingerprints.rule import EngineConfig, Features
from fingerprints.rule.simhash import hamming
from fingerprints.rule.verification import verify

MEMBER_FIELDS = (
    "id", "nid", "url", "title", "media", "hotness", "published_at", "received_at",
    "status", "doc", "matched_by", "matched_article", "distance", "similarity", "pinned",
    "features", "match_probability", "match_explanation",
)


def minute(moment: Any) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M") if moment else ""


@dataclass
class MemberRow:
    """One member on the cluster page, with what the template would otherwise compute
    per row (a 50-member page renders 50 of these)."""

    article: Article
    is_representative: bool
    rep_distance: int | None  # Hamming distance of the content fingerprints
    rep_similarity: float | None  # verified shingle Jaccard with the representative
    rep_containment: float | None
    is_compared: bool = False
    pictures: list[MemberPicture] = field(default_factory=list)
    # why the engine put it here (articles/editor/explain.py), and the doc's anchor it
    # was verified with when that one is on the page
    why: Waterfall | RuleMatch | None = None
    verified_with: str = ""

    @cached_property
    def link(self) -> str:
        """The crawled URL when it may be a link (absolute http or https), else ""."""
        return http_url(self.article.url)

    @cached_property
    def time(self) -> str:
        return minute(self.article.published_at or self.article.received_at)

    @cached_property
    def hotness(self) -> str:
        return f"{self.article.hotness:g}"


def _features(article: Article) -> Features | None:
    if not article.features:
        return None
    try:
        return Features.from_bytes(bytes(article.features))
    except ValueError:
        return None


def _member_rows(doc: Doc, members: list[Article], config: EngineConfig) -> list[MemberRow]:
    rep = next((m for m in members if m.pk == doc.representative_id), None)
    rep_features = _features(rep) if rep is not None else None
    rows = []
    for member in members:
        if member is rep:
            rows.append(MemberRow(member, True, 0, 1.0, 1.0))
            continue
        feats = _features(member)
        if feats is None or rep_features is None:
            rows.append(MemberRow(member, False, None, None, None))
            continue
        check = verify(feats, rep_features, config)
        rows.append(MemberRow(member, False, hamming(feats.content_fp, rep_features.content_fp),
                              check.similarity, check.containment))
    # The representative first, then the rest by hotness.
    rows.sort(key=lambda r: not r.is_representative)
    return rows


def comparison(doc: Doc, member: Article | None, config: EngineConfig) -> dict[str, Any]:
    """Context of the diff fragment: ``member`` against the doc's representative."""
    rep = doc.representative
    if member is None or rep is None or member.pk == rep.pk:
        return {"doc": doc, "compare": None}
    texts = {pk: (text, cleared is not None) for pk, text, cleared in
             Article.objects.filter(pk__in=[rep.pk, member.pk])
             .values_list("pk", "content", "body_cleared_at")}
    (rep_text, rep_gone), (member_text, member_gone) = (
        texts.get(rep.pk, ("", False)), texts.get(member.pk, ("", False)))
    return {
        "doc": doc,
        "rep": rep,
        "compare": member,
        "rep_body_gone": rep_gone,  # body retention cleared it (features kept)
        "member_body_gone": member_gone,
        # with one body gone there is nothing to compare: each side shown as it is
        "diff": (word_diff(rep_text, rep_text, config) if member_gone
                 else word_diff(member_text, member_text, config) if rep_gone
                 else word_diff(rep_text, member_text, config)),
        "title_diff": word_diff(rep.title, member.title, config),
        "keywords": shared_keywords(rep.title, rep_text, member.title, member_text,
                                    config=config),
    }


def cluster_members(doc: Doc, compare_nid: str = "") -> dict[str, Any]:
    """The page's member rows (the representative first, then by hotness), their
    pictures, and the comparison of the member named ``compare_nid`` (else the first
    one that is not the representative) with the representative."""
    members = list(
        Article.objects.filter(doc=doc, status=ArticleStatus.DONE).only(*MEMBER_FIELDS)
        .order_by("-hotness", "received_at", "id")
    )
    config = active_config()
    rows = _member_rows(doc, members, config)
    pictures = member_pictures(members, config.picture_bits)
    nids = {m.pk: m.nid for m in members}
    for row in rows:
        row.pictures = pictures.get(row.article.pk, [])
        row.why = explain(row.article.match_explanation, row.article.match_probability)
        # the engine verifies a new article against the doc's anchor (its founding
        # member): that is the pair the weights are of (an editor's placement or a URL
        # match names none)
        if row.article.matched_by not in (None, MatchedBy.EDITOR, MatchedBy.URL):
            row.verified_with = nids.get(doc.anchor_id or 0, "")
    others = [r.article for r in rows if not r.is_representative]
    member = next((a for a in others if a.nid == compare_nid), others[0] if others else None)
    for row in rows:
        row.is_compared = member is not None and row.article.pk == member.pk
    context = comparison(doc, member, config)
    context.update({
        "rows": rows,
        "picture_bits": config.picture_bits,
        "pictures_shared": any(p.shared_with for shown in pictures.values() for p in shown),
    })
    return context
