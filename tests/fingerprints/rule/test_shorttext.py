"""Short texts compared character by character (fingerprints/rule/shorttext.py)."""

from difflib import SequenceMatcher

from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprints.rule.kernel import kernel
from fingerprints.rule.shorttext import (
    compare_short,
    compare_short_py,
    matching_blocks,
    ratio,
    replaced,
    short_measures,
)


def test_compare_short_tells_edits_from_other_names_and_numbers() -> None:
    assert compare_short("这是一段测试文本", "这是一段相似的测试文本").conflict == ""
    assert compare_short("被告人李某犯盗窃罪", "被告人王某犯盗窃罪").conflict == "name"
    assert compare_short("第3期开奖结果", "第4期开奖结果").conflict == "number"
    assert compare_short("", "x").similarity == 0.0


# few letters, so that blocks tie in length and the tie-break decides
_TEXT = st.text(alphabet="ab3北京", max_size=30)


@settings(max_examples=500, deadline=None)
@given(_TEXT, _TEXT)
def test_the_kernels_blocks_ratio_and_replacements_are_difflibs(a: str, b: str) -> None:
    assert kernel is not None, "fingerprints.rule._kernel is not built: run `make install`"
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    blocks = matching_blocks(a, b)
    assert blocks == [tuple(block) for block in matcher.get_matching_blocks()]
    assert ratio(a, b, blocks) == matcher.ratio()
    assert replaced(blocks) == [(i1, i2, j1, j2) for tag, i1, i2, j1, j2
                                in matcher.get_opcodes() if tag == "replace"]


# names of jieba's dictionary (北京, 上海, 李明), ordinary words, ASCII, full-width and
# Arabic-Indic digits (str.isdigit's), so that stretches touch names and numbers
_KEY = st.lists(st.sampled_from(["北京", "上海", "李明", "发布", "数据", "的", "a", "7", "３", "٣",
                                 "x"]), max_size=12).map("".join)


@settings(max_examples=800, deadline=None)
@given(_KEY, _KEY)
def test_the_kernels_short_comparison_is_the_pythons(a: str, b: str) -> None:
    assert kernel is not None, "fingerprints.rule._kernel is not built: run `make install`"
    reference = compare_short_py(a, b)
    assert short_measures(a, b) == (reference.similarity, reference.conflict,
                                    reference.number_replaced)
    assert compare_short(a, b) == reference


def test_the_kernels_short_comparison_finds_what_the_python_finds() -> None:
    assert short_measures("被告人李某犯盗窃罪", "被告人王某犯盗窃罪")[1] == "name"
    assert short_measures("第3期开奖结果", "第4期开奖结果") == (
        compare_short_py("第3期开奖结果", "第4期开奖结果").similarity, "number", True)
    # a digit beside the stretch is a number conflict, not a replaced number
    assert short_measures("常熟3位市民", "本市3位市民")[1:] == ("number", False)
    assert short_measures("", "x") == (0.0, "", False)
