"""The learned model on the comparison vector: versioned data, declared directions
enforced (property-tested), exact integer scoring, a refit from a few labels that moves
towards them and stays near its prior, folds that keep a group whole."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprints.rule import extract
from fingerprints.rule.comparison import COMPARISONS, ComparisonVector, compare_pair
from fingerprints.rule.vector_model import (
    NAMES_SCHEMA,
    VectorModel,
    blank_model,
    rule_vector_model,
    shipped_vector_model,
)
from fingerprints.rule.vector_training import (
    VectorExample,
    design,
    fit,
    grouped_folds,
    train,
)

SHARES = {"jaccard", "containment", "containment_of_longer", "length_ratio",
          "long_containment", "keys", "title", "title_conflict", "title_number_conflict",
          "short_text",
          "short_conflict", "numbers_agree", "numbers_conflict", "names_agree",
          "names_conflict", "main_containment", "codes_shared", "codes_conflict",
          "template_share", "chrome_shorter", "chrome_longer", "names_kind_conflict",
          "names_person_conflict", "names_place_conflict", "names_organisation_conflict",
          "names_other_conflict", "quoted_shared"}
COUNTS = {"smaller_shingles": 3000, "numbers_conflicts": 12, "names_conflicts": 12,
          "names_kind_conflicts": 12,
          "pictures": 1, "off_title": 2, "char_bodies": 2}
ALWAYS = {"smaller_shingles", "off_title", "char_bodies"}  # never missing


def _value(name: str) -> st.SearchStrategy[float | None]:
    values = (st.floats(0.0, 1.0) if name in SHARES
              else st.integers(0, COUNTS[name]).map(float))
    return values if name in ALWAYS else st.none() | values


vectors = st.builds(ComparisonVector, **{name: _value(name) for name in COMPARISONS})
MODELS = {"shipped": shipped_vector_model(), "vector-0": rule_vector_model()}


def vector(**values: float | None) -> ComparisonVector:
    base: dict[str, float | None] = dict.fromkeys(COMPARISONS)
    base.update(smaller_shingles=500.0, off_title=0.0, char_bodies=2.0)
    base.update(values)
    return ComparisonVector(**base)  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(vectors, st.sampled_from(COMPARISONS), st.floats(0.0, 1.0),
       st.sampled_from(sorted(MODELS)))
def test_a_measure_never_pushes_against_its_declared_direction(
        v: ComparisonVector, name: str, more: float, which: str) -> None:
    model = MODELS[which]
    before = getattr(v, name)
    if before is None or name == "smaller_shingles":  # the regime's measure: free
        return
    raised = before + more * (1.0 if name in SHARES else COUNTS[name])
    after = replace(v, **{name: raised})
    directions = {s.direction for s in model.specs if s.name == name}
    delta = model.centibits(after) - model.centibits(v)
    if directions == {1}:
        assert delta >= 0, (name, before, raised)
    elif directions == {-1}:
        assert delta <= 0, (name, before, raised)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(vectors, st.booleans()), min_size=4, max_size=40),
       st.sampled_from(["shared", "regimes"]))
def test_a_fit_weighing_the_version_7_comparisons_keeps_their_declared_side(
        rows: list[tuple[ComparisonVector, bool]], names: str) -> None:
    start = rule_vector_model(names=names)
    weighed = ({spec.name for spec in start.specs}
               - {spec.name for spec in rule_vector_model().specs})
    assert weighed == {name for name, _d, _c in NAMES_SCHEMA}
    model = fit([VectorExample(v, m) for v, m in rows], start, "any", strength=0.05)
    for spec in model.specs:
        assert all(step * spec.direction >= 0 for step in spec.steps), spec
        assert spec.name not in weighed or spec.direction == -1
    with pytest.raises(ValueError, match="names must be"):
        rule_vector_model(names="every")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(vectors, st.booleans()), min_size=4, max_size=40))
def test_a_fit_on_any_labels_keeps_every_step_on_its_declared_side(
        rows: list[tuple[ComparisonVector, bool]]) -> None:
    model = fit([VectorExample(v, m) for v, m in rows], rule_vector_model(), "any",
                strength=0.05)
    for spec in model.specs:
        assert all(step * spec.direction >= 0 for step in spec.steps), spec


def test_a_model_with_a_step_against_its_direction_is_refused() -> None:
    data = shipped_vector_model().as_dict()
    spec = next(c for c in data["comparisons"] if c["name"] == "containment")
    spec["steps"][0] = -1.0
    with pytest.raises(ValueError, match="against the declared direction"):
        VectorModel.from_dict(data)
    with pytest.raises(ValueError, match="not a vector model"):
        VectorModel.from_dict({"kind": "vector"})
    with pytest.raises(ValueError, match="kind"):
        VectorModel.from_dict({"kind": "levels"})


def test_the_model_is_versioned_json_and_reads_back_the_same() -> None:
    for model in (shipped_vector_model(), rule_vector_model(), blank_model()):
        again = VectorModel.from_dict(json.loads(model.to_json()))
        assert again == model
        assert again.to_json() == model.to_json()
    assert shipped_vector_model().version == "vector-5"


@settings(max_examples=200, deadline=None)
@given(vectors, st.floats(0.001, 0.999))
def test_scoring_is_an_integer_sum_and_the_decision_an_integer_comparison(
        v: ComparisonVector, threshold: float) -> None:
    model = shipped_vector_model()
    score = model.score(v)
    assert isinstance(score.centibits, int) and score.centibits == model.centibits(v)
    # the contributions add up exactly, in centibits
    parts = sum(round(w.weight * 100) for w in score.weights) + round(model.prior * 100)
    assert parts == score.centibits
    assert model.matches(v, threshold) == (score.probability >= threshold)
    assert model.score(v) == model.score(v)


def test_the_cut_rises_with_the_threshold() -> None:
    model = shipped_vector_model()
    cuts = [model.cut(t / 100) for t in range(1, 100)]
    assert cuts == sorted(cuts) and len(set(cuts)) > 50
    assert model.cut(0.0) < min(cuts) and model.cut(1.0) > max(cuts)


def test_a_missing_measure_adds_nothing() -> None:
    model = shipped_vector_model()
    empty = vector(smaller_shingles=0.0)
    score = model.score(empty)
    missing = [w for w in score.weights if w.level == "missing"]
    assert missing and all(w.weight == 0 for w in missing)
    # a title said alone (no body) is weighed where the regime says, nowhere else
    titled = model.score(replace(empty, title=1.0, title_conflict=0.0))
    moved = {w.comparison for w, before in zip(titled.weights, score.weights, strict=True)
             if w.weight != before.weight}
    assert moved == {"title@0", "title_conflict@0"} - {
        w.comparison for w in titled.weights if w.weight == 0}


# a site's split templates: long bodies 0.7-0.8 contained, one name differs
TEMPLATE = {"jaccard": 0.45, "containment": 0.72, "containment_of_longer": 0.6,
            "length_ratio": 0.8, "keys": 0.4, "title": 0.5, "names_agree": 0.7,
            "names_conflict": 0.1, "names_conflicts": 1.0}
# genuine partial reposts: a report kept under another site's chrome
PARTIAL = {"jaccard": 0.4, "containment": 0.66, "containment_of_longer": 0.5,
           "length_ratio": 0.7, "keys": 0.5, "title": 0.4, "names_agree": 0.8,
           "names_conflict": 0.0, "names_conflicts": 0.0}


def _pairs(n: int, values: dict[str, float], match: bool) -> list[VectorExample]:
    """``n`` labelled pairs around ``values`` (containment a little apart each)."""
    return [VectorExample(vector(**{**values, "containment": values["containment"] + i / 500,
                                    "long_containment": values["containment"] + i / 500,
                                    "title_conflict": 0.0}), match) for i in range(n)]


def test_a_refit_from_thirty_labels_moves_towards_them_and_stays_near_its_prior() -> None:
    start = shipped_vector_model()
    # an editor's first thirty decisions
    examples = _pairs(20, TEMPLATE, False) + _pairs(10, PARTIAL, True)
    refit = fit(examples, start, "vector-2")
    partial = _pairs(1, PARTIAL, True)[0].vector
    assert refit.score(partial).probability > start.score(partial).probability
    probe = examples[0].vector
    assert refit.score(probe).probability < start.score(probe).probability - 0.1
    moves = [abs(a - b) for s, r in zip(start.specs, refit.specs, strict=True)
             for a, b in zip((s.present, *s.steps), (r.present, *r.steps), strict=True)]
    assert max(moves) < 2.0  # no weight runs off
    assert sum(1 for m in moves if m > 0.05) < len(moves) // 4  # most do not move at all
    # a kind of pair the labels do not speak of keeps its probability
    copy = vector(jaccard=0.9, containment=0.95, containment_of_longer=0.9, length_ratio=0.95,
                  long_containment=0.95, keys=0.9, title=1.0, title_conflict=0.0)
    assert abs(refit.score(copy).probability - start.score(copy).probability) < 0.02
    assert refit.scale == start.scale and refit.offset == start.offset


def test_training_from_too_few_groups_keeps_the_calibration() -> None:
    start = shipped_vector_model()
    examples = _pairs(6, TEMPLATE, False)
    model = train(examples, ["one"] * 6, start, "few")
    assert (model.scale, model.offset) == (start.scale, start.offset)


def test_grouped_folds_keep_a_group_whole_and_are_deterministic() -> None:
    groups = ["a"] * 7 + ["b"] * 3 + ["c"] * 3 + [f"s{i}" for i in range(9)]
    folds = grouped_folds(groups, 5)
    assert sorted(i for f in folds for i in f) == list(range(len(groups)))
    for f in folds:
        members = {groups[i] for i in f}
        assert all(sum(1 for i in f if groups[i] == g) == groups.count(g) for g in members)
    assert folds == grouped_folds(list(groups), 5)
    assert max(len(f) for f in folds) == 7


SCRIPT = """
import json, sys
from fingerprints.rule import extract
from fingerprints.rule.comparison import compare_pair
from fingerprints.rule.vector_model import shipped_vector_model
texts = json.loads(sys.argv[1])
features = [extract(title, body) for title, body in texts]
model = shipped_vector_model()
print(json.dumps([model.centibits(compare_pair(a, b)) for a in features for b in features]
                 + [model.cut(t / 10) for t in range(1, 10)]))
"""


def test_another_process_with_another_hash_seed_scores_every_pair_the_same() -> None:
    import os
    import subprocess
    import sys

    from fingerprints.rule import extract
    from fingerprints.rule.comparison import compare_pair

    from ..texts import BULLETIN_1, BULLETIN_2, OTHER, STORY, STORY_CUT, STORY_REPOST

    texts = [("工业数据", STORY), ("工业增加值", STORY_REPOST), ("工业数据", STORY_CUT),
             ("开学", OTHER), ("收盘", BULLETIN_1), ("收盘", BULLETIN_2), ("只有标题", "")]
    model = shipped_vector_model()
    features = [extract(title, body) for title, body in texts]
    here = [model.centibits(compare_pair(a, b)) for a in features for b in features]
    here += [model.cut(t / 10) for t in range(1, 10)]
    for seed in ("1", "2"):
        done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(texts)], check=True,
                              capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed})
        assert json.loads(done.stdout) == here


def test_alphabetic_bodies_are_weighed_in_regimes_of_their_own() -> None:
    """60-70 % of a CJK text's character 5-grams inside another page is mostly a partial
    repost; of an English text's word 5-grams, two write-ups of one event quoting the
    same people. The model keeps them in separate regimes (the labels are Chinese, so
    the word regimes keep the rule's bounds)."""
    model = shipped_vector_model()
    assert model.script_regimes and model.regime_count == 5
    partial = {"jaccard": 0.4, "containment": 0.66, "containment_of_longer": 0.45,
               "length_ratio": 0.7, "long_containment": 0.66, "keys": 0.4,
               "main_containment": 0.7}
    cjk, words = vector(**partial), vector(**partial, char_bodies=0.0)
    assert (model.regime_of(cjk), model.regime_of(words)) == (2, 4)
    assert model.regime_of(vector(char_bodies=1.0)) == 4  # one side alphabetic
    assert model.regime_of(vector(smaller_shingles=0.0, char_bodies=0.0)) == 0
    assert model.score(words).probability < 0.5 < model.score(cjk).probability
    # the waterfall weighs what the score weighed
    from fingerprints.rule.verification import explain_vector

    for v in (cjk, words):
        shown = explain_vector(model, v)
        assert shown.regime == model.regime_of(v)
        assert round(model.prior * 100) + sum(round(w.weight * 100) for w in shown.weights) \
            == model.centibits(v)
    # the word rule's own levels still match: word-contained (0.7), word-copy (0.6)
    for level in ({"containment": 0.75, "jaccard": 0.45}, {"containment": 0.65, "jaccard": 0.62}):
        assert model.score(vector(**{**partial, **level}, char_bodies=0.0)).probability > 0.5
    # a model without script regimes (vector-1's JSON) reads one set of regimes
    old = VectorModel.from_dict({**model.as_dict(), "script_regimes": False,
                                 "comparisons": [c for c in model.as_dict()["comparisons"]
                                                 if c["regime"] < 3]})
    assert not old.script_regimes and old.regime_of(words) == 2
    assert "script_regimes" not in old.as_dict()


def test_the_items_of_a_series_under_one_headline_stay_apart() -> None:
    """"(1)" against "(4)" under one headline, one caption text: the title's replaced
    stretch is a number; another place name beside an unchanged number is not."""
    model = shipped_vector_model()
    copy = {"jaccard": 0.93, "containment": 0.98, "containment_of_longer": 0.97,
            "length_ratio": 1.0, "long_containment": 0.98, "keys": 0.9, "title": 0.93,
            "title_conflict": 0.93}
    assert model.score(vector(**copy, title_number_conflict=0.93)).probability < 0.5
    assert model.score(vector(**copy, title_number_conflict=0.0)).probability > 0.5


@settings(max_examples=200, deadline=None)
@given(vectors, st.sampled_from(sorted(MODELS)))
def test_the_explanation_reads_the_specs_in_force_as_the_whole_score_does(
        v: ComparisonVector, which: str) -> None:
    """explain_vector reads only the specs in force in the pair's regime; the same lines
    and weights as reading every spec's score and keeping those in force."""
    from fingerprints.rule.vector_model import UNWEIGHED
    from fingerprints.rule.verification import explain_vector

    model = MODELS[which]
    scored, regime = model.score(v), model.regime_of(v)
    lines: dict[str, tuple[str, float]] = {}
    for spec, part in zip(model.specs, scored.weights, strict=True):
        if spec.regime in (-1, regime):
            found = lines.get(spec.name)
            lines[spec.name] = (part.level, part.weight) if found is None else (
                found[0], found[1] + part.weight)
    shown = explain_vector(model, v)
    assert (shown.centibits, shown.probability, shown.regime) == (
        scored.centibits, scored.probability, regime)
    assert [(w.comparison, w.level, w.weight) for w in shown.weights] == [
        (name, *lines.get(name, (UNWEIGHED, 0.0))) for name in COMPARISONS]
    assert model.centibits(v) == scored.centibits
    assert model.cut(0.5) == model.cut(0.5) and model.matches(v, 0.5) == (
        scored.probability >= 0.5)


def test_a_shared_picture_is_evidence_for_and_another_picture_against() -> None:
    """The labels have no pictures: the pictures' weights are the definition's (vector-0's,
    kept by the fit)."""
    model = shipped_vector_model()
    # a repost keeping 40 % of the original's text beside another text, one headline:
    # borderline on its text, over the threshold with the original's photo
    partial = vector(jaccard=0.2, containment=0.25, containment_of_longer=0.2,
                     length_ratio=0.8, long_containment=0.25, keys=0.25, title=1.0,
                     title_conflict=0.0, title_number_conflict=0.0)
    text, shared, other = (model.score(replace(partial, pictures=p)).probability
                           for p in (None, 1.0, 0.0))
    assert other < 0.4 < text < 0.6 < 0.9 < shared
    # a template for another town under another photo stays apart
    template = replace(partial, containment=0.75, long_containment=0.75, jaccard=0.55,
                       names_agree=0.7, names_conflict=0.1, names_conflicts=1.0, title=0.8,
                       title_conflict=0.8)
    assert model.score(replace(template, pictures=0.0)).probability < \
        model.score(template).probability
    # no body: titles 0.6-0.9 alike over one photo are one post, not without it; two
    # items of a series under one caption with other photos stay apart
    posts = vector(smaller_shingles=0.0, char_bodies=0.0, title=0.75, title_conflict=0.0,
                   title_number_conflict=0.0)
    assert model.score(posts).probability < 0.5 < model.score(
        replace(posts, pictures=1.0)).probability
    series = replace(posts, title=1.0)
    assert model.score(series).probability > 0.5 > model.score(
        replace(series, pictures=0.0)).probability


def test_one_caption_under_two_photos_of_a_series_is_two_posts() -> None:
    """Two items of a photo series: one title, one short caption as their bodies, other
    photos. Identical texts are about 50 bits of evidence; another photo under a short
    body is a veto, as the rule's, and one photo keeps them one post."""
    model = shipped_vector_model()
    caption = "采煤沉陷区治理后村民搬进新居"
    first = replace(extract("组图：山西采煤明星村的今昔", caption), pictures=(0x0123456789ABCDEF,))
    for other, joined in (((~0x0123456789ABCDEF) & (2**64 - 1), False),
                          (0x0123456789ABCDEE, True)):
        second = replace(first, pictures=(other,))
        vector = compare_pair(first, second)
        assert 1 <= vector.smaller_shingles < 30  # a short body, not a missing one
        assert model.matches(vector, 0.5) is joined
        assert model.score(replace(vector, pictures=None)).probability > 0.99


def test_the_codes_weight_is_the_definitions_and_every_fit_keeps_it() -> None:
    """A code that differs in one context is another contact or item (DESIGN.md): its
    weight is fixed data in the model, and a fit to labels that say otherwise keeps it."""
    shipped = shipped_vector_model()
    fixed = [s for s in shipped.specs if s.fixed]
    assert [s.name for s in fixed] == ["codes_conflict"]
    assert fixed == [s for s in rule_vector_model().specs if s.fixed]
    assert all(w < 0 for w in fixed[0].steps) and fixed[0].direction == -1
    assert VectorModel.from_dict(json.loads(shipped.to_json())) == shipped
    # thirty near-copies with another code, all labelled duplicates
    copies = [VectorExample(vector(jaccard=0.9, containment=0.95, long_containment=0.95,
                                   title=1.0, title_conflict=0.0, codes_shared=0.5,
                                   codes_conflict=0.5 + i / 100), True) for i in range(30)]
    refit = fit(copies, shipped, "refit", strength=0.2)
    assert [s for s in refit.specs if s.fixed] == fixed
    # and the labels do not bend the other weights towards what it overrides: its
    # columns of the fit's design stay 0, as for a missing measure
    at = 1 + sum(1 + len(s.cuts) for s in shipped.specs[: shipped.specs.index(fixed[0])])
    assert not design(shipped, [copies[0].vector])[:, at : at + 3].any()
    # a template differing in its phone or model code alone stays apart; without the
    # conflict (the other side has no code in that context) it is a copy
    template = copies[0].vector
    assert shipped.score(template).probability < 0.5
    assert shipped.score(replace(template, codes_conflict=0.0)).probability > 0.5
    assert shipped.score(replace(template, codes_shared=None,
                                 codes_conflict=None)).probability > 0.5


def test_a_code_only_one_side_has_is_no_conflict() -> None:
    body = ("本公司专业生产不锈钢储罐，产品规格齐全，质量稳定可靠，价格优惠，欢迎来电咨询洽谈业务。"
            "公司秉承诚信为本、质量第一的经营理念，竭诚为新老客户提供优质的产品和服务。")
    with_contact = extract("不锈钢储罐厂家", body + "联系电话：13831712345 型号：jx-500")
    dropped = extract("不锈钢储罐厂家", body + "型号：jx-500")
    other_phone = extract("不锈钢储罐厂家", body + "联系电话：15965432198 型号：jx-500")
    assert compare_pair(with_contact, dropped).codes_conflict == 0.0
    assert compare_pair(with_contact, other_phone).codes_conflict == 0.5
    assert compare_pair(with_contact, extract("不锈钢储罐厂家", body)).codes_conflict is None
