"""The vector model's early exit (fingerprints/rule/weight_bound.py): its bound is never
below a pair's match weight, whatever the model's weights, so the pairs it refuses
unverified are pairs the verification refuses, and decide's answers stay the same."""

from __future__ import annotations

import sys
from dataclasses import replace
from itertools import combinations_with_replacement
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprints.rule import EngineConfig, Features, decision, extract
from fingerprints.rule.comparison import compare_pair
from fingerprints.rule.kernel import kernel
from fingerprints.rule.match_model import starting_model
from fingerprints.rule.vector_model import (
    VectorModel,
    blank_model,
    rule_vector_model,
    shipped_vector_model,
)
from fingerprints.rule.verification import verify, verify_text
from fingerprints.rule.weight_bound import _bound_py, _packed, cannot_match, upper_bound

from ..texts import BULLETIN_1, BULLETIN_2, ENGLISH, OTHER, STORY, STORY_CUT, STORY_REPOST

ROOT = Path(__file__).resolve().parents[3]
ARTICLES = (
    ("国家统计局发布前两月工业数据", STORY),
    ("前两月工业增加值增长6.8%", STORY_REPOST),
    ("国家统计局发布前两月工业数据", STORY_CUT),
    ("市教育局部署春季开学工作", OTHER),
    ("沪深两市3月5日收盘", BULLETIN_1),
    ("沪深两市3月6日收盘", BULLETIN_2),
    ("Council expands bicycle lanes", ENGLISH),
    ("国家统计局发布前两月工业数据", ""),
    ("简讯", "本市今日气温回升。"),
    ("简讯", "本市今日气温回升，市民外出踏青。"),
    ("", "本市今日气温回升，市民外出踏青。"),
    ("本市今日气温回升", "责任编辑：王明。本文来源于网络，如有侵权请联系删除。"),
)


def _features() -> list[Features]:
    out = [extract(title, body) for title, body in ARTICLES]
    # pictures on some: the same picture, another one
    out.append(replace(out[0], pictures=(0x0123456789ABCDEF,)))
    out.append(replace(out[1], pictures=(0x0123456789ABCDEE,)))
    out.append(replace(out[3], pictures=(~0x0123456789ABCDEF & (2**64 - 1),)))
    return out


FEATURES = _features()
PAIRS = list(combinations_with_replacement(range(len(FEATURES)), 2))


@st.composite
def models(draw: st.DrawFn) -> VectorModel:
    """A model on the default schema and regimes with any weights its comparisons'
    directions allow."""
    blank = blank_model("drawn")
    weight = st.integers(-2000, 2000).map(lambda c: c / 100)
    specs = []
    for spec in blank.specs:
        steps = tuple(abs(draw(weight)) * spec.direction if spec.direction
                      else draw(weight) for _cut in spec.cuts)
        specs.append(replace(spec, present=draw(weight), steps=steps))
    return replace(blank, prior=draw(weight), specs=tuple(specs))


@pytest.mark.parametrize("model", [shipped_vector_model(), rule_vector_model()],
                         ids=["shipped", "vector-0"])
def test_the_bound_is_at_least_the_match_weight_of_every_pair(model: VectorModel) -> None:
    for i, j in PAIRS:
        a, b = FEATURES[i], FEATURES[j]
        for pictures in (True, False):
            exact = model.centibits(compare_pair(a, b, pictures=pictures))
            assert upper_bound(a, b, model, pictures=pictures) >= exact, (i, j, pictures)
            assert upper_bound(b, a, model, pictures=pictures) >= exact, (j, i, pictures)


@settings(max_examples=40, deadline=None)
@given(models())
def test_the_bound_holds_whatever_the_models_weights(model: VectorModel) -> None:
    for i, j in PAIRS:
        a, b = FEATURES[i], FEATURES[j]
        exact = model.centibits(compare_pair(a, b))
        assert upper_bound(a, b, model) >= exact, (i, j)


def _same_in_the_kernel(a: Features, b: Features, model: VectorModel, pictures: bool,
                        cuts: tuple[int | None, ...]) -> None:
    """The kernel's bound is the Python one's, with and without a cut (every stage, the
    first one's exit, the model's cut)."""
    assert kernel is not None
    tables = _packed(model)
    for cut in (None, -(10**6), 10**6, *cuts):
        assert kernel.weight_bound(a, b, tables, pictures, cut) == _bound_py(
            a, b, model, pictures, cut), cut


@pytest.mark.skipif(kernel is None, reason="the kernel is not built")
@pytest.mark.parametrize("model", [shipped_vector_model(), rule_vector_model()],
                         ids=["shipped", "vector-0"])
def test_the_kernels_bound_is_the_pythons(model: VectorModel) -> None:
    for i, j in PAIRS:
        a, b = FEATURES[i], FEATURES[j]
        for pictures in (True, False):
            _same_in_the_kernel(a, b, model, pictures, (model.cut(0.5),))
            _same_in_the_kernel(b, a, model, pictures, (model.cut(0.9),))


@pytest.mark.skipif(kernel is None, reason="the kernel is not built")
@settings(max_examples=40, deadline=None)
@given(models())
def test_the_kernels_bound_is_the_pythons_whatever_the_weights(model: VectorModel) -> None:
    for i, j in PAIRS:
        exact = _bound_py(FEATURES[i], FEATURES[j], model, True, None)
        _same_in_the_kernel(FEATURES[i], FEATURES[j], model, True, (exact, exact + 1))


def test_a_pair_refused_unverified_is_one_the_verification_refuses() -> None:
    config = EngineConfig(model=shipped_vector_model())
    refused = 0
    for i, j in PAIRS:
        a, b = FEATURES[i], FEATURES[j]
        for judge, pictures in ((verify, True), (verify_text, False)):
            if cannot_match(a, b, config, pictures=pictures):
                refused += 1
                assert not judge(a, b, config).ok, (i, j)
    assert refused  # other stories stop before the costly comparisons
    story, other = FEATURES[0], FEATURES[3]
    assert cannot_match(story, other, config, pictures=False)
    assert not cannot_match(story, FEATURES[1], config, pictures=False)  # a repost


def test_a_model_of_the_rules_levels_is_always_verified() -> None:
    config = EngineConfig(model=starting_model())
    assert not cannot_match(FEATURES[0], FEATURES[3], config)


@pytest.mark.data
@pytest.mark.parametrize("corpus", ["xinhua", "bdci"])
def test_the_replay_decides_the_same_with_and_without_the_early_exit(
        corpus: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Articles of a corpus through the in-process replay (no boilerplate learned, so
    thousands of pairs share only a footer's keys): the same assignments, matched
    members, distances and similarities with the early exit as without it, pairs
    stopping at it, and the bound never below a weighed pair's weight."""
    sys.path.insert(0, str(ROOT / "bench"))
    from common import load_docs

    from fingerprints.batch.replay import prepare, replay

    docs = load_docs(corpus, limit=2500)
    items, _repeated = prepare([{"nid": d.id, "title": d.title, "content": d.content}
                                for d in docs])
    weighed: list[tuple[Features, Features, EngineConfig, bool, bool]] = []

    def recording(a: Features, b: Features, config: EngineConfig, *,
                  pictures: bool = True) -> bool:
        refused = cannot_match(a, b, config, pictures=pictures)
        weighed.append((a, b, config, pictures, refused))
        return refused

    monkeypatch.setattr(decision, "cannot_match", recording)
    with_exit = replay(items)
    monkeypatch.setattr(decision, "cannot_match", lambda *_args, **_kwargs: False)
    assert replay(items) == with_exit
    model = EngineConfig().model
    assert isinstance(model, VectorModel)
    cut = model.cut(EngineConfig().match_threshold)
    for a, b, _config, pictures, _refused in weighed:
        assert upper_bound(a, b, model, pictures=pictures) >= model.centibits(
            compare_pair(a, b, pictures=pictures))
        if kernel is not None:
            _same_in_the_kernel(a, b, model, pictures, (cut,))
    assert any(entry[-1] for entry in weighed)
