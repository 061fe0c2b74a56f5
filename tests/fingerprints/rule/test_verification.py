"""A candidate pair checked on the sketches (fingerprints/rule/verification.py): copies,
partial copies, short texts, title-only pages and the templates ``verify`` refuses."""

import random

from fingerprints.rule import EngineConfig, extract, verify
from fingerprints.rule.match_model import starting_model

from ..texts import BULLETIN_1, BULLETIN_2, ENGLISH, OTHER, STORY, STORY_CUT, STORY_REPOST

# the rule's walk (labels-1), which these tests are about, whatever the default model
RULE = EngineConfig(model=starting_model())

CONFIG = RULE


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


def test_short_texts_need_near_identical_shingles() -> None:
    a = extract("", "今日股市收盘上涨")
    b = extract("", "今日股市收盘下跌")
    result = verify(a, b, CONFIG)
    assert not result.ok and result.reason == "short-text"
    assert verify(a, extract("", "今日股市收盘上涨。"), CONFIG).ok


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
    result = verify(wechat, paper, RULE)
    # 70-90 % of the shorter's 5-grams shared, Jaccard below the copy rule's 0.6
    assert result.ok and result.reason == "contained"
    assert 0.7 <= result.containment < 0.9 and result.similarity < 0.6
    off = RULE.with_bounds(cjk_containment=0.9, cjk_strict_containment=1.0)
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
    result = verify(wechat, paper, RULE)
    # below cjk_containment (0.7), above cjk_strict_containment (0.6)
    assert result.ok and result.reason == "contained-strict"
    assert 0.6 <= result.containment < 0.7
    assert not verify(wechat, paper, RULE.with_bounds(cjk_strict_containment=1.0)).ok
    # the same frame with another number in context: a template, refused in the band
    other = extract("滨江绿道全线贯通", "江城日报讯（记者 王明）"
                    + story.replace("约3万名", "约5万名") + tail)
    refused = verify(wechat, other, RULE)
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
    assert not verify(one, two, RULE.with_bounds(off_title_max_shingles=10_000)).ok


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
    assert verify(page, article, RULE.with_bounds(off_title_max_shingles=0)).ok


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
    loose = verify(answer, long_page, RULE.with_bounds(cjk_strict_jaccard=0.0))
    assert loose.ok and loose.reason == "contained-strict"


def _english_words(start: int, count: int) -> str:
    """``count`` distinct made-up English words (one shingle unit each)."""
    return " ".join(f"wordform{i}" for i in range(start, start + count))


def test_an_english_repost_with_another_lead_and_footer_is_a_copy_by_word_jaccard() -> None:
    body = _english_words(0, 150)
    repost = extract("", _english_words(1000, 45) + ". " + body)
    original = extract("", body + ". " + _english_words(2000, 45))
    assert not repost.char_shingles and not original.char_shingles
    result = verify(repost, original, RULE)
    # under the copy rule's containment (0.8), above word_jaccard (0.6)
    assert result.ok and result.reason == "copy"
    assert result.similarity >= 0.6 and result.containment < 0.8
    strict = RULE.with_bounds(word_jaccard=0.7, word_containment=1.0)
    assert not verify(repost, original, strict).ok
    # two texts sharing fewer of their five-word sequences stay apart
    shared = _english_words(0, 110)
    one = extract("", _english_words(3000, 75) + ". " + shared)
    two = extract("", shared + ". " + _english_words(4000, 75))
    refused = verify(one, two, RULE)
    assert not refused.ok and refused.similarity < 0.6


def test_an_english_story_kept_under_a_later_versions_lead_is_a_partial_copy() -> None:
    story = _english_words(0, 150)
    first = extract("", story + ". " + _english_words(5000, 40))
    later = extract("", _english_words(6000, 120) + ". " + story)
    result = verify(first, later, RULE)
    # below the copy rule's Jaccard and the general containment (0.9), above 0.7
    assert result.ok and result.reason == "contained"
    assert 0.7 <= result.containment < 0.9 and result.similarity < 0.6
    assert not verify(first, later, RULE.with_bounds(word_containment=0.9)).ok


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
    assert verify(one, two, RULE.with_bounds(title_jaccard=1.0)).reason == "dissimilar"
    # a bulletin for another day under the same headline keeps its number guard
    day1 = extract("城市道路建设进展通报", _prose(9, 10) + "第一期完成投资12亿元。" + shared)
    day2 = extract("城市道路建设进展通报", shared + "第一期完成投资15亿元。" + _prose(10, 10))
    assert verify(day1, day2, CONFIG).reason == "template: 1/1 numbers differ"
    # ... whatever the part guard's threshold: one headline is one frame, never a part
    lenient = RULE.with_bounds(guard_part_jaccard=0.4)
    assert verify(day1, day2, lenient).reason == "template: 1/1 numbers differ"


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
    full = verify(short, long_, RULE.with_bounds(guard_part_min_conflicts=1))
    assert not full.ok and full.reason.startswith("template")
    assert not verify(short, long_, RULE.with_bounds(guard_part_jaccard=0.0)).ok
    # two fillings of one frame keep the full guard (Jaccard far above the part's)
    day1 = extract("道路通报", report)
    day2 = extract("道路通报", report.replace("12亿元", "15亿元"))
    refused = verify(day1, day2, CONFIG)
    assert refused.similarity >= 0.3 and not refused.ok
    assert refused.reason.startswith("template")


def test_a_stub_that_says_nothing_of_its_item_is_decided_by_the_titles() -> None:
    config = RULE
    title = "协查通告，奖励3000元！"
    notice = ("2018年12月12日12时37分，在淮河路赤壁路路口发生一起两辆电动车碰撞的交通事故，"
              "事故发生后有一方电动车驾驶人驾车逃逸。望知情者与交警二大队事故中队联系，"
              "如查属实奖励人民币叁仟元，另正告肇事者看到通告后主动到公安机关自首。")
    stub = extract(title, "来源：市公安局交警支队二大队事故中队")  # a source line only
    full = extract(title + "_交警二大队", notice)
    assert stub.off_title and stub.sketch.shingles < config.bounds.short_shingles
    result = verify(stub, full, config)
    assert result.ok and result.reason == "title-only"
    # under another title the stub says nothing: two items
    assert not verify(stub, extract("寻物启事，奖励500元", notice), config).ok
    # the title test of title-only pages holds: another number in the title
    other = verify(extract("协查通告，奖励5000元！", "来源：市公安局交警支队二大队事故中队"),
                   full, config)
    assert not other.ok and other.reason.startswith("template")
    # a short body about its title is a short text, not a stub: the body rules decide
    flash = extract(title, "交警二大队协查通告：知情者奖励3000元。")
    assert not flash.off_title
    assert verify(flash, full, config).reason == "short-text"
    # a stub against a short text under the same title, whichever is the smaller
    for words in ("来源：二大队", "来源：市公安局交警支队二大队事故中队值班室供稿"):
        side = extract(title, words)
        assert side.off_title
        assert verify(side, flash, config).reason == "title-only"
    # off_title_max_shingles=0 turns the off-title rules off, this one too
    assert verify(stub, full, config.with_bounds(off_title_max_shingles=0)).reason == "short-text"


def test_the_seed_papers_short_pair_verifies_and_short_templates_do_not() -> None:
    config = RULE
    a = extract("计算机应用与软件", "海量网络文本去重系统实验测试，这是一段测试文本的内容。")
    b = extract("计算机应用和软件2",
                "海量网络文本去重系统实验检测，这是一段相似的测试文本的内容。")
    assert verify(a, b, config).reason == "short-edit"
    bulletin = "北京今日最高气温30度，空气质量良。"
    for other in ("上海今日最高气温30度，空气质量良。", "北京今日最高气温31度，空气质量良。"):
        result = verify(extract("天气", bulletin), extract("天气", other), config)
        assert not result.ok and result.reason.startswith("template")


TENDER = (
    "{c}市公共资源交易中心发布中标结果公告。项目名称：{c}市城区道路绿化提升工程施工项目，"
    "建设地点位于{c}市主城区。招标人为{c}市园林绿化管理局，招标代理机构为{c}市建设工程咨询"
    "有限公司。本项目采用公开招标方式，共有六家单位参与投标，经评标委员会评审，确定第一中标"
    "候选人。项目工期为一百八十日历天，质量要求为合格。公示期为三个工作日，投标人或者其他"
    "利害关系人对评标结果有异议的，应当在公示期内向{c}市公共资源交易中心提出。"
)


def test_the_name_guard_keeps_a_template_for_another_town_apart() -> None:
    config = RULE
    nanjing = extract("中标结果公告", TENDER.format(c="南京"))
    hangzhou = extract("中标结果公告", TENDER.format(c="杭州"))
    result = verify(nanjing, hangzhou, config)
    assert not result.ok and "names differ" in result.reason
    # the same notice reposted with a header is still a copy
    repost = extract("转发：中标结果公告", "来源：网络。" + TENDER.format(c="南京"))
    assert verify(nanjing, repost, config).ok
    # the guard counts: with it off (min conflicts above what differs) they would match
    loose = RULE.with_bounds(name_guard_min_conflicts=50)
    assert verify(nanjing, hangzhou, loose).ok
