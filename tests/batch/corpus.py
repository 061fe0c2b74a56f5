"""A small corpus written for these tests: Chinese and English stories, their reposts and
cut copies, a URL re-crawl, templated bulletins that must not merge, short texts,
title-only pages, a redirect page crawled under two unrelated titles, a repost under
other chrome that only the CJK containment rule accepts, one whose chrome is a third
of it, which only the strict band accepts, a platform's disclaimer crawled as a page's
whole body (found whole in an article that ends with it) and a forum's video stub under
two posts' own titles."""

from __future__ import annotations

from typing import Any

BRIDGE = (
    "新华社武汉6月12日电 记者从湖北省交通运输厅获悉，历时四年建设的江汉七桥今天正式通车。"
    "大桥全长四点二公里，主跨六百八十米，是长江中游跨度最大的双层钢桁梁悬索桥。"
    "上层为双向八车道城市快速路，下层预留轨道交通空间，设计时速八十公里。"
    "交通部门预计，大桥通车后汉口至汉阳的通行时间将由四十分钟缩短至十二分钟，"
    "可有效缓解既有桥梁的交通压力。建设单位介绍，施工过程中攻克了深水基础、"
    "大节段钢梁整体吊装等多项技术难题，申请国家专利二十三项。"
    "当天上午，数百名市民步行登桥参观，不少人拿出手机拍照留念。"
)
LIBRARY = (
    "本报讯 市图书馆从下月起推出夜间借阅服务，工作日开放时间延长至晚上十点，"
    "并在一楼大厅设置二十台自助借还机。图书馆馆长表示，过去一年读者问卷显示，"
    "超过七成受访者希望在下班后也能借书。此外，图书馆还将每月举办两场晚间读书会，"
    "邀请本地作家和学者与读者交流阅读心得。馆方提醒，夜间时段仅开放一至三层阅览区，"
    "古籍和特藏文献仍需在白天预约查阅，读者可通过官方小程序提前预约座位。"
)
FARM = (
    "新华社哈尔滨9月3日电 黑龙江省农业农村厅消息，全省今年粮食播种面积稳定在两亿一千万亩以上，"
    "水稻、玉米、大豆长势总体好于常年。农业专家介绍，今年夏季光照充足、降水适中，"
    "有利于作物灌浆成熟。为确保颗粒归仓，全省已组织各类收获机械十二万台，"
    "并在重点产区设立农机维修服务点三百多个。气象部门提醒，九月下旬北部地区可能出现早霜，"
    "各地要抓住晴好天气抢收抢晒，防止霜冻造成损失。"
)
FLOOD = (
    "The city council approved a new flood defence plan on Tuesday after three hours of debate. "
    "The scheme will raise the river wall along the old harbour by one metre and add two pumping "
    "stations in the eastern districts, which were badly hit by storms last winter. Engineers "
    "say the work will protect about four thousand homes and should be finished within two "
    "years. Some shop owners on the quay objected that construction would block access during "
    "the summer season, and the council promised to keep one lane open at all times."
)
MUSEUM = (
    "A small museum dedicated to the history of printing has reopened after a two year "
    "restoration. Visitors can now see a working nineteenth century press, a collection of "
    "wooden type donated by local families, and a new gallery about newspapers in the region. "
    "The director said the building's leaking roof had been replaced and the basement archive "
    "fitted with climate control, so that fragile posters and pamphlets can finally be shown."
)


# A repost under a WeChat account's header and an advertisement, with the library
# story's sentences verbatim: far in SimHash, found through the key index.
WECHAT = (
    "点击上方蓝字关注我们，每天获取城市生活资讯。今日推荐：夏季家装节火热进行中，全场家具五折起，"
    "凭本号截图到店再享九五折，更有空调冰箱等大家电限时秒杀，名额有限先到先得，"
    "报名热线见文末。本号长期招募兼职撰稿人和摄影爱好者，欢迎投稿。"
)
NIGHT_MARKET = (
    "本报讯 城南夜市经过三个月改造后重新开放，新增摊位一百二十个，"
    "统一配备了油烟净化设备和垃圾分类箱。市场管理方介绍，夜市营业时间为每天傍晚六点至凌晨一点，"
    "周末延长一小时。开业首晚客流超过两万人次，烧烤、小龙虾和手工甜品摊位前排起长队。"
    "城管部门表示，将在夜市周边增设临时停车位，并安排志愿者疏导交通。"
)
DISCLAIMER = (
    "特别声明：以上文章内容仅代表作者本人观点，不代表本站观点或立场。"
    "如有关于作品内容、版权或其它问题请于作品发表后的30日内与本站联系。"
    "本站转载的文章仅供读者参考，转载请注明出处。"
)
SEED_A = ("计算机应用与软件", "海量网络文本去重系统实验测试，这是一段测试文本的内容。")
SEED_B = ("计算机应用和软件2", "海量网络文本去重系统实验检测，这是一段相似的测试文本的内容。")

BULLETIN_TITLE = "沪深两市收盘综述"


# A redirect page crawled as the body of two unrelated articles (no word of either title).
REDIRECT = ("正在为您跳转到访问页面，如果您的浏览器没有自动跳转，请检查以下设置。"
            "请确保浏览器没有禁止发送cookie，请确保浏览器可以正常执行javascript脚本。"
            "若使用ie浏览器，请使用ie9及以上版本，并确保本地时间的准确性。")
# A story reposted by a WeChat account and printed by a paper with a byline and one more
# paragraph: 70-90 % of the shorter's 5-grams shared (the CJK containment rule).
GREENWAY = ("江城滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
            "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长近六成。"
            "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")

# A story under a WeChat account's header and ads, and printed by a paper with a byline
# and two more sentences: 60-70 % of the shorter's 5-grams shared, no number or name in
# context differs (the strict band, cjk_strict_containment).
LAKE = ("南湖公园改造工程本周完工，新修环湖步道8公里，增设座椅和夜间照明，"
        "湖边的老码头改建为观景平台。"
        "园林部门负责人介绍，改造期间共清理湖底淤泥十余万立方米，"
        "补种水生植物四十多种，水质明显好转。"
        "公园南门新建停车场一处，周末还将开通往返地铁站的免费接驳车。")
LAKE_CHROME = ("戳蓝字关注本号，本地吃喝玩乐一手掌握。想上头条请后台留言，广告合作请联系小编。"
               "往期回顾：老城区又开了一家网红面馆，排队两小时值不值？本周末商场满减活动火热报名中。")


def bulletin(day: int, close: str, change: str, volume: str, up: int, down: int) -> str:
    return (
        f"沪深两市6月{day}日收盘：上证综指报收{close}点，{change}，成交额{volume}亿元；"
        f"两市共有{up}只个股上涨，{down}只个股下跌。行业板块中，半导体、汽车整车涨幅居前，"
        "银行、保险板块小幅回调。分析人士认为，短期市场仍将维持震荡格局，"
        "投资者应关注政策面变化和外围市场走势，控制仓位，理性投资。"
    )


def record(nid: str, title: str, content: str, url: str | None = None,
           hotness: float = 1.0, media: str = "") -> dict[str, Any]:
    return {"nid": nid, "url": url or f"https://news.example/{nid}", "title": title,
            "content": content, "hotness": hotness, "media": media}


def corpus() -> list[dict[str, Any]]:
    """Articles in arrival order."""
    return [
        record("bridge-1", "江汉七桥今天正式通车", BRIDGE, hotness=5),
        record("library-1", "市图书馆推出夜间借阅服务", LIBRARY, hotness=2),
        record("stock-12", BULLETIN_TITLE,
               bulletin(12, "3012.45", "上涨0.82%", "2315", 2650, 1210)),
        record("bridge-repost", "（交通）江汉七桥今天正式通车",
               "（来源：长江日报）" + BRIDGE.replace("新华社武汉6月12日电 ", "")
               + "责任编辑：李明。本文来源于网络，如有侵权请联系删除。", hotness=9),
        record("flood-1", "Council approves flood defence plan", FLOOD, hotness=3),
        record("stock-13", BULLETIN_TITLE,
               bulletin(13, "2998.10", "下跌0.48%", "2104", 1320, 2540)),
        record("farm-1", "黑龙江粮食播种面积稳定在两亿一千万亩以上", FARM, hotness=4),
        record("bridge-cut", "【独家】江汉七桥今天正式通车", BRIDGE[: len(BRIDGE) * 3 // 4],
               hotness=1),
        record("flood-repost", "Council approves flood defence plan",
               "By our reporter. " + FLOOD + " Copyright 2024 Harbour Times. All rights reserved.",
               hotness=7),
        record("museum-1", "Printing museum reopens", MUSEUM, hotness=2),
        record("stock-14", BULLETIN_TITLE,
               bulletin(14, "3020.77", "上涨0.73%", "2456", 2801, 1050)),
        record("library-recrawl", "市图书馆推出夜间借阅服务", LIBRARY,
               url="https://news.example/library-1?utm_source=weibo&utm_medium=share"),
        record("farm-repost", "（农业）黑龙江粮食播种面积稳定在两亿一千万亩以上",
               FARM.replace("新华社哈尔滨9月3日电 ", "据新华社消息，"),
               hotness=4),
        record("museum-cut", "Printing museum reopens", MUSEUM[: len(MUSEUM) * 4 // 5], hotness=6),
        record("stock-12-copy", BULLETIN_TITLE,
               bulletin(12, "3012.45", "上涨0.82%", "2315", 2650, 1210), hotness=3),
        record("bridge-repost-2", "大桥通车 市民登桥留影", BRIDGE + "（完）", hotness=9),
        record("museum-repost", "Printing museum reopens", MUSEUM + " (AP)", hotness=50),
        record("library-wechat", "下班也能借书了！", WECHAT + LIBRARY[4:] + WECHAT),
        record("seed-a", *SEED_A),
        record("seed-b", *SEED_B),
        record("weather-bj", "天气", "北京今日最高气温30度，空气质量良。"),
        record("weather-sh", "天气", "上海今日最高气温30度，空气质量良。"),
        record("farm-video", "黑龙江粮食播种面积稳定在两亿一千万亩以上", ""),
        record("other-video", "视频：江边夜景灯光秀", ""),
        record("redirect-a", "陕西省道教协会召开常务理事会", REDIRECT),
        record("redirect-b", "顺丰与国际快递公司结盟合作", REDIRECT),
        record("greenway-wechat", "绿道贯通",
               "点击上方蓝字关注我们。" + GREENWAY + "喜欢就点个在看吧。"),
        record("greenway-paper", "江城新闻：滨江绿道全线贯通",
               "江城日报讯（记者 王明）" + GREENWAY + "据悉，绿道二期工程将于明年开工，"
               "届时将延伸至城东新区，总长度将超过六十公里，沿线还将新建五座城市公园和一个大型滨水广场。"),
        record("lake-wechat", "南湖公园改好了", LAKE_CHROME + LAKE),
        record("lake-paper", "南湖公园改造完工",
               "湖城晚报讯（记者 陈静）" + LAKE
               + "据了解，北湖公园改造工程也已启动，预计明年春天完工，"
               "届时两座公园将由绿道连成一片。市民可对改造方案提出建议。"),
        # the disclaimer page is inside the article that ends with it, but says nothing
        # about its own title: the titles decide (two docIds)
        record("night-market", "城南夜市改造后重新开放", NIGHT_MARKET + DISCLAIMER),
        record("disclaimer-page", "茂名化州违建阻断道路 究竟谁在纵容", DISCLAIMER),
        # one stub under two posts' own titles: two posts
        record("stub-a", "我发表了一篇视频贴，大伙来看看吧", "视频来自：百度贴吧"),
        record("stub-b", "疯狂社会要", "视频来自：百度贴吧"),
    ]


#: The partition the online engine gives (checked against it in test_spark_dedup).
EXPECTED = {
    frozenset({"bridge-1", "bridge-repost", "bridge-cut", "bridge-repost-2"}),
    frozenset({"library-1", "library-recrawl", "library-wechat"}),
    frozenset({"stock-12", "stock-12-copy"}),
    frozenset({"stock-13"}),
    frozenset({"stock-14"}),
    frozenset({"flood-1", "flood-repost"}),
    frozenset({"farm-1", "farm-repost", "farm-video"}),
    frozenset({"seed-a", "seed-b"}),
    frozenset({"weather-bj"}),
    frozenset({"weather-sh"}),
    frozenset({"other-video"}),
    frozenset({"museum-1", "museum-cut", "museum-repost"}),
    frozenset({"redirect-a"}),
    frozenset({"redirect-b"}),
    frozenset({"greenway-wechat", "greenway-paper"}),
    frozenset({"lake-wechat", "lake-paper"}),
    frozenset({"night-market"}),
    frozenset({"disclaimer-page"}),
    frozenset({"stub-a"}),
    frozenset({"stub-b"}),
}
