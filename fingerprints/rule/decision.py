"""The docId decision: which doc a new article joins among its index candidates.

Every candidate is verified with the stored sketches (:mod:`fingerprints.rule.verification`), and
a doc is joined only through its anchor: membership is a star, never a chain.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from fingerprints.rule.config import EngineConfig
from fingerprints.rule.features import Features
from fingerprints.rule.keys import query_keys, stored_keys
from fingerprints.rule.match_model import Score
from fingerprints.rule.picture_evidence import nearest_picture
from fingerprints.rule.probes import block_masks, content_probes, content_reach
from fingerprints.rule.simhash import hamming
from fingerprints.rule.vector_model import VectorScore
from fingerprints.rule.verification import Verification, verify, verify_text
from fingerprints.rule.weight_bound import cannot_match

_RULES = ("title", "content", "picture")  # in the order decide tries them
_TEXT_RULES = _RULES[:2]  # an article without pictures: the picture rule finds nothing


@dataclass(frozen=True)
class Candidate:
    article_id: int
    doc_key: str  # the docId the candidate belongs to
    features: Features
    is_anchor: bool  # the doc's anchor: its founding (oldest) member


@dataclass(frozen=True)
class Match:
    """The engine's answer for one article: the doc it joins and why. (An editor's act
    on a doc is ``articles.models.Decision``; the two never share a name.)"""

    doc_key: str
    article_id: int  # the member whose fingerprint matched (the URL's owner for "url")
    matched_by: str  # "url", "title", "content" or "picture"
    distance: int  # Hamming distance of the compared fingerprints (title or content);
    # content: up to content_radius + probe_bits when found through a probe; picture:
    # the distance of the closest pair of picture hashes
    similarity: float  # verified shingle Jaccard with the doc's anchor (or the member)
    containment: float = 0.0
    reason: str = ""
    # the verification's comparisons and match weights (the anchor's, as similarity)
    score: Score | VectorScore | None = None

    @property
    def probability(self) -> float | None:
        return self.score.probability if self.score is not None else None


def decide(
    new: Features,
    candidates: Sequence[Candidate],
    config: EngineConfig = EngineConfig(),
    *,
    forbidden_docs: frozenset[str] = frozenset(),
) -> Match | None:
    """The docId ``new`` joins, or None for a new docId.

    A candidate doc is accepted only when ``new`` verifies directly against the doc's
    anchor *and* against the member that the index found (when that member is not the
    anchor). Membership is therefore a star around the anchor, never a chain.
    When the anchor row is missing, the member alone must verify with a match
    probability of at least ``config.anchorless_threshold`` (:func:`_strict`). The
    caller supplies the index hits plus, for each doc among them, the doc's anchor row
    (``is_anchor=True``).

    Title rule first (title fingerprints within ``config.title_k``), then content
    (within ``config.content_radius`` of ``new.content_fp`` or of one of its
    :func:`content_probes`, so candidates found through probes are accepted), then
    picture (a picture hash within ``config.picture_bits``: a candidate the picture
    index found; stock pictures removed by the caller); within a rule the highest
    verified similarity (max of Jaccard and containment) wins, ties
    going to the oldest doc (smallest anchor id). Docs in ``forbidden_docs`` (editor
    cannot-links) are never joined.
    """
    by_doc: dict[str, list[Candidate]] = {}
    for cand in candidates:
        if cand.doc_key in forbidden_docs:
            continue
        by_doc.setdefault(cand.doc_key, []).append(cand)

    strict = _strict(config)
    probes = content_probes(new, config)
    # new's keys as a set once, not once per member (shares_key)
    new_keys = frozenset(query_keys(new.keys)) if new.keys else frozenset()
    ranked: list[tuple[tuple[int, float, int], Match]] = []
    for doc_key, members in by_doc.items():
        if len(members) > 1:  # a doc is mostly one candidate (its anchor)
            members.sort(key=_article_id)
        anchor = next((c for c in members if c.is_anchor), None)
        doc_age = anchor.article_id if anchor else members[0].article_id
        found = _match_doc(new, doc_key, members, anchor, config, strict, probes,
                           new_keys=new_keys)
        if found is not None:
            rule_rank = _RULES.index(found.matched_by)
            score = max(found.similarity, found.containment)
            ranked.append(((rule_rank, -score, doc_age), found))
    if not ranked:
        return None
    return min(ranked, key=lambda item: item[0])[1]


def _article_id(candidate: Candidate) -> int:
    return candidate.article_id


def _match_doc(
    new: Features,
    doc_key: str,
    members: list[Candidate],
    anchor: Candidate | None,
    config: EngineConfig,
    strict: EngineConfig,
    probes: Sequence[int] = (),
    *,
    new_keys: frozenset[int],
) -> Match | None:
    # per member: its verification, or None when the pair cannot reach the match
    # threshold whatever the costly comparisons give (weight_bound: not verified)
    checked: dict[int, Verification | None] = {}
    # the picture rules need pictures on both sides: without, the text rules alone
    judge = verify if new.pictures else verify_text
    pictures = bool(new.pictures)

    def check(c: Candidate, cfg: EngineConfig) -> Verification | None:
        if c.article_id in checked:
            return checked[c.article_id]
        v = checked[c.article_id] = (
            None if cannot_match(new, c.features, cfg, pictures=pictures)
            else judge(new, c.features, cfg))
        return v

    rules = _RULES if new.pictures else _TEXT_RULES
    for rule in rules:
        for member in members:
            if rule == "title":
                distance = _title_distance(new, member, config)
            elif rule == "content":
                distance = _content_distance(new, member, config, probes, new_keys)
            else:
                distance = nearest_picture(new, member.features, config.picture_bits)
            if distance is None:
                continue
            v = _accepted_verification(member, anchor, config, strict, check)
            if v is not None:
                return Match(
                    doc_key, member.article_id, rule, distance, v.similarity, v.containment,
                    v.reason, v.score,
                )
    return None


def _title_distance(new: Features, member: Candidate, config: EngineConfig) -> int | None:
    """Title Hamming distance to ``member``, or None when the title rule cannot match it."""
    if not new.title_fp or not member.features.title_fp:
        return None
    distance = hamming(new.title_fp, member.features.title_fp)
    if distance > config.title_k:
        return None
    return distance


def _content_distance(
    new: Features, member: Candidate, config: EngineConfig, probes: Sequence[int],
    new_keys: frozenset[int],
) -> int | None:
    """Content Hamming distance to ``member``, or None when the content rule cannot match it.

    A member beyond ``content_radius`` still matches when one of the ``probes`` reaches
    it, or when it shares a key with ``new`` (fingerprints/stores/key_index.py: the key index
    found it); the distance reported stays the direct one.
    """
    stored = member.features
    if new_keys and stored.keys and not new_keys.isdisjoint(stored_keys(stored.keys)):
        return hamming(new.content_fp, stored.content_fp)  # shares_key, new_keys once
    if not new.content_fp or not stored.content_fp:
        return None
    distance = hamming(new.content_fp, stored.content_fp)
    if distance > config.content_radius and (
        not probes
        or content_reach(new, stored.content_fp, config, probes)
        > config.content_radius
    ):
        return None
    return distance


def proposes(new: Features, stored: Features, config: EngineConfig = EngineConfig()) -> bool:
    """Would the candidate search find ``stored`` for ``new`` and ``decide`` weigh it:
    a title within ``title_k``; a shared key; or the content fingerprint or one of its
    probes within ``content_radius`` *and* equal on one of the ``k + 1`` blocks (what a
    block index lookup returns)? A pair it would not weigh is never matched, whatever
    its verification says."""
    if _title_distance(new, Candidate(0, "", stored, True), config) is not None:
        return True
    if shares_key(new, stored):
        return True
    other = stored.content_fp
    if not new.content_fp or not other:
        return False
    masks = block_masks(config.k)
    return any(hamming(fp, other) <= config.content_radius
               and any(fp & mask == other & mask for mask in masks)
               for fp in (new.content_fp, *content_probes(new, config)))


def shares_key(new: Features, stored: Features) -> bool:
    """Would the key index find ``stored`` for ``new`` (one of new's keys is one of the
    keys ``stored`` is indexed under)?"""
    if not new.keys or not stored.keys:
        return False
    return not set(query_keys(new.keys)).isdisjoint(stored_keys(stored.keys))


def _accepted_verification(
    member: Candidate,
    anchor: Candidate | None,
    config: EngineConfig,
    strict: EngineConfig,
    check: Callable[[Candidate, EngineConfig], Verification | None],
) -> Verification | None:
    """The verification that admits ``member``'s doc, or None when the doc is refused.

    With an anchor, the anchor's verification is the one reported, but a non-anchor
    member must verify too (star membership); without one, the member alone must pass
    the stricter threshold. ``check`` gives None for a pair refused unverified.
    """
    if anchor is None:
        v = check(member, strict)
        return v if v is not None and v.ok else None
    v = check(anchor, config)
    if v is None or not v.ok:
        return None
    if member is not anchor:
        checked = check(member, config)
        if checked is None or not checked.ok:
            return None
    return v


@lru_cache(maxsize=64)
def _strict(config: EngineConfig) -> EngineConfig:
    """The configuration for a member whose doc anchor was not supplied: the match
    threshold raised to ``anchorless_threshold`` (made once per configuration:
    ``dataclasses.replace`` re-runs the validation). One probability, so it holds for
    every language and level, where raising the copy rule's boundaries alone would
    leave the CJK and word rules as loose as before."""
    return replace(config, match_threshold=max(config.match_threshold,
                                               config.anchorless_threshold))
