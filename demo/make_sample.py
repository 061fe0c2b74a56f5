"""Writes demo/sample.jsonl: a small corpus written for this project, with reposts.

Every story below was written for dedupsite's demo; reposts are made from them
the way aggregators make them (new headline, a source line, a footer, a
cut paragraph). Run: python demo/make_sample.py
"""

from __future__ import annotations

import json
from pathlib import Path

STORIES = [
    ("riverside", "zh", "江城滨江绿道全线贯通 市民周末骑行人数创新高",
     "本报讯 经过两年建设，江城滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
     "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长近六成。\n"
     "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。管理处表示，"
     "未来还将增设无障碍坡道和儿童游乐区，方便老人和家庭出行。\n"
     "市园林局有关负责人说，滨江绿道是城市更新的重点项目之一，下一步将与城区慢行系统衔接，"
     "让市民从家门口就能走上绿道。不少市民表示，周末带孩子来江边骑车已经成为新的生活方式。"),
    ("library", "zh", "市图书馆推出夜间借阅服务 自助借还机二十四小时开放",
     "为满足上班族的阅读需求，市图书馆从下月起推出夜间借阅服务，工作日开放时间延长至晚上十点，"
     "并在一楼大厅设置自助借还机，全天二十四小时可用。\n"
     "图书馆馆长表示，过去一年读者问卷显示，超过七成受访者希望在下班后也能借书。新服务上线后，"
     "读者凭身份证或电子读者证即可办理借还，无需排队。\n"
     "此外，图书馆还将每月举办两场晚间读书会，邀请本地作家和学者与读者交流。馆方提醒，"
     "夜间时段仅开放一至三层阅览区，古籍和特藏文献仍需在白天预约查阅。"),
    ("harvest", "zh", "秋粮收获进度过半 多地机收率超过九成",
     "农业农村部门最新数据显示，全国秋粮收获进度已经过半，其中玉米收获进度快于去年同期，"
     "水稻收获正由南向北有序推进。多个粮食主产省的机收率超过九成。\n"
     "专家分析，今年秋粮生长期间光温条件总体较好，虽然局部地区遭遇阶段性干旱，但通过及时灌溉和"
     "病虫害统防统治，单产有望保持稳定。\n"
     "各地农机合作社组织跨区作业队伍，开展抢收抢烘，减少因降雨造成的损失。粮食部门同时提醒，"
     "农户要做好晾晒和储存，防止霉变，确保颗粒归仓。"),
    ("museum", "zh", "省博物馆新展开幕 三百件青铜器首次集中亮相",
     "省博物馆新馆特展“吉金耀世”昨日开幕，三百余件商周青铜器首次集中展出，其中一件兽面纹方鼎"
     "为近年考古发掘的重要成果。\n"
     "策展人介绍，展览分为礼器、兵器和生活用具三个单元，通过数字投影还原青铜器铸造过程，"
     "观众可以在互动区亲手体验范铸工艺。\n"
     "展览将持续至明年三月，实行免费预约参观，每日限流八千人。博物馆还为中小学生设计了"
     "研学课程，讲解青铜器上的铭文和纹饰所承载的历史信息。"),
    ("transit", "en", "City council approves new night bus routes",
     "The city council voted on Tuesday to add six night bus routes starting next spring, "
     "connecting the central station with the northern and eastern suburbs after midnight.\n"
     "Transport officials said the routes respond to a survey in which shift workers and students "
     "described long waits for taxis after the last train. Buses will run every 20 minutes "
     "between midnight and 5am on weekdays and every 15 minutes at weekends.\n"
     "The plan costs about 4 million a year and will be reviewed after twelve months. Councillors "
     "who opposed it questioned whether ridership would justify the expense, while unions welcomed "
     "safer journeys home for night workers."),
    ("bakery", "en", "Local bakery wins national bread award",
     "A family bakery on Mill Street has won the national sourdough award, beating more than 300 "
     "entries from across the country in a blind tasting held in the capital last weekend.\n"
     "The owners, who opened the shop eight years ago, said their loaf uses a starter kept alive "
     "since the bakery opened and flour milled within thirty miles. Judges praised its open crumb "
     "and deep crust.\n"
     "Queues formed outside the shop on Monday morning, and the bakery said it would extend its "
     "opening hours and hire two apprentices to keep up with demand over the coming months."),
    ("solar", "en", "School installs rooftop solar panels",
     "Northfield High School has finished installing 400 solar panels on its sports hall roof, "
     "a project expected to cover about a third of the school's electricity use.\n"
     "Students in the science club tracked the installation and will publish daily generation "
     "figures on a screen in the main corridor. The head teacher said the savings would pay for "
     "new laboratory equipment.\n"
     "The project was funded by a regional grant and a parents' association appeal that raised "
     "more than its target in six weeks."),
]

FOOTERS = {
    "zh": "\n（来源：综合报道 责任编辑：王小明）更多精彩内容请关注本站公众号。",
    "en": "\nShare this story. Follow us for more local news every morning.",
}
SOURCE_LINES = {"zh": "转载自江城晚报客户端\n", "en": "Reposted from the Evening Courier\n"}
MEDIA = ["Evening Courier", "City Daily", "News Aggregator", "Metro Online", "Morning Post"]


def variants(key: str, lang: str, title: str, body: str) -> list[dict]:
    paragraphs = body.split("\n")
    rows = [
        dict(nid=f"{key}-orig", title=title, content=body, media=MEDIA[0], hotness=40),
        dict(nid=f"{key}-repost-1", title=title + ("（转载）" if lang == "zh" else " (repost)"),
             content=SOURCE_LINES[lang] + body + FOOTERS[lang], media=MEDIA[1], hotness=75),
        dict(nid=f"{key}-repost-2", title=title,
             content="\n".join(paragraphs[:-1]) + FOOTERS[lang], media=MEDIA[2], hotness=20),
    ]
    if key in {"riverside", "transit", "harvest"}:
        rows.append(dict(nid=f"{key}-repost-3", title=title, content=body + FOOTERS[lang],
                         media=MEDIA[3], hotness=55))
    return rows


def main() -> None:
    out = Path(__file__).with_name("sample.jsonl")
    with out.open("w", encoding="utf-8") as fh:
        for key, lang, title, body in STORIES:
            for n, row in enumerate(variants(key, lang, title, body)):
                row["url"] = f"https://example.{n}.news/{lang}/{row['nid']}.html"
                row["category"] = "local"
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
