"""Articles for the dashboard tests: stories written for these tests, with reposts made
the way aggregators make them (a source line, a footer, a cut paragraph)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

RIVERSIDE = (
    "本报讯 经过两年建设，江城滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和"
    "三个湿地保护区。绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长"
    "近六成。\n绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。"
    "管理处表示，未来还将增设无障碍坡道和儿童游乐区，方便老人和家庭出行。\n市园林局有关负责人说，"
    "滨江绿道是城市更新的重点项目之一，下一步将与城区慢行系统衔接，让市民从家门口就能走上绿道。"
    "不少市民表示，周末带孩子来江边骑车已经成为新的生活方式。"
)
LIBRARY = (
    "为满足上班族的阅读需求，市图书馆从下月起推出夜间借阅服务，工作日开放时间延长至晚上十点，"
    "并在一楼大厅设置自助借还机，全天二十四小时可用。\n图书馆馆长表示，过去一年读者问卷显示，"
    "超过七成受访者希望在下班后也能借书。新服务上线后，读者凭身份证或电子读者证即可办理借还，"
    "无需排队。\n此外，图书馆还将每月举办两场晚间读书会，邀请本地作家和学者与读者交流。馆方提醒，"
    "夜间时段仅开放一至三层阅览区，古籍和特藏文献仍需在白天预约查阅。"
)
MUSEUM = (
    "省博物馆新馆特展“吉金耀世”昨日开幕，三百余件商周青铜器首次集中展出，其中一件兽面纹方鼎"
    "为近年考古发掘的重要成果。\n策展人介绍，展览分为礼器、兵器和生活用具三个单元，通过数字投影"
    "还原青铜器铸造过程，观众可以在互动区亲手体验范铸工艺。\n展览将持续至明年三月，实行免费预约"
    "参观，每日限流八千人。博物馆还为中小学生设计了研学课程，讲解青铜器上的铭文和纹饰所承载的"
    "历史信息。"
)
HARVEST = (
    "农业农村部门最新数据显示，全国秋粮收获进度已经过半，其中玉米收获进度快于去年同期，"
    "水稻收获正由南向北有序推进。多个粮食主产省的机收率超过九成。\n专家分析，今年秋粮生长期间"
    "光温条件总体较好，虽然局部地区遭遇阶段性干旱，但通过及时灌溉和病虫害统防统治，单产有望"
    "保持稳定。\n各地农机合作社组织跨区作业队伍，开展抢收抢烘，减少因降雨造成的损失。粮食部门"
    "同时提醒，农户要做好晾晒和储存，防止霉变，确保颗粒归仓。"
)
SOURCE = "转载自江城晚报客户端\n"
FOOTER = "\n（来源：综合报道 责任编辑：王小明）更多精彩内容请关注本站公众号。"

XSS_TITLE = '<script>alert("t")</script>" onmouseover="alert(1)" x="'
XSS_CONTENT = (
    '<script>alert("c")</script>" onmouseover="alert(2)" ' + HARVEST
    + ' <img src=x onerror=alert(3)> "><svg onload=alert(4)>'
)


def repost(body: str) -> str:
    return SOURCE + body + FOOTER


def cut(body: str) -> str:
    return "\n".join(body.split("\n")[:-1]) + FOOTER


def edited(body: str) -> str:
    """A light copy edit: one phrase reworded, one sentence added at the end."""
    return body.replace("前来骑行和散步", "前来骑车、跑步和散步").replace(
        "减少因降雨造成的损失", "尽量减少因降雨造成的损失") + "（完）"


def article(nid: str, title: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"nid": nid, "url": f"https://news.example/{nid}", "title": title,
            "content": content, **extra}


# The engine places these deterministically: a copy under another title joins by content
# (distance 0, similarity 1: nothing to review); a lightly edited copy under the same title
# joins by the title rule (a review-queue item, with a diff to show).
CORPUS = [
    article("river-1", "江城滨江绿道全线贯通 市民周末骑行人数创新高", RIVERSIDE,
            media="Evening Courier", hotness=40),
    article("river-2", "滨江绿道贯通（转载）", RIVERSIDE, media="City Daily", hotness=75),
    article("river-3", "江城滨江绿道全线贯通 市民周末骑行人数创新高", edited(RIVERSIDE),
            media="News Aggregator", hotness=20),
    article("library-1", "市图书馆推出夜间借阅服务", LIBRARY, media="Metro Online", hotness=30),
    article("library-2", "图书馆夜间借阅（转载）", LIBRARY, media="City Daily", hotness=10),
    article("museum-1", "省博物馆新展开幕 三百件青铜器首次集中亮相", MUSEUM,
            media="Morning Post", hotness=50),
    article("museum-2", "青铜器特展开幕", MUSEUM, media="News Aggregator", hotness=5),
    article("xss-1", XSS_TITLE, XSS_CONTENT, media='<b>"Media"</b>', hotness=9,
            url='https://news.example/xss-1?q="><script>alert(5)</script>'),
    article("xss-2", XSS_TITLE, edited(XSS_CONTENT), media="City Daily", hotness=3),
]


def load(client: Any, auth: dict[str, str], run_worker: Callable[[], int],
         items: Iterable[dict[str, Any]] = CORPUS) -> None:
    """Post the articles through the API and run one worker over them: it processes the
    jobs in order, so the first article of a story founds its docId and the copies join."""
    for item in items:
        response = client.post("/api/v1/articles", data=json.dumps(item),
                               content_type="application/json", **auth)
        assert response.status_code in (200, 202), response.content
    run_worker()
