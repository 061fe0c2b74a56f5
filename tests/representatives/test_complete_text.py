"""The representative is a complete copy: hotness elects among members at least half
as long as the cluster's longest; a merge keeps the target's representative and is
refused when either side changed (docs/hbase.md, "Which member is the representative")."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Group, User

from articles.editor import actions
from articles.editor.actions import EDITORS_GROUP
from articles.models import Article, Doc

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.dialect]

FULL = ("江城滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长近六成。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。"
        "市园林局表示，明年还将建设北岸支线，届时绿道总长将超过六十公里，覆盖主城区全部滨水空间。"
        "沿线居民普遍认为，绿道贯通后出行和休闲都更加方便，周末带孩子骑行成了新的家庭活动。")
OTHER = ("市图书馆从下月起推出夜间借阅服务，工作日开放时间延长至晚上十点，并在一楼大厅设置"
         "自助借还机。图书馆负责人表示，夜间服务将根据读者反馈逐步扩大到周末。") * 3


def post(client, auth, nid, hotness, body, title="滨江绿道全线贯通"):
    response = client.post(
        "/api/v1/articles", content_type="application/json", **auth,
        data=json.dumps({"nid": nid, "url": f"https://n{nid}.example/{nid}", "title": title,
                         "content": body, "hotness": hotness}))
    assert response.status_code in (200, 202), response.content


def test_a_truncated_hotter_repost_is_not_elected(client, auth, run_worker):
    post(client, auth, "full", 1, FULL)
    run_worker()
    truncated = FULL[: len(FULL) * 2 // 5]  # 40 %: the crawler cut it short
    post(client, auth, "cut", 500, truncated)
    post(client, auth, "near", 3, FULL[:-20])  # nearly whole, a little hotter
    run_worker()
    doc = Article.objects.get(nid="full").doc
    assert Article.objects.get(nid="cut").doc_pk == doc.pk  # one story...
    doc.refresh_from_db()
    assert doc.representative.nid == "near"  # ...whose hottest complete copy represents it
    assert Article.objects.get(nid="cut").content_length == len(truncated)
    # an editor may still elect the short one
    actions.choose_representative(Article.objects.get(nid="cut"), None)
    doc.refresh_from_db()
    assert doc.representative.nid == "cut"


def test_a_long_newcomer_can_unseat_a_representative_that_is_now_too_short(
        client, auth, run_worker):
    short, long = FULL[:95], FULL
    assert 2 * len(short) < len(long)
    post(client, auth, "short", 50, short)
    run_worker()
    post(client, auth, "long", 1, long)  # more than twice as long, cooler
    run_worker()
    doc = Article.objects.get(nid="short").doc
    assert Article.objects.get(nid="long").doc_pk == doc.pk  # the short copy is contained
    doc.refresh_from_db()
    assert doc.representative.nid == "long"


@pytest.fixture
def editor(db):
    user = User.objects.create_user("anna", password="pw-anna-123456")
    user.groups.add(Group.objects.get_or_create(name=EDITORS_GROUP)[0])
    return user


def two_clusters(client, auth, run_worker):
    post(client, auth, "t1", 5, FULL)
    post(client, auth, "t2", 1, FULL[:-10])
    post(client, auth, "s1", 90, OTHER, title="图书馆推出夜间借阅")
    run_worker()
    return Article.objects.get(nid="s1").doc, Article.objects.get(nid="t1").doc


def test_a_merge_keeps_the_targets_representative(client, auth, run_worker, editor):
    source, target = two_clusters(client, auth, run_worker)
    assert target.representative.nid == "t1"
    merged = actions.merge_docs(source, target, editor, version=source.version,
                                target_version=target.version)
    merged.refresh_from_db()
    assert merged.representative.nid == "t1" and merged.representative_pinned  # not s1 (90)
    assert merged.size == 3


def test_a_merge_may_take_the_incoming_representative(client, auth, run_worker, editor):
    source, target = two_clusters(client, auth, run_worker)
    merged = actions.merge_docs(source, target, editor, representative="source")
    merged.refresh_from_db()
    assert merged.representative.nid == "s1"


def test_a_merge_into_a_target_changed_since_the_page_loaded_is_refused(
        client, auth, run_worker, editor):
    source, target = two_clusters(client, auth, run_worker)
    shown = target.version
    actions.split_article(Article.objects.get(nid="t2"), editor)  # another editor, meanwhile
    client.force_login(editor)
    response = client.post(f"/clusters/{source.doc_id}/merge/", {
        "version": source.version, "target": target.doc_id, "target_version": shown,
        "note": "typed before the split"}, follow=True)
    assert response.status_code == 200
    assert "changed this cluster" in response.content.decode()
    assert Doc.objects.get(pk=source.pk).size == 1  # nothing merged
    with pytest.raises(actions.StaleVersion):
        actions.merge_docs(source, Doc.objects.get(pk=target.pk), editor,
                           version=source.version, target_version=shown)
    # the same merge with the current version goes through
    current = Doc.objects.get(pk=target.pk).version
    response = client.post(f"/clusters/{source.doc_id}/merge/", {
        "version": source.version, "target": target.doc_id, "target_version": current})
    assert Doc.objects.get(pk=source.pk).size == 0


def test_the_merge_forms_representative_choice_governs_the_result(client, auth, run_worker,
                                                                  editor):
    source, target = two_clusters(client, auth, run_worker)
    client.force_login(editor)
    client.post(f"/clusters/{source.doc_id}/merge/", {
        "version": source.version, "target": target.doc_id,
        "target_version": target.version, "representative": "source"})
    merged = Doc.objects.get(pk=target.pk)
    assert merged.size == 3 and merged.representative.nid == "s1"
    assert merged.representative_pinned
