"""The cluster page's "Clusters this one matches": docIds a member verifies against.

A story can end in two docIds: an article joins one docId even when it also matches
another, and a docId takes a member only when it matches the docId's anchor. Three
texts make it: X and Y share a third of their sentences (two docIds), Z holds both
whole, so Z verifies against X and against Y and joins X's docId.
"""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth.models import Group, User

from articles.editor import actions
from articles.models import Article, Doc, EditorLink, LinkKind

pytestmark = pytest.mark.django_db(transaction=True)

PART_1 = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
          "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")
PART_2 = ("市园林部门介绍，绿道建设历时两年，共栽植乔木八千余株，新增绿地面积六十公顷。"
          "沿线还设置了十二处观鸟平台和科普展板，方便市民了解湿地生态和候鸟迁徙知识。")
PART_3 = ("交通部门同步优化了周边公交线路，新开三条接驳专线，周末加密班次至每十分钟一班。"
          "绿道管理处提醒游客文明出行，不要在湿地核心区域投喂野生动物或采摘花草树木。")


def post_story(client, auth, run_worker, y_title: str = "城市交通与园林简讯") -> dict[str, Doc]:
    """x, y, z through the API and a real worker, one at a time; nid -> docId."""
    for nid, title, content in (("x", "滨江绿道全线贯通", PART_1 + PART_2),
                                ("y", y_title, PART_2 + PART_3),
                                ("z", "周末去哪儿：滨江绿道", PART_1 + PART_2 + PART_3)):
        client.post("/api/v1/articles", content_type="application/json", **auth,
                    data=json.dumps({"nid": nid, "url": f"https://a.example/{nid}",
                                     "title": title, "content": content}))
        run_worker()
    docs = {a.nid: a.doc for a in Article.objects.select_related("doc")}
    assert docs["x"] != docs["y"] and docs["z"] == docs["x"]
    return docs


@pytest.fixture
def story(client, auth, run_worker) -> dict[str, Doc]:
    return post_story(client, auth, run_worker)


def _editor(client) -> None:
    user = User.objects.create_user("editor", password="pw-12345-long")
    user.groups.add(Group.objects.get_or_create(name=actions.EDITORS_GROUP)[0])
    client.force_login(user)


def _related(client, doc: Doc) -> str:
    response = client.get(f"/clusters/{doc.doc_id}/", {"version": doc.version},
                          HTTP_HX_REQUEST="true", HTTP_HX_TARGET="related")
    assert response.status_code == 200
    return response.content.decode()


def test_a_docid_lists_the_docids_its_members_match_and_can_merge_into_one(client, story):
    _editor(client)
    x, y = story["x"], story["y"]
    page = client.get(f"/clusters/{y.doc_id}/").content.decode()
    assert 'hx-trigger="load"' in page and 'id="related"' in page
    html = _related(client, y)
    # y's anchor matches z, a member of x's docId (y and x themselves do not match)
    assert x.doc_id in html
    # the default model on the comparison vector names its largest weight (the rule's
    # model named its exit: "contained"): y's body is inside z's
    assert re.search(r'Matched: <bdi class="mono">y</bdi> ↔ <bdi class="mono">z</bdi> '
                     r"\(match: containment &gt;= 0\.95, \d+%\)", html)
    form = re.search(r'<form method="post" action="/clusters/' + y.doc_id
                     + r'/merge/".*?</form>', html, re.S)
    assert form is not None and f'name="target" value="{x.doc_id}"' in form.group(0)
    # and from x's side: z here matches y there
    assert y.doc_id in _related(client, x)
    # the suggestion's button merges
    assert f'name="target_version" value="{x.version}"' in form.group(0)
    response = client.post(f"/clusters/{y.doc_id}/merge/",
                           {"target": x.doc_id, "version": y.version,
                            "target_version": x.version})
    assert response.status_code in (200, 302)
    assert Article.objects.get(nid="y").doc == x
    assert "No member of this docId matches another cluster." in _related(client, x)


def test_a_cannot_link_keeps_a_docid_off_the_list(client, story):
    _editor(client)
    EditorLink.objects.create(kind=LinkKind.CANNOT, nid_a="z", nid_b="y")
    html = _related(client, story["y"])
    assert story["x"].doc_id not in html
    assert "No member of this docId matches another cluster." in html


def test_without_the_index_the_page_says_so_and_changes_nothing(client, story, redis_client):
    _editor(client)
    redis_client.flushdb()  # Redis restarted empty: the index is gone until rebuilt
    html = _related(client, story["y"])
    assert 'data-related="unavailable"' in html
    assert "The index cannot be read just now" in html
    assert {a.nid: a.doc for a in Article.objects.select_related("doc")} == story


def test_the_list_speaks_chinese(client, story):
    _editor(client)
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/clusters/"})
    page = client.get(f"/clusters/{story['y'].doc_id}/").content.decode()
    assert "本聚类匹配的其他聚类" in page
    assert '匹配： <bdi class="mono">y</bdi>' in _related(client, story["y"])
