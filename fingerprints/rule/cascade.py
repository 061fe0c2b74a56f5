"""The url -> title -> content cascade: the one place the docId rule is written.

Every engine calls :func:`cascade` once per article, in arrival order: online
assignment (``articles.ingest.assign``, against the Redis indexes and MySQL), the
in-memory replay (:mod:`fingerprints.batch.replay`, which the Spark job runs inside
each component) and the benchmarks' runner (``bench/common.run_engine``). What differs
between them is only where the candidates come from (a store of candidates); what is
done with them is here:

1. the article's canonical URL is already known -> the URL owner's docId
   (``matched_by="url"``, distance 0, similarity 1);
2. else the index hits plus the anchor of every doc among them go to
   :func:`~fingerprints.rule.decision.decide` (title rule, then content; a doc is
   joined only through its anchor, never by chaining);
3. else ``None``: the article founds a new docId (it becomes that doc's anchor).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from fingerprints.rule.config import EngineConfig
from fingerprints.rule.decision import Candidate, Match, decide
from fingerprints.rule.features import Features

URL_MATCH = "url"


def with_anchors(hits: Iterable[Candidate],
                 anchors_of: Callable[[str], Iterable[Candidate]]) -> list[Candidate]:
    """``hits`` (in their order, each article once) followed by the anchor of every doc
    among them that is not a hit itself: ``decide`` accepts a doc only through its
    anchor (no chaining), so it needs each candidate doc's anchor row."""
    out: list[Candidate] = []
    seen: set[int] = set()
    docs: dict[str, None] = {}
    for cand in hits:
        if cand.article_id not in seen:
            seen.add(cand.article_id)
            out.append(cand)
            docs.setdefault(cand.doc_key)
    for doc_key in docs:
        for anchor in anchors_of(doc_key):
            if anchor.article_id not in seen:
                seen.add(anchor.article_id)
                out.append(anchor)
    return out


def cascade(
    new: Features,
    *,
    url_owner: Candidate | None,
    hits: Iterable[Candidate],
    anchors_of: Callable[[str], Iterable[Candidate]],
    config: EngineConfig,
    forbidden_docs: frozenset[str] = frozenset(),
) -> Match | None:
    """The doc ``new`` joins, or ``None`` for a new docId.

    ``url_owner``: the earliest article with the same canonical URL, when there is one
    (the caller passes ``None`` for the article itself). ``hits``: what the candidate
    stores found (content fingerprint and its probes, title fingerprint, exact-match
    keys). ``anchors_of(doc_key)``: that doc's anchor row(s). ``forbidden_docs``: docs an
    editor cannot-linked to this article; they veto index matches, not the URL rule,
    which is a hard rule and comes first."""
    if url_owner is not None:
        return Match(doc_key=url_owner.doc_key, article_id=url_owner.article_id,
                     matched_by=URL_MATCH, distance=0, similarity=1.0)
    candidates = with_anchors(hits, anchors_of)
    if not candidates:
        return None
    return decide(new, candidates, config, forbidden_docs=forbidden_docs)
