"""The engine deciding with a model on the comparison vector (engine v4): ``verify`` and
``decide`` read ``EngineConfig.model``; the hard rules (canonical URL, cannot-link, the
star rule) hold; the explanation lists every comparison of the vector; raising the
threshold on a stream of crawled articles gives fewer duplicate pairs at every step."""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from fingerprints.rule import Candidate, EngineConfig, cascade, decide, extract, verify
from fingerprints.rule.comparison import COMPARISONS, compare_pair
from fingerprints.rule.config import model_from_dict
from fingerprints.rule.match_model import starting_model
from fingerprints.rule.vector_model import UNWEIGHED, VectorModel, shipped_vector_model
from fingerprints.rule.verification import explain_vector

from ..texts import BULLETIN_1, BULLETIN_2, OTHER, STORY, STORY_CUT, STORY_REPOST

ROOT = Path(__file__).resolve().parents[3]
VECTOR = EngineConfig(model=shipped_vector_model())


def test_a_vector_model_decides_copies_and_refuses_other_stories() -> None:
    story = extract("", STORY, VECTOR)
    assert verify(story, extract("", STORY_REPOST, VECTOR), VECTOR).ok
    assert verify(story, extract("", STORY_CUT, VECTOR), VECTOR).ok
    assert not verify(story, extract("", OTHER, VECTOR), VECTOR).ok
    assert not verify(extract("", BULLETIN_1, VECTOR), extract("", BULLETIN_2, VECTOR),
                      VECTOR).ok


def test_the_decision_is_the_models_integer_cut_at_the_threshold() -> None:
    a, b = extract("", STORY, VECTOR), extract("", STORY_CUT, VECTOR)
    model = shipped_vector_model()
    centibits = model.centibits(compare_pair(a, b))
    for threshold in (0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999999):
        config = replace(VECTOR, match_threshold=threshold)
        v = verify(a, b, config)
        assert v.ok == (centibits >= model.cut(threshold))
        assert v.ok == (v.probability >= threshold)
        assert v.score is not None and v.score.model == model.version


def test_the_explanation_lists_every_comparison_of_the_vector() -> None:
    a, b = extract("江城绿道贯通", STORY, VECTOR), extract("江城绿道全线贯通", STORY_CUT, VECTOR)
    v = verify(a, b, VECTOR)
    assert v.score is not None
    data = v.score.as_dict()
    assert data["kind"] == "vector"
    assert [w["comparison"] for w in data["weights"]] == list(COMPARISONS)
    vector = compare_pair(a, b)
    assert [w["value"] for w in data["weights"]] == [
        None if x is None else round(x, 4) for x in vector.values()]
    # the weights shown add up to the match weight the decision used
    total = data["prior"] + sum(w["weight"] for w in data["weights"])
    assert round(total, 2) == data["matchWeight"]


def test_a_comparison_the_model_does_not_weigh_is_listed_as_unweighed() -> None:
    model = shipped_vector_model()
    fewer = replace(model, specs=tuple(s for s in model.specs if s.name != "keys"))
    a, b = extract("", STORY, VECTOR), extract("", STORY_CUT, VECTOR)
    explained = explain_vector(fewer, compare_pair(a, b))
    keys = next(w for w in explained.weights if w.comparison == "keys")
    assert (keys.level, keys.weight) == (UNWEIGHED, 0.0)
    assert explained.centibits == fewer.centibits(compare_pair(a, b))


def test_decide_keeps_the_star_rule_with_a_vector_model() -> None:
    """A member that matches the new article does not bring its doc when the doc's
    anchor does not verify: no chaining, whatever the model."""
    new = extract("", STORY_CUT, VECTOR)
    anchor = Candidate(1, "d1", extract("", OTHER, VECTOR), True)
    member = Candidate(2, "d1", extract("", STORY, VECTOR), False)
    assert decide(new, [member, anchor], VECTOR) is None
    found = decide(new, [Candidate(3, "d2", member.features, True)], VECTOR)
    assert found is not None and found.doc_key == "d2"
    assert found.score is not None and found.score.model == shipped_vector_model().version


def test_a_doc_without_its_anchor_needs_the_anchorless_threshold() -> None:
    new = extract("", STORY_CUT, VECTOR)
    member = Candidate(2, "d1", extract("", STORY, VECTOR), False)
    p = verify(new, member.features, VECTOR).probability
    assert decide(new, [member], replace(VECTOR, anchorless_threshold=min(1.0, p + 1e-9))) is None
    assert decide(new, [member], replace(VECTOR, anchorless_threshold=p)) is not None


def test_cannot_link_and_the_url_rule_hold_with_a_vector_model() -> None:
    new = extract("", STORY_CUT, VECTOR)
    anchor = Candidate(1, "d1", extract("", STORY, VECTOR), True)
    kwargs = {"hits": [anchor], "anchors_of": lambda key: (anchor,), "config": VECTOR}
    assert cascade(new, url_owner=None, forbidden_docs=frozenset({"d1"}), **kwargs) is None
    other = Candidate(5, "d5", extract("", OTHER, VECTOR), True)
    by_url = cascade(new, url_owner=other, **kwargs)
    assert by_url is not None and (by_url.doc_key, by_url.matched_by) == ("d5", "url")


def test_models_of_both_kinds_read_back_from_their_json() -> None:
    vector = shipped_vector_model()
    assert model_from_dict(vector.as_dict()) == vector
    assert isinstance(model_from_dict(vector.as_dict()), VectorModel)
    assert model_from_dict(starting_model().as_dict()) == starting_model()
    assert VECTOR.vector is vector and EngineConfig(model=starting_model()).vector is None
    assert EngineConfig().vector is vector  # the default
    with pytest.raises(ValueError, match="no level bounds"):
        VECTOR.with_bounds(jaccard=0.5)


def _duplicate_pairs(labels: dict[str, str]) -> int:
    return sum(n * (n - 1) // 2 for n in Counter(labels.values()).values())


@pytest.mark.data
def test_raising_the_threshold_gives_fewer_duplicate_pairs_on_a_crawled_stream() -> None:
    """Crawled articles (the bdci corpus, in its order) through the engine as the
    workers run it (bench/common.run_engine: the index lookups, the cascade, boilerplate
    learned on the way), once per threshold: each step up merges strictly fewer pairs.
    (Filtering one list of probabilities could not fail this; the stream can: a pair
    refused at a higher threshold changes which doc later articles meet.)"""
    sys.path.insert(0, str(ROOT / "bench"))
    from common import load_docs, run_engine

    docs = load_docs("bdci", limit=STREAM)
    pairs = [_duplicate_pairs(run_engine(docs, replace(VECTOR, match_threshold=t)))
             for t in (0.1, 0.3, 0.5, 0.7, 0.9)]
    assert all(low > high for low, high in zip(pairs, pairs[1:], strict=False)), pairs


STREAM = 3000  # crawled articles: enough pairs near every threshold, a few seconds a run


def test_the_verification_is_the_dataclasses_it_would_build() -> None:
    """compare_pair, explain_vector and verify_vector set each instance's __dict__ at
    once rather than through the frozen dataclasses' __init__: the same instances."""
    import pickle
    from dataclasses import asdict, fields

    from fingerprints.rule.comparison import ComparisonVector
    from fingerprints.rule.verification import VectorExplanation, Verification

    texts = [("国家统计局发布前两月工业数据", STORY), ("", STORY_REPOST), ("", STORY_CUT),
             ("沪深两市3月5日收盘", BULLETIN_1), ("沪深两市3月6日收盘", BULLETIN_2),
             ("市教育局部署春季开学工作", OTHER), ("只有标题", "")]
    articles = [extract(title, body, VECTOR) for title, body in texts]
    model = VECTOR.model
    assert isinstance(model, VectorModel)
    for a in articles:
        for b in articles:
            found = verify(a, b, VECTOR)
            for made in (found, found.score, compare_pair(a, b)):
                kind = type(made)
                assert kind in (Verification, VectorExplanation, ComparisonVector)
                built = kind(**{f.name: getattr(made, f.name) for f in fields(kind)})
                assert made == built and hash(made) == hash(built)
                assert list(vars(made).items()) == list(vars(built).items())
                assert pickle.dumps(made) == pickle.dumps(built) and repr(made) == repr(built)
                assert asdict(made) == asdict(built)
            assert found.score == explain_vector(model, compare_pair(a, b))
