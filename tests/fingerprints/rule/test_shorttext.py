"""Short texts compared character by character (fingerprints/rule/shorttext.py)."""

from difflib import SequenceMatcher

from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprints.rule.kernel import kernel
from fingerprints.rule.shorttext import compare_short, matching_blocks, ratio, replaced


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
