import random
from dataclasses import replace

import pytest

from fingerprints.rule import (
    Candidate,
    EngineConfig,
    Features,
    decide,
    extract,
    extract_many,
    verify,
)
from fingerprints.rule.headline import split_title
from fingerprints.rule.normalize import normalize

from .texts import BULLETIN_1, BULLETIN_2, ENGLISH, OTHER, STORY, STORY_CUT, STORY_REPOST

CONFIG = EngineConfig()


@pytest.mark.parametrize("k", [-1, 9])
def test_it_rejects_k_outside_0_to_8(k: int) -> None:
    with pytest.raises(ValueError, match="k must be"):
        EngineConfig(k=k)
    with pytest.raises(ValueError, match="title_k must be"):
        EngineConfig(title_k=k)


def test_features_round_trip_through_bytes() -> None:
    features = extract("统计局：工业生产稳中有升", STORY)
    data = features.to_bytes()
    assert isinstance(data, bytes)
    assert Features.from_bytes(data) == features
    assert Features.from_bytes(memoryview(data)) == features


def test_extraction_is_deterministic_and_batchable() -> None:
    one = extract("标题", STORY)
    assert extract("标题", STORY) == one
    assert extract_many([("标题", STORY), ("", OTHER)]) == [one, extract("", OTHER)]


def test_html_and_full_width_forms_do_not_change_the_fingerprint() -> None:
    plain = extract("", "国家统计局发布数据，工业增加值增长6.8%。")
    marked = extract("", "<p>国家统计局发布数据，工业增加值增长６．８％。</p>&nbsp;")
    assert plain.content_fp == marked.content_fp


def test_a_repost_with_new_header_and_footer_verifies() -> None:
    result = verify(extract("", STORY), extract("", STORY_REPOST), CONFIG)
    assert result.ok, result
    assert result.similarity > 0.7


def test_a_cut_copy_verifies_by_containment() -> None:
    result = verify(extract("", STORY), extract("", STORY_CUT), CONFIG)
    assert result.ok, result
    assert result.containment > 0.9


def test_different_stories_do_not_verify() -> None:
    assert not verify(extract("", STORY), extract("", OTHER), CONFIG).ok
    assert not verify(extract("", STORY), extract("", ENGLISH), CONFIG).ok


def test_the_same_bulletin_for_another_day_is_vetoed_by_its_numbers() -> None:
    result = verify(extract("", BULLETIN_1), extract("", BULLETIN_2), CONFIG)
    assert not result.ok
    assert result.reason.startswith("template") or result.reason == "dissimilar"


def test_empty_texts_never_match() -> None:
    assert not verify(extract("", ""), extract("", ""), CONFIG).ok


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


def test_batch_and_single_extraction_give_identical_features() -> None:
    items = [("标题一", STORY), ("", OTHER), ("", ""), ("Council", ENGLISH), ("x", "短"),
             ("", BULLETIN_1), ("（国际）标题", STORY_REPOST)]
    assert extract_many(items, batch=3) == [extract(t, c) for t, c in items]


def test_features_of_an_empty_article_are_empty() -> None:
    features = extract("", "")
    assert (features.title_fp, features.content_fp, features.token_count) == (0, 0, 0)


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


def test_short_texts_need_near_identical_shingles() -> None:
    a = extract("", "今日股市收盘上涨")
    b = extract("", "今日股市收盘下跌")
    result = verify(a, b, CONFIG)
    assert not result.ok and result.reason == "short-text"
    assert verify(a, extract("", "今日股市收盘上涨。"), CONFIG).ok


def test_features_stay_compact() -> None:
    assert len(extract("统计局：工业生产稳中有升", STORY * 4).to_bytes()) < 1200


def test_a_story_reissued_the_next_day_is_not_vetoed_by_its_dateline() -> None:
    today = extract("", STORY)
    tomorrow = extract("", STORY.replace("3月5日电", "3月6日电"))
    assert verify(today, tomorrow, CONFIG).ok


def test_a_photo_series_item_with_another_number_is_vetoed() -> None:
    caption = (
        "新华社照片，杭州，2024年5月1日 西湖游船（{}） 5月1日，游客在杭州西湖乘坐游船观光。"
        "当日是劳动节假期第一天，西湖景区迎来客流高峰，各游船码头秩序井然。新华社记者 王明 摄"
    )
    result = verify(extract("", caption.format(3)), extract("", caption.format(4)), CONFIG)
    assert not result.ok
    assert result.reason.startswith("template")


def test_photo_series_items_whose_captions_share_the_series_text_are_vetoed_by_the_title() -> None:
    series = ("山西省左云县店湾镇曾经是全国产煤大镇，矿井数量一度达到上百座，村村有多座煤矿。"
              "煤炭产业带动了当地经济，一度造就了不少明星村。然而，多年的高强度煤炭开采让地下水系"
              "逐渐遭到破坏，采空区塌陷的区域不断蔓延，原来的住房也出现倒塌或者裂缝。"
              "随着小煤窑的关闭和资源枯竭，这些昔日的明星村逐渐成为空心村。")
    third = extract("（锐视角）（3）山西采煤明星村渴盼新生",
                    "台子山村的老村民走在空荡荡的村里，他身后的房屋很少有人居住。" + series)
    fourth = extract("（锐视角）（4）山西采煤明星村渴盼新生",
                     "秦家山村村民站在老宅的院子里，倒塌的院墙让她打消了搬回来的念头。" + series)
    assert third.title_key.startswith("3") and fourth.title_key.startswith("4")
    result = verify(third, fourth, CONFIG)
    assert result.similarity >= 0.6  # the bodies alone would be a copy
    assert not result.ok and result.reason == "template: another number in the title"
    # the same item re-issued under another desk tag is the same article
    again = extract("（图片故事）（3）山西采煤明星村渴盼新生",
                    "台子山村的老村民走在空荡荡的村里，他身后的房屋很少有人居住。" + series)
    assert verify(third, again, CONFIG).ok
    # a desk tag that is not a number is still left out of the title
    tagged = extract("（服务·生态）长江三峡库区成候鸟越冬驿站", series)
    assert tagged.title_key == "长江三峡库区成候鸟越冬驿站"


def test_a_chinese_repost_under_other_chrome_is_a_partial_copy_by_cjk_containment() -> None:
    story = ("江城滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
             "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长近六成。"
             "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")
    wechat = extract("绿道贯通", "点击上方蓝字关注我们。" + story + "喜欢就点个在看吧。")
    paper = extract("滨江绿道全线贯通", "江城日报讯（记者 王明）" + story
                    + "据悉，绿道二期工程将于明年开工，届时将延伸至城东新区，总长度将超过六十公里，"
                    "沿线还将新建五座城市公园和一个大型滨水广场。")
    assert wechat.char_shingles and paper.char_shingles
    result = verify(wechat, paper, EngineConfig())
    # 70-90 % of the shorter's 5-grams shared, Jaccard below the copy rule's 0.6
    assert result.ok and result.reason == "contained"
    assert 0.7 <= result.containment < 0.9 and result.similarity < 0.6
    off = EngineConfig().with_bounds(cjk_containment=0.9, cjk_strict_containment=1.0)
    assert not verify(wechat, paper, off).ok
    # English texts are word-shingled: the rule does not apply to them
    english = extract("", "The council approved the new budget on Monday after a long debate.")
    assert not english.char_shingles


def test_a_repost_under_chrome_a_third_of_its_text_matches_only_without_another_number() -> None:
    story = ("江城滨江绿道于本周六全线贯通，全长42公里，串联起沿江十一个公园和三个湿地保护区。"
             "绿道管理处负责人介绍，开通首日共有约3万名市民前来骑行和散步，较去年同期增长近六成。"
             "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")
    chrome = ("点击上方蓝字关注我们，每天推送本地新鲜事。投稿爆料请私信小编，商务合作请加微信。"
              "往期精彩回顾：城东菜市场改造完工，老街坊的早点摊回来了。")
    tail = ("据悉，绿道二期工程将于明年开工，届时将延伸至城东新区，总长度将超过六十公里，"
            "沿线还将新建五座城市公园和一个大型滨水广场。")
    wechat = extract("绿道贯通", chrome + story)
    paper = extract("滨江绿道全线贯通", "江城日报讯（记者 王明）" + story + tail)
    result = verify(wechat, paper, EngineConfig())
    # below cjk_containment (0.7), above cjk_strict_containment (0.6)
    assert result.ok and result.reason == "contained-strict"
    assert 0.6 <= result.containment < 0.7
    assert not verify(wechat, paper, EngineConfig().with_bounds(cjk_strict_containment=1.0)).ok
    # the same frame with another number in context: a template, refused in the band
    other = extract("滨江绿道全线贯通", "江城日报讯（记者 王明）"
                    + story.replace("约3万名", "约5万名") + tail)
    refused = verify(wechat, other, EngineConfig())
    assert not refused.ok and "numbers differ (strict band)" in refused.reason
    assert 0.6 <= refused.containment < 0.7


_PROSE_WORDS = ("城市", "道路", "公园", "居民", "绿地", "河流", "工程", "建设", "设施", "环境",
                "交通", "学校", "医院", "文化", "活动", "安全", "管理", "项目", "规划", "社区",
                "生活", "健康", "教育", "发展", "农业", "科技", "旅游", "节日", "天气", "夏季",
                "冬季", "早晨", "晚上", "广场", "书店", "展览", "音乐", "花园", "码头", "桥梁")


def _prose(seed: int, sentences: int) -> str:
    """Made-up Chinese prose, the same for the same seed: sentences of six to ten words
    of a fixed list (no numbers, no names), so every 5-gram is about as rare as in news."""
    rng = random.Random(seed)
    return "".join("".join(rng.choice(_PROSE_WORDS) for _ in range(rng.randint(6, 10))) + "。"
                   for _ in range(sentences))


def test_a_stub_body_under_two_unrelated_titles_is_decided_by_the_titles() -> None:
    stub = "视频来自：百度贴吧"
    one = extract("我发表了一篇视频贴，大伙来看看吧", stub)
    two = extract("疯狂社会要", stub)
    refused = verify(one, two, CONFIG)
    assert refused.similarity == 1.0
    assert not refused.ok and refused.reason == "empty"
    # the same stub under the same title is the same post; with no title to tell them
    # apart, the bodies decide
    assert verify(one, extract("我发表了一篇视频贴，大伙来看看吧", stub), CONFIG).ok
    assert verify(extract("", stub), extract("", stub), CONFIG).ok
    # a short repost under a lightly edited title still matches (the seed paper's pair
    # is tested through the API in tests/api)
    body = "男子利用坐牢经历去诈骗，骗走女子20多万"
    assert verify(extract(body, body), extract("男子利用坐牢经历去诈骗 骗走女子20多万元", body),
                  CONFIG).ok


def test_a_long_body_under_site_name_titles_is_compared_as_a_body() -> None:
    body = _prose(1, 40)
    one = extract("大庆纪检监察_百湖清风", body)
    two = extract("内蒙古中小企业信息平台", body)
    assert one.off_title and two.off_title and one.sketch.shingles > 300
    result = verify(one, two, CONFIG)
    assert result.ok and result.reason == "copy"
    # site chrome crawled as the body (a disclaimer) under the same two titles is not
    disclaimer = ("特别声明：以上文章内容仅代表作者本人观点，不代表本站观点或立场。"
                  "如有关于作品内容、版权或其它问题请于作品发表后的30日内与本站联系。")
    chrome = verify(extract("大庆纪检监察_百湖清风", disclaimer),
                    extract("内蒙古中小企业信息平台", disclaimer), CONFIG)
    assert chrome.similarity == 1.0 and not chrome.ok and chrome.reason == "empty"
    # off_title_max_shingles: under it, even the long body is decided by the titles
    assert not verify(one, two, EngineConfig().with_bounds(off_title_max_shingles=10_000)).ok


def test_a_chrome_page_is_not_a_partial_copy_of_an_article_carrying_the_same_chrome() -> None:
    disclaimer = ("特别声明：以上文章内容仅代表作者本人观点，不代表本站观点或立场。"
                  "如有关于作品内容、版权或其它问题请于作品发表后的30日内与本站联系。"
                  "本站转载的文章仅供读者参考，转载请注明出处。")
    article = extract("绿道贯通", _prose(6, 8) + disclaimer)
    page = extract("茂名化州违建阻断道路", disclaimer)
    assert page.off_title and not article.off_title
    result = verify(page, article, CONFIG)
    # the whole page is inside the article, before the disclaimer is learned
    assert result.containment == 1.0
    assert not result.ok and result.reason == "empty"
    assert verify(page, article, EngineConfig().with_bounds(off_title_max_shingles=0)).ok


def test_the_strict_band_does_not_take_a_quotation_from_a_long_page() -> None:
    # two thirds of a short answer quoted inside a page ten times its length
    quoted = _prose(2, 4)
    page = _prose(3, 30) + quoted + _prose(4, 30)
    answer = extract("问答", quoted + _prose(5, 1))
    long_page = extract("举报材料", page)
    result = verify(answer, long_page, CONFIG)
    assert 0.6 <= result.containment < 0.7 and result.similarity < 0.1
    assert not result.ok and result.reason == "dissimilar"
    # without the Jaccard floor the strict band would take it
    loose = verify(answer, long_page, EngineConfig().with_bounds(cjk_strict_jaccard=0.0))
    assert loose.ok and loose.reason == "contained-strict"


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_cjk_strict_jaccard_must_be_a_share(value: float) -> None:
    with pytest.raises(ValueError, match="cjk_strict_jaccard must be between 0 and 1"):
        EngineConfig().with_bounds(cjk_strict_jaccard=value)


@pytest.mark.parametrize("value", [-1, 1.5, True])
def test_off_title_max_shingles_must_be_a_count(value: object) -> None:
    with pytest.raises(ValueError, match="off_title_max_shingles must be"):
        EngineConfig().with_bounds(off_title_max_shingles=value)  # type: ignore[arg-type]


def test_cjk_strict_containment_must_be_a_share() -> None:
    with pytest.raises(ValueError, match="cjk_strict_containment must be between 0 and 1"):
        EngineConfig().with_bounds(cjk_strict_containment=-0.1)


def _english_words(start: int, count: int) -> str:
    """``count`` distinct made-up English words (one shingle unit each)."""
    return " ".join(f"wordform{i}" for i in range(start, start + count))


def test_an_english_repost_with_another_lead_and_footer_is_a_copy_by_word_jaccard() -> None:
    body = _english_words(0, 150)
    repost = extract("", _english_words(1000, 45) + ". " + body)
    original = extract("", body + ". " + _english_words(2000, 45))
    assert not repost.char_shingles and not original.char_shingles
    result = verify(repost, original, EngineConfig())
    # under the copy rule's containment (0.8), above word_jaccard (0.6)
    assert result.ok and result.reason == "copy"
    assert result.similarity >= 0.6 and result.containment < 0.8
    strict = EngineConfig().with_bounds(word_jaccard=0.7, word_containment=1.0)
    assert not verify(repost, original, strict).ok
    # two texts sharing fewer of their five-word sequences stay apart
    shared = _english_words(0, 110)
    one = extract("", _english_words(3000, 75) + ". " + shared)
    two = extract("", shared + ". " + _english_words(4000, 75))
    refused = verify(one, two, EngineConfig())
    assert not refused.ok and refused.similarity < 0.6


def test_word_jaccard_must_be_a_share() -> None:
    with pytest.raises(ValueError, match="word_jaccard must be between 0 and 1"):
        EngineConfig().with_bounds(word_jaccard=1.5)


def test_an_english_story_kept_under_a_later_versions_lead_is_a_partial_copy() -> None:
    story = _english_words(0, 150)
    first = extract("", story + ". " + _english_words(5000, 40))
    later = extract("", _english_words(6000, 120) + ". " + story)
    result = verify(first, later, EngineConfig())
    # below the copy rule's Jaccard and the general containment (0.9), above 0.7
    assert result.ok and result.reason == "contained"
    assert 0.7 <= result.containment < 0.9 and result.similarity < 0.6
    assert not verify(first, later, EngineConfig().with_bounds(word_containment=0.9)).ok


def test_word_containment_must_be_a_share() -> None:
    with pytest.raises(ValueError, match="word_containment must be between 0 and 1"):
        EngineConfig().with_bounds(word_containment=-0.5)


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


def test_two_sites_copies_of_a_story_share_a_title_and_two_stories_of_one_site_do_not() -> None:
    body = _prose(7, 20)
    one = extract("打着雅好幌子，150次收受21人钱财_赤峰新闻网", body)
    two = extract("打着雅好幌子，150次收受21人钱财_手机网易网", body)
    assert one.title_fp == two.title_fp and one.title_key == two.title_key
    # a complaint site's channel description crawled as the body of two complaints: the
    # description names the site, not the complaint, so both pages are off their titles
    description = ("《湘问》是湖南日报社华声在线推出的问政平台，投诉直通车受理消费者的投诉，"
                   "帮助群众解决问题，监督相关部门的处理结果，欢迎网友踊跃参与。")
    apple = extract("苹果商店软件乱扣费_投诉举报_投诉直通车_华声在线", description)
    taobao = extract("淘宝维权不公正_消费投诉_投诉直通车_华声在线", description + "有问必答。")
    assert apple.off_title and taobao.off_title
    refused = verify(apple, taobao, CONFIG)
    assert refused.containment == 1.0 and not refused.ok and refused.reason == "empty"
    # a headline of one word is off its title only with the site's words beside it
    banner = "签到排名：今日本吧第个签到，本吧因你更精彩，明天继续来努力"
    assert extract("晒晒鞋【男鞋吧】_百度贴吧", banner).off_title
    assert not extract("晒晒鞋【男鞋吧】", banner).off_title


def test_a_short_headline_beside_a_long_site_name_stays_the_title() -> None:
    body = "刘翔宣布退役。" + _prose(14, 6)
    sports = extract("刘翔退役_凤凰网体育频道", body)
    assert sports.title_key == "刘翔退役" and not sports.off_title
    assert verify(sports, extract("刘翔退役_新浪体育", body), CONFIG).reason == "copy"
    # two bodyless pages of one site: their headlines differ, the site's name is not one
    empty = verify(extract("刘翔退役_凤凰网体育频道", ""), extract("姚明受伤_凤凰网体育频道", ""),
                   CONFIG)
    assert not empty.ok and empty.reason == "empty"


def test_a_repost_under_one_headline_needs_less_of_the_body() -> None:
    shared = _prose(8, 12)
    one = extract("人民日报怒批：再不整治，会让道德倒退", _prose(9, 10) + shared)
    two = extract("人民日报怒批：再不整治！会让道德倒退", shared + _prose(10, 10))
    result = verify(one, two, CONFIG)
    assert 0.3 <= result.similarity < 0.6 and result.containment < 0.6
    assert result.ok and result.reason == "same-headline"
    # another headline over the same bodies, or the rule turned off: refused
    other = extract("城市绿道贯通", shared + _prose(10, 10))
    assert verify(one, other, CONFIG).reason == "dissimilar"
    assert verify(one, two, EngineConfig().with_bounds(title_jaccard=1.0)).reason == "dissimilar"
    # a bulletin for another day under the same headline keeps its number guard
    day1 = extract("城市道路建设进展通报", _prose(9, 10) + "第一期完成投资12亿元。" + shared)
    day2 = extract("城市道路建设进展通报", shared + "第一期完成投资15亿元。" + _prose(10, 10))
    assert verify(day1, day2, CONFIG).reason == "template: 1/1 numbers differ"
    # ... whatever the part guard's threshold: one headline is one frame, never a part
    lenient = EngineConfig().with_bounds(guard_part_jaccard=0.4)
    assert verify(day1, day2, lenient).reason == "template: 1/1 numbers differ"


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_title_jaccard_must_be_a_share(value: float) -> None:
    with pytest.raises(ValueError, match="title_jaccard must be between 0 and 1"):
        EngineConfig().with_bounds(title_jaccard=value)


def test_a_report_inside_a_long_digest_survives_one_differing_number() -> None:
    # a short report inside a digest five times its length, whose copy of it gives one
    # figure otherwise (a date written out, a number brought up to date)
    report = "市交通局发布通报，城市道路建设工程进展顺利，第一期完成投资12亿元。" + _prose(11, 8)
    digest = _prose(12, 20) + report.replace("12亿元", "15亿元") + _prose(13, 20)
    short, long_ = extract("道路建设进展", report), extract("本周交通要闻汇总", digest)
    result = verify(short, long_, CONFIG)
    assert result.similarity < 0.3 and result.containment >= 0.9
    assert result.ok and result.reason == "contained"
    # the same pair with the full guard: one differing number vetoes it
    full = verify(short, long_, EngineConfig().with_bounds(guard_part_min_conflicts=1))
    assert not full.ok and full.reason.startswith("template")
    assert not verify(short, long_, EngineConfig().with_bounds(guard_part_jaccard=0.0)).ok
    # two fillings of one frame keep the full guard (Jaccard far above the part's)
    day1 = extract("道路通报", report)
    day2 = extract("道路通报", report.replace("12亿元", "15亿元"))
    refused = verify(day1, day2, CONFIG)
    assert refused.similarity >= 0.3 and not refused.ok
    assert refused.reason.startswith("template")


@pytest.mark.parametrize("value", [0, -1, 1.5, True])
def test_the_part_guards_conflict_count_must_be_a_positive_integer(value: object) -> None:
    with pytest.raises(ValueError,
                       match="guard_part_min_conflicts must be an integer of 1 or more"):
        EngineConfig().with_bounds(guard_part_min_conflicts=value)  # type: ignore[arg-type]


def test_guard_part_jaccard_must_be_a_share() -> None:
    with pytest.raises(ValueError, match="guard_part_jaccard must be between 0 and 1"):
        EngineConfig().with_bounds(guard_part_jaccard=1.5)


@pytest.mark.parametrize("radius, joined", [(8, True), (5, True), (4, False), (3, False)])
def test_the_candidate_radius_decides_how_far_a_shared_block_reaches(radius, joined) -> None:
    """A copy whose content fingerprint differs in 5 bits, all in one block of four
    (k = 3): the other three blocks are shared, so the index returns it; it is verified
    only when within candidate_radius (no probes, no title or key lookups here)."""
    from fingerprints.batch.replay import Item, Replayer

    config = EngineConfig(candidate_radius=radius, probe_bits=0)
    first = replace(extract("", STORY, config), keys=b"", title_fp=0)
    copy = replace(first, content_fp=first.content_fp ^ (0b11111 << 48))
    replayer = Replayer(config)
    replayer.add(Item(seq=1, nid="a", features=first))
    found = replayer.add(Item(seq=2, nid="b", features=copy))
    assert (found.anchor == 1) is joined
    if joined:
        assert (found.matched_by, found.distance) == ("content", 5)


def test_title_min_tokens_decides_which_titles_have_a_fingerprint() -> None:
    title = "北京"  # one word that weighs
    assert extract(title, STORY, EngineConfig()).title_fp == 0
    assert extract(title, STORY, EngineConfig(title_min_tokens=1)).title_fp != 0
    assert extract("北京 上海", STORY, EngineConfig()).title_fp != 0
