"""The docId a new article joins (fingerprints/rule/decision.py): ``decide`` over its
candidates, by direct verification against a doc's anchor."""

from dataclasses import replace

from fingerprints.rule import Candidate, EngineConfig, decide, extract, verify

from ..texts import OTHER, STORY, STORY_REPOST

CONFIG = EngineConfig()


def _candidate(article_id: int, doc: str, title: str, text: str, anchor: bool) -> Candidate:
    return Candidate(article_id, doc, extract(title, text), anchor)


def test_decide_prefers_the_title_rule_confirmed_by_content() -> None:
    new = extract("统计局：前两月工业生产稳中有升", STORY_REPOST)
    candidates = [
        _candidate(1, "doc-a", "统计局：前两月工业生产稳中有升", STORY, True),
        _candidate(2, "doc-b", "教育局部署开学工作", OTHER, True),
    ]
    decision = decide(new, candidates, CONFIG)
    assert decision is not None
    assert (decision.doc_key, decision.matched_by, decision.article_id) == ("doc-a", "title", 1)
    assert decision.similarity > 0.5


def test_decide_does_not_merge_a_shared_headline_with_different_content() -> None:
    new = extract("统计局发布最新数据", OTHER)
    candidates = [_candidate(1, "doc-a", "统计局发布最新数据", STORY, True)]
    assert decide(new, candidates, CONFIG) is None


def test_decide_breaks_ties_towards_the_oldest_doc_and_respects_cannot_link() -> None:
    new = extract("", STORY)
    candidates = [
        _candidate(9, "doc-new", "", STORY, True),
        _candidate(3, "doc-old", "", STORY, True),
    ]
    decision = decide(new, candidates, CONFIG)
    assert decision is not None and decision.doc_key == "doc-old"
    decision = decide(new, candidates, CONFIG, forbidden_docs=frozenset({"doc-old"}))
    assert decision is not None and decision.doc_key == "doc-new"


def test_decide_requires_similarity_to_the_anchor_not_just_a_member() -> None:
    # the member matches the new article, but the doc's anchor is a different story:
    # joining would chain two unrelated stories together.
    new = extract("", STORY)
    candidates = [
        _candidate(1, "doc-a", "", OTHER, True),
        _candidate(2, "doc-a", "", STORY, False),
    ]
    assert decide(new, candidates, CONFIG) is None


def test_decide_without_the_anchor_row_needs_the_anchorless_threshold() -> None:
    # the star rule cannot be checked without the doc's anchor row: the member found
    # must itself reach anchorless_threshold (0.99), whatever the language or level
    new = extract("", STORY)
    copy = _candidate(2, "doc-a", "", STORY, False)
    copy_p = verify(new, copy.features, CONFIG).probability
    assert copy_p >= CONFIG.anchorless_threshold
    assert decide(new, [copy], CONFIG) is not None
    # a title-only match (no bodies, one headline) reaches ~0.97: enough through the
    # doc's anchor, not without it
    title = "统计局：十月份工业生产稳中有升，同比增长百分之六"
    headline = extract(title, "")
    p = verify(headline, extract(title, ""), CONFIG).probability
    assert CONFIG.match_threshold <= p < CONFIG.anchorless_threshold
    assert decide(headline, [_candidate(3, "doc-b", title, "", True)], CONFIG) is not None
    alone = [_candidate(3, "doc-b", title, "", False)]
    assert decide(headline, alone, CONFIG) is None
    # the knob governs: at the pair's probability it admits, just above the copy's
    # it refuses the copy, and it never lowers the match threshold
    assert decide(headline, alone, replace(CONFIG, anchorless_threshold=p)) is not None
    above = replace(CONFIG, anchorless_threshold=min(1.0, copy_p + 1e-9))
    assert decide(new, [copy], above) is None
    assert decide(headline, alone, replace(CONFIG, anchorless_threshold=0.0,
                                           match_threshold=min(1.0, p + 1e-9))) is None
