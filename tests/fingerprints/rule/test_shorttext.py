"""Short texts compared character by character (fingerprints/rule/shorttext.py)."""

from fingerprints.rule.shorttext import compare_short


def test_compare_short_tells_edits_from_other_names_and_numbers() -> None:
    assert compare_short("这是一段测试文本", "这是一段相似的测试文本").conflict == ""
    assert compare_short("被告人李某犯盗窃罪", "被告人王某犯盗窃罪").conflict == "name"
    assert compare_short("第3期开奖结果", "第4期开奖结果").conflict == "number"
    assert compare_short("", "x").similarity == 0.0
