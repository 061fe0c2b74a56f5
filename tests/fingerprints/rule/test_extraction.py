"""Extraction (fingerprints/rule/extraction.py): (title, content) -> features; what moves
a fingerprint and what does not, and how a crawled title is cut to its headline."""

import pytest

from fingerprints.rule import EngineConfig, extract, extract_many, headline
from fingerprints.rule.headline import split_title
from fingerprints.rule.normalize import normalize

from ..texts import BULLETIN_1, ENGLISH, OTHER, STORY, STORY_REPOST


def test_extraction_is_deterministic_and_batchable() -> None:
    one = extract("标题", STORY)
    assert extract("标题", STORY) == one
    assert extract_many([("标题", STORY), ("", OTHER)]) == [one, extract("", OTHER)]


def test_html_and_full_width_forms_do_not_change_the_fingerprint() -> None:
    plain = extract("", "国家统计局发布数据，工业增加值增长6.8%。")
    marked = extract("", "<p>国家统计局发布数据，工业增加值增长６．８％。</p>&nbsp;")
    assert plain.content_fp == marked.content_fp


def test_batch_and_single_extraction_give_identical_features() -> None:
    items = [("标题一", STORY), ("", OTHER), ("", ""), ("Council", ENGLISH), ("x", "短"),
             ("", BULLETIN_1), ("（国际）标题", STORY_REPOST)]
    assert extract_many(items, batch=3) == [extract(t, c) for t, c in items]


def test_features_of_an_empty_article_are_empty() -> None:
    features = extract("", "")
    assert (features.title_fp, features.content_fp, features.token_count) == (0, 0, 0)


@pytest.mark.parametrize("title", [
    "", "突尼斯选出太极迷", "（海外涉华）突尼斯", " （海外涉华）突尼斯", "\u3000【独家】标题",
    "[video] clip", "(3) 组图", "（3）（国际）标题", "〔评论〕标题", "标题（国际）", " ", "（",
])
def test_the_title_tag_check_gives_the_regex_answer(title: str) -> None:
    # _without_tags skips the regex for a title whose first character can neither open a
    # tag nor be the white space before one: the answer of the regex alone
    found = headline._TITLE_TAG.match(title)
    series = headline._SERIES_TAG.findall(found.group(0)) if found else []
    rest = title[found.end():] if found else title
    expected = " ".join([*series, rest]) if series else rest
    assert headline._without_tags(title) == expected


def test_a_leading_column_tag_does_not_change_the_title_fingerprint() -> None:
    plain = extract("突尼斯选出太极迷 中国功夫走红北非", STORY)
    tagged = extract("（海外涉华）突尼斯选出太极迷 中国功夫走红北非", STORY)
    assert plain.title_fp == tagged.title_fp != 0


def test_stopwords_and_punctuation_do_not_move_the_fingerprint() -> None:
    base = extract("", "国家统计局发布工业增加值数据 高技术制造业增长较快")
    noisy = extract("", "国家统计局，发布了工业增加值的数据！高技术制造业增长较快。")
    assert base.content_fp == noisy.content_fp


def test_extra_stopwords_change_the_weights() -> None:
    config = EngineConfig(extra_stopwords=frozenset({"统计局", "工业"}))
    assert extract("", STORY, config).content_fp != extract("", STORY).content_fp


@pytest.mark.parametrize(("title", "head", "site"), [
    ("不好意思，你不配做深圳人!_搜狐汽车_搜狐网", "不好意思,你不配做深圳人!", "搜狐汽车 搜狐网"),
    ("中国文艺网_书法志愿服务走进北京最美的乡村", "书法志愿服务走进北京最美的乡村", "中国文艺网"),
    ("我国刑事诉讼证人出庭作证制度浅析 - 渭南市中级人民法院网",
     "我国刑事诉讼证人出庭作证制度浅析", "渭南市中级人民法院网"),
    # a site's name longer than a short headline is not taken for it
    ("刘翔退役_凤凰网体育频道", "刘翔退役", "凤凰网体育频道"),
    ("【视频】刘翔_凤凰网体育频道", "【视频】刘翔", "凤凰网体育频道"),
    # a column's name in front of a headline twice its length
    ("百姓声音_陕西镇安县扶贫局干部打人致伤无人处理_海角社区",
     "陕西镇安县扶贫局干部打人致伤无人处理", "百姓声音 海角社区"),
    ("2018年公务员考试职位表", "2018年公务员考试职位表", ""),  # no separator
    ("2017-2019年脱贫攻坚公路工程", "2017-2019年脱贫攻坚公路工程", ""),  # a dash in it
    ("choose hope over fear - kennedy", "choose hope over fear - kennedy", ""),  # English
    ("___", "___", ""),
])
def test_a_crawled_title_is_cut_to_its_headline(title: str, head: str, site: str) -> None:
    assert split_title(normalize(title)) == (head, site)


def test_title_min_tokens_decides_which_titles_have_a_fingerprint() -> None:
    title = "北京"  # one word that weighs
    assert extract(title, STORY, EngineConfig()).title_fp == 0
    assert extract(title, STORY, EngineConfig(title_min_tokens=1)).title_fp != 0
    assert extract("北京 上海", STORY, EngineConfig()).title_fp != 0


def test_off_title_is_the_set_of_headline_words_none_in_the_body() -> None:
    """off_title stops at the first headline word found in the body; the definition it
    keeps: the informative words' set, none of them in the body."""
    from fingerprints.rule.extraction import _informative, off_title
    from fingerprints.rule.stopwords import default_stopwords

    stopwords = default_stopwords()

    def by_the_set(head: list[str], body: str, words: int, site: list[str]) -> bool:
        found = _informative(head, stopwords)
        if not words or not found:
            return False
        if len(found) < 2 and len(found | _informative(site, stopwords)) < 2:
            return False
        return not any(word in body for word in found)

    heads = [[], ["的"], ["工业"], ["工业", "生产"], ["工业", "的", "工业"], ["新浪", "声明"],
             ["a", "bc", "_x", "(注)", "稳中有升"], ["看点", "视频"], ["看点", "看点"]]
    bodies = ["", "工业生产稳中有升", "本文仅代表作者观点", "视频 看点 新浪"]
    sites = [[], ["新浪网"], ["看点"]]
    for head in heads:
        for body in bodies:
            for words in (0, 3):
                for site in sites:
                    expected = by_the_set(head, body, words, site)
                    assert off_title(head, body, words, stopwords, site) is expected
                    assert off_title(head, body, words, stopwords, lambda s=site: s) is expected
