"""Body retention: old bodies of members that are neither representative nor anchor
are cleared, their features kept; docIds, verification and delivery are unchanged."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from articles.ingest import watchdog
from articles.models import Article, Doc, EngineSettings, IndexState
from articles.representatives import outbox
from articles.representatives.retention import clear_old_bodies

pytestmark = pytest.mark.django_db(transaction=True)

BODY = ("江城滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长近六成。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")


def post(client, auth, nid, hotness, body=BODY):
    response = client.post(
        "/api/v1/articles", content_type="application/json", **auth,
        data=json.dumps({"nid": nid, "url": f"https://n.example/{nid}", "title": "滨江绿道贯通",
                         "content": body, "hotness": hotness}))
    assert response.status_code in (200, 202), response.content
    return response


def retention(days):
    settings = EngineSettings.load()
    settings.retention_days = days
    settings.save()


@pytest.fixture
def story(client, auth, run_worker):
    """a founds the doc (anchor), b is hottest (representative), c and e are members;
    all but e arrived ten days ago."""
    for nid, hotness in (("a", 10), ("b", 50), ("c", 20), ("e", 5)):
        post(client, auth, nid, hotness, BODY + ("（完）" if nid in "ce" else ""))
    run_worker()
    doc = Doc.objects.get()
    assert (doc.anchor.nid, doc.representative.nid, doc.size) == ("a", "b", 4)
    Article.objects.exclude(nid="e").update(received_at=timezone.now() - timedelta(days=10))
    return doc


def test_only_old_members_that_are_neither_representative_nor_anchor_lose_their_body(story):
    before = {a.nid: (bytes(a.features), a.content_fp, a.title_fp) for a in Article.objects.all()}
    retention(7)
    result = clear_old_bodies(batches=None)
    assert (result.examined, result.cleared, result.done) == (3, 1, True)
    rows = {a.nid: a for a in Article.objects.all()}
    assert rows["c"].content == "" and rows["c"].body_cleared_at is not None
    for nid in "abe":  # anchor, representative, too recent
        assert rows[nid].content.startswith("江城") and rows[nid].body_cleared_at is None
    # features, fingerprints and the docId stay
    assert {a.nid: (bytes(a.features), a.content_fp, a.title_fp)
            for a in rows.values()} == before
    assert {a.doc_id for a in rows.values()} == {story.pk}
    # the representative store still has the full text
    assert outbox.store().get(story.doc_id)["content"] == BODY
    # the next pass starts where this one stopped: nothing to examine again
    assert clear_old_bodies(batches=None).examined == 0
    assert IndexState.load().bodies_examined_id == max(
        a.pk for a in rows.values() if a.nid != "e")


def test_retention_zero_keeps_every_body(story):
    retention(0)
    assert clear_old_bodies(batches=None).cleared == 0
    assert not Article.objects.filter(content="").exists()


def test_a_repost_still_joins_through_the_cleared_members_features_and_the_anchor(
        client, auth, run_worker, story):
    retention(7)
    clear_old_bodies(batches=None)
    post(client, auth, "f", 1, BODY + "（记者 王明）")
    run_worker()
    f = Article.objects.get(nid="f")
    assert f.doc_id == story.pk and f.matched_by in ("content", "title")
    answer = client.get("/api/v1/articles/f", **auth).json()
    assert answer["docId"] == story.doc_id


def test_a_cleared_member_is_never_elected_and_a_new_text_is_kept_again(
        client, auth, run_worker, story):
    retention(7)
    clear_old_bodies(batches=None)
    response = client.patch("/api/v1/articles/c", data=json.dumps({"hotness": 999}),
                            content_type="application/json", **auth)
    assert response.status_code == 200
    run_worker()
    assert Doc.objects.get().representative.nid == "b"
    assert outbox.store().get(story.doc_id)["nid"] == "b"
    # posted again with a changed text: stored and kept like any new body
    post(client, auth, "c", 20, BODY + "（更新）")
    run_worker()
    c = Article.objects.get(nid="c")
    assert c.content.endswith("（更新）") and c.body_cleared_at is None


def test_the_watchdog_clears_a_few_batches_per_tick(story, redis_client, settings):
    retention(7)
    report = watchdog.tick()
    assert report["bodies_cleared"] == 1
    assert Article.objects.get(nid="c").content == ""


def test_small_batches_resume_where_they_stopped(story):
    retention(7)
    first = clear_old_bodies(batches=1, batch=2)
    assert (first.examined, first.done) == (2, False)
    rest = clear_old_bodies(batches=None, batch=2)
    assert rest.examined == 1 and rest.done
    assert first.cleared + rest.cleared == 1


def test_the_cluster_page_says_the_body_is_no_longer_kept(client, story):
    retention(7)
    clear_old_bodies(batches=None)
    client.force_login(User.objects.create_user("v", password="x" * 20, is_staff=True))
    html = client.get(f"/clusters/{story.doc_id}/?compare=c").content.decode()
    assert "Body no longer kept" in html
    # no word diff against an empty text: the representative is shown as it is
    assert "The bodies cannot be compared" in html and html.count("<del>") == 1  # the legend
    assert "江城滨江绿道" in html
    html = client.get(f"/clusters/{story.doc_id}/?compare=a").content.decode()
    assert "Body no longer kept" not in html


@pytest.mark.dialect  # rebuild_index --recompute: a dialect's own UPDATE ... JOIN
def test_re_fingerprinting_after_a_settings_change_keeps_cleared_members_features(
        client, auth, run_worker, story):
    from articles.index import reindex
    from fingerprints.rule import EngineConfig

    retention(7)
    clear_old_bodies(batches=None)
    c_before = bytes(Article.objects.get(nid="c").features)
    a_before = bytes(Article.objects.get(nid="a").features)
    reindex.build(EngineConfig(extra_stopwords=frozenset({"公园", "湿地"})), recompute=True)
    assert bytes(Article.objects.get(nid="c").features) == c_before  # not fingerprinted ""
    assert bytes(Article.objects.get(nid="a").features) != a_before  # re-read from its body
    # c is still found by its URL: the same URL under another nid joins its doc
    response = client.post(
        "/api/v1/articles", content_type="application/json", **auth,
        data=json.dumps({"nid": "c2", "url": "https://n.example/c", "title": "另一个标题",
                         "content": "完全不同的正文，讲的是另一件事情，和绿道没有任何关系。"}))
    assert response.status_code in (200, 202)
    run_worker()
    c2 = Article.objects.get(nid="c2")
    assert (c2.doc_id, c2.matched_by) == (story.pk, "url")


def test_the_command_runs_retention_to_the_end(story):
    from io import StringIO

    from django.core.management import call_command

    retention(7)
    out = StringIO()
    call_command("clear_bodies", "--batch", "1", stdout=out)
    assert out.getvalue().strip() == "Examined 3 articles, cleared 1 bodies."
    assert Article.objects.get(nid="c").content == ""
    with pytest.raises(SystemExit):
        call_command("clear_bodies", "--batch", "0")
