"""A few real-looking news stories for the drills that compare docIds across a change of
database or code: two copies of each story from two sites, then one repost of each."""

from __future__ import annotations

from typing import Any

STORIES = [
    "滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
    "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步。",
    "市气象台今天上午发布寒潮蓝色预警，受强冷空气影响，未来三天全市气温将下降八到十度，"
    "最低气温可达零下五度，并伴有五到六级偏北风。",
    "本市第三条地铁线路今日开通试运营，全线设站二十一座，日均客流预计超过二十万人次，"
    "沿线居民通勤时间将缩短近一半。",
    "Officials said the new harbour bridge will open to traffic next spring after six "
    "years of construction, cutting the trip between the two districts to ten minutes.",
]


def originals() -> list[dict[str, Any]]:
    """Each story from two sites (the second copy marked as reposted): one docId each."""
    return [{"nid": f"o{i}-{j}", "url": f"https://site{j}.example/{i}", "title": f"新闻{i}",
             "content": story + ("（转载）" if j else "")}
            for i, story in enumerate(STORIES) for j in range(2)]


def reposts() -> list[dict[str, Any]]:
    """Each story once more, from a third site with its own credit line."""
    return [{"nid": f"r{i}", "url": f"https://elsewhere.example/{i}", "title": f"新闻{i}",
             "content": story + "（来源：晚报）"} for i, story in enumerate(STORIES)]
