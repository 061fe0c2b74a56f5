"""The one cascade every engine calls (fingerprints/rule/cascade.py): url -> title ->
content -> new docId, with the anchor of every candidate doc added (no chaining)."""

from __future__ import annotations

from fingerprints.rule import URL_MATCH, Candidate, EngineConfig, cascade, extract, with_anchors

from ..texts import OTHER, STORY, STORY_REPOST

CONFIG = EngineConfig()


def _cand(article_id: int, doc_key: str, content: str, is_anchor: bool) -> Candidate:
    return Candidate(article_id, doc_key, extract("", content), is_anchor)


def _no_anchors(_doc_key: str) -> tuple[Candidate, ...]:
    return ()


def test_a_known_url_wins_before_any_text_is_compared() -> None:
    owner = _cand(4, "doc-url", OTHER, True)
    match = cascade(extract("", STORY), url_owner=owner, hits=[_cand(1, "doc-a", STORY, True)],
                    anchors_of=_no_anchors, config=CONFIG,
                    forbidden_docs=frozenset({"doc-url"}))
    assert match is not None
    assert (match.doc_key, match.article_id, match.matched_by, match.distance,
            match.similarity) == ("doc-url", 4, URL_MATCH, 0, 1.0)


def test_without_a_url_the_verified_hit_decides_and_forbidden_docs_veto_it() -> None:
    new = extract("", STORY_REPOST)
    hits = [_cand(1, "doc-a", STORY, True)]
    match = cascade(new, url_owner=None, hits=hits, anchors_of=_no_anchors, config=CONFIG)
    assert match is not None and match.doc_key == "doc-a" and match.matched_by == "content"
    assert cascade(new, url_owner=None, hits=hits, anchors_of=_no_anchors, config=CONFIG,
                   forbidden_docs=frozenset({"doc-a"})) is None


def test_no_hit_founds_a_new_doc_without_asking_for_anchors() -> None:
    asked: list[str] = []

    def anchors(doc_key: str) -> tuple[Candidate, ...]:
        asked.append(doc_key)
        return ()

    assert cascade(extract("", STORY), url_owner=None, hits=[], anchors_of=anchors,
                   config=CONFIG) is None
    assert asked == []


def test_the_anchor_of_a_hit_doc_is_added_and_holds_the_star() -> None:
    # the hit is a copy, but its doc's anchor is another story: no chaining
    member = _cand(2, "doc-a", STORY, False)
    anchor = _cand(1, "doc-a", OTHER, True)
    assert cascade(extract("", STORY), url_owner=None, hits=[member],
                   anchors_of=lambda key: (anchor,), config=CONFIG) is None
    # the same member under an anchor that is the story: joined
    good = _cand(1, "doc-a", STORY, True)
    match = cascade(extract("", STORY), url_owner=None, hits=[member],
                    anchors_of=lambda key: (good,), config=CONFIG)
    assert match is not None and match.doc_key == "doc-a"


def test_with_anchors_keeps_hits_once_and_adds_each_docs_anchor_once() -> None:
    a1, a2 = _cand(1, "a", STORY, True), _cand(2, "a", STORY, False)
    b3 = _cand(3, "b", OTHER, False)
    anchors = {"a": (a1,), "b": (_cand(0, "b", OTHER, True),)}
    out = with_anchors([a2, b3, a2], lambda key: anchors[key])
    assert [c.article_id for c in out] == [2, 3, 1, 0]
    assert [c.article_id for c in with_anchors([a1, a2], lambda key: anchors[key])] == [1, 2]
