"""The comparison vector: every comparison made for every pair, missing only where the
data is, symmetric and the same from stored bytes."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprints.rule import EngineConfig, Features, extract
from fingerprints.rule.comparison import (
    COMPARISONS,
    SHORT_SHINGLES,
    ComparisonVector,
    Contexts,
    _both_contexts_py,
    _shared_keys,
    both_contexts,
    compare_pair,
    context_counts,
)
from fingerprints.rule.decision import proposes
from fingerprints.rule.kernel import kernel
from fingerprints.rule.sketch import _overlap_counts_py, overlap_counts
from fingerprints.rule.verification import number_conflicts
from fingerprints.rule.vocabulary import NAME_FLAG

from ..texts import BULLETIN_1, BULLETIN_2, ENGLISH, OTHER, STORY, STORY_CUT, STORY_REPOST

ARTICLES = {
    "story": ("国家统计局发布前两月工业数据", STORY),
    "repost": ("前两月工业增加值增长6.8%", STORY_REPOST),
    "cut": ("国家统计局发布前两月工业数据", STORY_CUT),
    "other": ("市教育局部署春季开学工作", OTHER),
    "bulletin-1": ("沪深两市3月5日收盘", BULLETIN_1),
    "bulletin-2": ("沪深两市3月6日收盘", BULLETIN_2),
    "english": ("Council expands bicycle lanes", ENGLISH),
    "title-only": ("国家统计局发布前两月工业数据", ""),
    "short": ("简讯", "本市今日气温回升。"),
    "untitled": ("", "本市今日气温回升，市民外出踏青。"),
}


@pytest.fixture(scope="module")
def features() -> dict[str, Features]:
    out = {name: extract(title, body) for name, (title, body) in ARTICLES.items()}
    out["pictured"] = replace(out["story"], pictures=(0x0123456789ABCDEF,))
    out["pictured-too"] = replace(out["repost"], pictures=(0x0123456789ABCDEE,))
    return out


def _numbers(f: Features, names: bool = False) -> bool:
    """Does ``f`` have numbers (names) in context?"""
    return context_counts(f, f, names=names).a > 0


def test_a_measure_is_missing_only_where_its_data_is(features: dict[str, Features]) -> None:
    for (_na, a), (_nb, b) in combinations(features.items(), 2):
        v = compare_pair(a, b)
        bodies = a.sketch.shingles > 0 and b.sketch.shingles > 0
        for name in ("jaccard", "containment", "containment_of_longer", "length_ratio"):
            assert (getattr(v, name) is None) == (not bodies), (name, _na, _nb)
        assert (v.title is None) == (not a.title_key or not b.title_key)
        assert (v.title_conflict is None) == (v.title is None)
        assert (v.short_text is None) == (not a.short_text or not b.short_text)
        assert (v.keys is None) == (not a.keys or not b.keys)
        for kind, names in (("numbers", False), ("names", True)):
            present = _numbers(a, names) and _numbers(b, names)
            for suffix in ("_agree", "_conflict", "_conflicts"):
                assert (getattr(v, kind + suffix) is None) == (not present), (kind, _na, _nb)
        assert (v.pictures is None) == (not a.pictures or not b.pictures)
        assert v.smaller_shingles >= 0 and v.off_title in (0, 1, 2)
        assert v.char_bodies in (0, 1, 2)
        # the body's version-6 measures read two bodies of SHORT_SHINGLES or more
        long = bodies and min(a.sketch.shingles, b.sketch.shingles) >= SHORT_SHINGLES
        if not long:
            assert v.main_containment is None and v.template_share is None
        assert (v.chrome_shorter is None) == (v.chrome_longer is None) == (not long)
        assert (v.codes_shared is None) == (not a.codes or not b.codes)
        assert len(v.values()) == len(COMPARISONS)
        # rows written before version 6: the measures they lack are missing, the others
        # unchanged
        old = compare_pair(replace(a, codes=None, chrome=None, main_bits=b""), b)
        assert old == replace(v, main_containment=None, codes_shared=None,
                              codes_conflict=None, template_share=None, chrome_shorter=None,
                              chrome_longer=None)


def test_every_comparison_is_made_whatever_the_others_say(features: dict[str, Features]
                                                         ) -> None:
    # a template the rule's walk would stop at (numbers differ) still has every measure
    v = compare_pair(features["bulletin-1"], features["bulletin-2"])
    assert v.numbers_conflicts is not None and v.numbers_conflicts > 0
    assert v.numbers_conflict is not None and v.numbers_conflict > 0
    assert None not in (v.jaccard, v.containment, v.title, v.keys)
    # and two different stories too
    other = compare_pair(features["story"], features["other"])
    assert other.jaccard is not None and other.jaccard < 0.1
    assert other.title is not None


def test_the_measures_read_as_they_should(features: dict[str, Features]) -> None:
    repost = compare_pair(features["story"], features["repost"])
    assert repost.containment is not None and repost.containment > 0.9
    assert repost.names_conflicts == 0 and repost.names_agree is not None
    cut = compare_pair(features["cut"], features["story"])
    assert cut.containment is not None and cut.containment > 0.95
    assert cut.containment_of_longer is not None and cut.containment_of_longer < 0.85
    assert cut.length_ratio is not None and cut.length_ratio < 0.85
    assert cut.title == 1.0 and cut.title_conflict == 0.0
    pictures = compare_pair(features["pictured"], features["pictured-too"])
    assert pictures.pictures == 1.0
    apart = compare_pair(features["pictured"],
                         replace(features["repost"], pictures=(~0x0123456789ABCDEF & (2**64 - 1),)))
    assert apart.pictures == 0.0


WECHAT_HEAD = "点击上方蓝字关注我们。转载请注明来源。"
WECHAT_TAIL = "长按二维码关注。推荐阅读：本周热门文章。版权声明：如有侵权请联系删除。"
TEMPLATE = ("本公司专业生产玻璃钢化粪池，产品可根据您的需求定制各种规格，质量可靠，价格合理，"
            "欢迎新老客户来电咨询洽谈合作。型号{model}，联系电话：{phone}（{person}）。"
            "公司拥有先进的生产设备和完善的检测手段，产品广泛用于住宅小区和新农村改造。")


def test_the_main_body_of_a_cut_repost_under_a_header_and_footer_is_in_the_original() -> None:
    story = extract("国家统计局发布前两月工业数据", STORY)
    repost = extract("前两月工业", WECHAT_HEAD + STORY_CUT + WECHAT_TAIL)
    v = compare_pair(story, repost)
    assert v.containment is not None and v.main_containment is not None
    assert v.main_containment > 0.95 > v.containment
    # the repost, header and footer included, is the longer body
    assert v.chrome_longer is not None and v.chrome_longer > 0.2
    assert v.chrome_shorter == 0.0


def test_a_template_for_another_contact_differs_in_its_codes_and_a_copy_shares_them() -> None:
    one = extract("化粪池", TEMPLATE.format(model="bf-100a", phone="138-6964-0555",
                                          person="何女士"))
    other = extract("化粪池", TEMPLATE.format(model="bf-200c", phone="150-2170-7592",
                                            person="王女士"))
    copy = extract("化粪池价格", "本站讯 " + TEMPLATE.format(
        model="bf-100a", phone="138-6964-0555", person="何女士"))
    template = compare_pair(one, other)
    assert template.codes_shared == 0.0 and template.codes_conflict == 1.0
    assert template.template_share is not None and template.template_share > 0.5
    same = compare_pair(one, copy)
    assert same.codes_shared == 1.0 and same.codes_conflict == 0.0


def test_the_vector_is_symmetric_and_the_same_from_stored_bytes(
        features: dict[str, Features]) -> None:
    for a, b in combinations(features.values(), 2):
        v = compare_pair(a, b)
        assert v == compare_pair(b, a)
        assert v == compare_pair(Features.from_bytes(a.to_bytes()),
                                 Features.from_bytes(b.to_bytes()))


def test_the_counts_are_the_kernels_and_the_references(features: dict[str, Features]) -> None:
    for a, b in combinations(features.values(), 2):
        assert overlap_counts(a.sketch, b.sketch) == _overlap_counts_py(a.sketch, b.sketch)
        for names in (False, True):
            contexts = context_counts(a, b, names=names)
            assert (contexts.conflicts, contexts.shared) == number_conflicts(a, b, names=names)


def test_the_candidate_search_proposes_a_repost_and_not_an_unrelated_story(
        features: dict[str, Features]) -> None:
    config = EngineConfig()
    assert proposes(features["repost"], features["story"], config)
    assert not proposes(features["english"], features["bulletin-1"], config)


def test_a_vector_lists_its_fields_in_one_order() -> None:
    assert COMPARISONS[0] == "jaccard" and "names_conflicts" in COMPARISONS
    assert ComparisonVector.__dataclass_fields__.keys() == set(COMPARISONS)


def test_a_series_number_and_a_mute_stub_read_as_the_rule_reads_them(
        features: dict[str, Features]) -> None:
    story = features["story"]
    # "(1)" against "(4)" under one headline: the replaced stretch is a number
    first = extract("（锐视角）（1）古塔院内书香浓", STORY)
    fourth = extract("（锐视角）（4）古塔院内书香浓", STORY)
    series = compare_pair(first, fourth)
    assert series.title_number_conflict is not None and series.title_number_conflict > 0.8
    assert series.title_conflict == series.title_number_conflict
    # another place beside an unchanged number: a name conflict, not a number's
    place = compare_pair(extract("苏州好人揭榜 常熟3位市民入选", STORY),
                         extract("苏州好人揭榜 本市3位市民入选", STORY))
    assert place.title_conflict and place.title_number_conflict == 0.0
    assert compare_pair(story, features["cut"]).title_number_conflict == 0.0
    # one short stub under two unrelated posts' titles says nothing of either
    stub = "视频来自：百度贴吧"
    posts = compare_pair(extract("我发表了一篇视频贴，大伙来看看吧", stub),
                         extract("发个帖吧，好久了", stub))
    assert posts.jaccard == 1.0 and posts.smaller_shingles == 0.0
    # ... under one headline it is compared as a body
    same = compare_pair(extract("发个帖吧，好久了", stub), extract("发个帖吧，好久了。", stub))
    assert same.smaller_shingles > 0


def _contexts_by_dict(a: Features, b: Features, names: bool) -> tuple[int, int, int, int]:
    """The counts spelled out: each side's contexts below the common cut, as
    context -> its set of numbers; a shared context conflicts when the sets are
    disjoint."""
    va, vb = (np.frombuffer(f.numbers, dtype="<u4").tolist() for f in (a, b))
    if not va or not vb:
        return 0, 0, 0, 0
    full = 0xFFFFFFFF
    cut = min(va[-1] if a.number_count > len(va) else full,
              vb[-1] if b.number_count > len(vb) else full)
    below = full + 1 if cut == full else (cut >> 16) << 16
    sides = []
    for values in (va, vb):
        side: dict[int, set[int]] = {}
        for v in values:
            if v < below and bool(v & NAME_FLAG) == names:
                side.setdefault(v >> 16, set()).add(v & 0xFFFF)
        sides.append(side)
    shared = sides[0].keys() & sides[1].keys()
    return (len(sides[0]), len(sides[1]), len(shared),
            sum(1 for c in shared if not sides[0][c] & sides[1][c]))


@lru_cache(maxsize=1)
def _base() -> Features:
    return extract("标题", STORY)


_VALUES = st.lists(st.tuples(st.integers(0, 6), st.booleans(), st.integers(0, 5)),
                   max_size=14)


@settings(max_examples=300, deadline=None)
@given(_VALUES, _VALUES, st.integers(0, 6), st.integers(0, 6))
def test_the_contexts_are_counted_as_spelled_out(
        left: list[tuple[int, bool, int]], right: list[tuple[int, bool, int]],
        more_left: int, more_right: int) -> None:
    # few contexts and numbers, so that sides share, agree and conflict; a side whose
    # count exceeds its list was cut (its largest stored value is the cut)
    def side(values: list[tuple[int, bool, int]], more: int) -> Features:
        stored = sorted({ctx << 16 | (NAME_FLAG if name else 0) | n for ctx, name, n in values})
        return replace(_base(), numbers=np.array(stored, dtype="<u4").tobytes(),
                       number_count=len(stored) + (more if stored else 0))

    a, b = side(left, more_left), side(right, more_right)
    assert kernel is not None, "fingerprints.rule._kernel is not built: run `make install`"
    numbers, names = both_contexts(a, b)
    assert (numbers, names) == _both_contexts_py(a, b)  # the kernel's and Python's
    # the kernel merges sorted lists (as extraction stores them) and loops over others
    unsorted = replace(a, numbers=np.frombuffer(a.numbers, dtype="<u4")[::-1].tobytes())
    assert both_contexts(unsorted, b) == _both_contexts_py(unsorted, b)
    assert tuple(vars(numbers).values()) == _contexts_by_dict(a, b, names=False)
    assert tuple(vars(names).values()) == _contexts_by_dict(a, b, names=True)
    assert both_contexts(b, a) == (Contexts(numbers.b, numbers.a, numbers.shared,
                                            numbers.conflicts),
                                   Contexts(names.b, names.a, names.shared, names.conflicts))


_KEYS = st.lists(st.integers(min_value=0, max_value=40), max_size=20)


@settings(max_examples=300, deadline=None)
@given(_KEYS, _KEYS)
def test_the_shared_keys_are_the_sets_whatever_the_order(left: list[int], right: list[int]
                                                          ) -> None:
    assert kernel is not None, "fingerprints.rule._kernel is not built: run `make install`"
    a = np.array(left, dtype="<u4").tobytes()
    b = np.array(right, dtype="<u4").tobytes()
    # stored keys are sorted and distinct; the kernel also sorts others (repeats counted once)
    assert kernel.shared_keys(a, b) == (len(set(left) & set(right)), len(set(left)),
                                        len(set(right)))
    assert _shared_keys(a, b) == (len(set(left) & set(right)) / min(len(set(left)),
                                                                    len(set(right)))
                                  if left and right else None)


def test_the_vector_is_the_same_with_and_without_the_kernel(
        features: dict[str, Features], monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = list(combinations(features.values(), 2))
    with_kernel = [compare_pair(a, b) for a, b in pairs]
    monkeypatch.setattr("fingerprints.rule.comparison.kernel", None)
    monkeypatch.setattr("fingerprints.rule.shorttext.kernel", None)
    monkeypatch.setattr("fingerprints.rule.sketch.kernel", None)
    assert [compare_pair(a, b) for a, b in pairs] == with_kernel
    assert any(v.keys is not None and 0 < v.keys < 1 for v in with_kernel)
    assert any(v.title is not None and 0 < v.title < 1 for v in with_kernel)
