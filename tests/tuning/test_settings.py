"""Admin-tuned engine settings: validation, live pickup, reindex, preview."""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import replace

import pytest
from django.contrib.auth.models import User

from articles.editor import actions
from articles.index import reindex
from articles.models import Article, Doc, EditorLink, EngineSettings, IndexState, LinkKind
from articles.tuning import preview
from dedupsite import redis_store
from fingerprints.rule.blocks import block_keys

pytestmark = pytest.mark.django_db(transaction=True)

BASE = (
    "国家统计局今天发布数据显示，前三季度全国规模以上工业增加值同比增长百分之五点八，"
    "其中高技术制造业增加值增长百分之九点六，明显快于全部规模以上工业。分行业看，"
    "电子信息、新能源汽车和光伏设备等行业保持较快增长，传统行业生产稳中有升。"
    "统计局新闻发言人表示，国民经济延续恢复向好态势，但外部环境依然复杂严峻。"
)
OTHER = (
    "市图书馆从下月起推出夜间借阅服务，工作日开放时间延长至晚上十点，并在一楼大厅设置自助借还机。"
    "图书馆馆长表示，过去一年读者问卷显示，超过七成受访者希望在下班后也能借书。"
    "此外，图书馆还将每月举办两场晚间读书会，邀请本地作家和学者与读者交流。"
)


def post(client, auth, nid, content, title="工业增加值增长"):
    response = client.post("/api/v1/articles", content_type="application/json", **auth,
                           data=json.dumps({"nid": nid, "url": f"https://a.example/{nid}",
                                            "title": title, "content": content}))
    assert response.status_code in (200, 202)


@pytest.fixture
def admin_client(client, db):
    User.objects.create_superuser("admin", "a@example.com", "pw-long-enough-1")
    client.login(username="admin", password="pw-long-enough-1")
    return client


def settings_form(**overrides):
    current = EngineSettings.load()
    data = {f: getattr(current, f) for f in (
        "k", "title_k", "candidate_radius", "probe_bits", "anchorless_threshold",
        "title_min_tokens", "extra_stopwords", "user_words", "review_distance", "review_similarity",
        "review_cluster_size", "index_window_days", "retention_days", "change_log_days",
        "boilerplate_min_docs",
        "picture_bits", "match_threshold", "review_order", "retrain_min_labels")}
    if current.hmm:
        data["hmm"] = "on"
    data.update(overrides)
    return data


def test_the_settings_page_rejects_bad_values_and_changes_nothing(admin_client, redis_client):
    url = f"/admin/articles/enginesettings/{EngineSettings.load().pk}/change/"
    assert admin_client.get(url).status_code == 200
    response = admin_client.post(url, settings_form(k=9, review_similarity=1.5,
                                                       user_words="词 abc"))
    assert response.status_code == 200
    body = response.content.decode()
    assert "Must be between 0 and 8." in body and "Must be between 0 and 1." in body
    assert "frequency a whole number" in body
    assert EngineSettings.load().k == 3 and EngineSettings.load().version == 1
    pictures = admin_client.post(url, settings_form(picture_bits=33, match_threshold=-0.1))
    body = pictures.content.decode()
    assert pictures.status_code == 200
    assert "less than or equal to 32" in body and "greater than or equal to 0" in body
    assert EngineSettings.load().picture_bits == 8 and EngineSettings.load().version == 1


def test_the_picture_settings_reach_the_engine_and_a_layout_change_reindexes(admin_client,
                                                                              redis_client):
    from articles.tuning.state import active_config, needs_reindex

    url = f"/admin/articles/enginesettings/{EngineSettings.load().pk}/change/"
    before = EngineSettings.load().engine_config()
    assert admin_client.post(url, settings_form(picture_bits=12)).status_code == 302
    after = EngineSettings.load().engine_config()
    assert after.picture_bits == 12
    assert active_config().picture_bits == 12
    # bits beyond the index's largest k keep its layout; bits below it change the layout
    assert needs_reindex(before, after) is (before.picture_k != after.picture_k)
    assert needs_reindex(after, replace(after, picture_bits=2))


def test_a_verification_change_reaches_the_worker_without_a_restart(admin_client, auth,
                                                                   run_worker):
    post(admin_client, auth, "a", BASE)
    run_worker()
    assert Article.objects.get(nid="a").settings_version in (None, 0, 1)
    url = f"/admin/articles/enginesettings/{EngineSettings.load().pk}/change/"
    response = admin_client.post(url, settings_form(match_threshold=0.7))
    assert response.status_code == 302
    version = EngineSettings.load().version
    assert version == 2
    assert IndexState.load().config["match_threshold"] == 0.7
    post(admin_client, auth, "b", OTHER, title="图书馆夜间借阅")
    run_worker()  # the same process, which cached the old configuration
    assert Article.objects.get(nid="b").settings_version == version


GREENWAY = ("江城滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
            "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长近六成。"
            "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")
GREENWAY_TAIL = ("据悉，绿道二期工程将于明年开工，届时将延伸至城东新区，总长度将超过六十公里，"
                 "沿线还将新建五座城市公园和一个大型滨水广场。")


def test_the_match_threshold_set_in_the_admin_stops_a_chinese_partial_copy(admin_client, auth,
                                                                          run_worker):
    """The repost under other chrome matches at the default threshold (the "CJK
    contained" level); after the admin raises the threshold above its probability, the
    same repost posted again founds its own docId, while a copy still joins."""
    url = f"/admin/articles/enginesettings/{EngineSettings.load().pk}/change/"
    bad = admin_client.post(url, settings_form(match_threshold=1.2))
    assert bad.status_code == 200 and EngineSettings.load().match_threshold == 0.5
    paper = "江城日报讯（记者 王明）" + GREENWAY + GREENWAY_TAIL
    post(admin_client, auth, "paper", paper, title="滨江绿道全线贯通")
    post(admin_client, auth, "wechat", "点击上方蓝字关注我们。" + GREENWAY + "喜欢就点个在看吧。",
         title="绿道贯通")
    run_worker()
    wechat = Article.objects.get(nid="wechat")
    first = Article.objects.get(nid="paper")
    assert wechat.doc_id == first.doc_id
    # the default model on the comparison vector: most of the shorter body inside the
    # longer, far less of the two shared (the rule's model called it "cjk-contained")
    measures = {w["comparison"]: w["value"] for w in wechat.match_explanation["weights"]}
    assert measures["containment"] >= 0.8 > measures["jaccard"]
    assert 0.5 < wechat.match_probability < 0.999
    # halfway from its probability to certainty: above a CJK partial copy, below a copy
    threshold = round((wechat.match_probability + 1) / 2, 6)
    assert admin_client.post(url, settings_form(match_threshold=threshold)).status_code == 302
    assert EngineSettings.load().engine_config().match_threshold == threshold
    post(admin_client, auth, "wechat2", "点击上方蓝字关注我们。" + GREENWAY + "喜欢就点个在看吧。",
         title="绿道贯通")
    post(admin_client, auth, "copy", paper + "责任编辑：李华", title="滨江绿道全线贯通")
    run_worker()
    assert Article.objects.get(nid="wechat2").doc_id not in (first.doc_id, wechat.doc_id)
    copy = Article.objects.get(nid="copy")
    assert copy.doc_id == first.doc_id and copy.match_probability >= threshold


def test_a_k_change_reindexes_keeps_doc_ids_and_editor_decisions(admin_client, auth,
                                                                 run_worker, redis_client):
    for n in range(3):
        post(admin_client, auth, f"s{n}", BASE + "（完）" * n)
    post(admin_client, auth, "o", OTHER, title="图书馆夜间借阅")
    run_worker()
    before = dict(Article.objects.values_list("nid", "doc__doc_id"))
    assert before["s0"] == before["s1"] == before["s2"] != before["o"]
    actions.split_article(Article.objects.get(nid="s2"), None, "not the same")
    after_split = dict(Article.objects.values_list("nid", "doc__doc_id"))
    old_generation = IndexState.load().generation

    url = f"/admin/articles/enginesettings/{EngineSettings.load().pk}/change/"
    assert admin_client.post(url, settings_form(k=5)).status_code == 302
    assert IndexState.load().reindex_status == "queued"
    run_worker()  # runs the reindex job
    state = IndexState.load()
    assert state.reindex_status == "done" and state.config["k"] == 5
    assert state.generation != old_generation
    assert dict(Article.objects.values_list("nid", "doc__doc_id")) == after_split
    # The new layout: k + 1 = 6 blocks, under the new generation's namespace.
    fp = Article.objects.get(nid="s0").content_fp
    keys = [f"{reindex.namespaces(state.generation)['c']}"]
    assert len(block_keys(fp, 5)) == 6
    assert any(redis_client.scan_iter(match=f"{keys[0]}*"))
    assert not any(redis_client.scan_iter(match=f"{redis_store.key('c', old_generation)}*"))
    # A new duplicate still finds the old docId.
    post(admin_client, auth, "s9", BASE + "记者 报道")
    run_worker()
    assert Article.objects.get(nid="s9").doc.doc_id == before["s0"]
    assert Article.objects.get(nid="s2").doc.doc_id == after_split["s2"]


def brute_force_changes(current_of, proposed_of):
    same_now = {(a, b) for a, b in itertools.combinations(sorted(current_of), 2)
                if current_of[a] == current_of[b]}
    same_next = {(a, b) for a, b in itertools.combinations(sorted(current_of), 2)
                 if proposed_of[a] == proposed_of[b]}
    split_docs = {current_of[a] for a, b in same_now - same_next}
    merge_groups = {proposed_of[a] for a, b in same_next - same_now}
    return len(split_docs), len(merge_groups)


def test_the_preview_counts_match_a_brute_force_count():
    rng = random.Random(7)
    for _trial in range(50):
        nids = [f"n{i}" for i in range(rng.randint(2, 25))]
        current_of = {n: f"d{rng.randint(0, 6)}" for n in nids}
        proposed_of = {n: rng.randint(0, 6) for n in nids}
        result = preview.compare_partitions(current_of, proposed_of, {})
        assert (result["splits"], result["merges"]) == brute_force_changes(current_of,
                                                                           proposed_of)


def test_precision_and_recall_from_editor_decisions_match_a_brute_force_count(
        admin_client, auth, run_worker):
    for n in range(3):
        post(admin_client, auth, f"s{n}", BASE + "（完）" * n)
    post(admin_client, auth, "o", OTHER, title="图书馆夜间借阅")
    run_worker()
    EditorLink.objects.create(kind=LinkKind.MUST, nid_a="s0", nid_b="s1")
    EditorLink.objects.create(kind=LinkKind.MUST, nid_a="s0", nid_b="s2")
    EditorLink.objects.create(kind=LinkKind.CANNOT, nid_a="o", nid_b="s0")
    from fingerprints.rule import Features
    from fingerprints.rule.simhash import hamming
    from fingerprints.rule.verification import verify

    config = EngineSettings.load().engine_config()
    feats = {a.nid: Features.from_bytes(bytes(a.features)) for a in Article.objects.all()}
    rows = preview.editor_precision_recall(config)
    for row in rows:
        k = row["k"]

        def hit(a, b, k=k):
            return (hamming(feats[a].content_fp, feats[b].content_fp) <= k
                    and verify(feats[a], feats[b], config).ok)

        tp = hit("s0", "s1") + hit("s0", "s2")
        fp = int(hit("o", "s0"))
        assert (row["tp"], row["fp"], row["fn"]) == (tp, fp, 2 - tp)
    assert rows[8]["recall"] == 1.0


def test_the_preview_page_shows_the_changes_and_the_chart(admin_client, auth, run_worker):
    for n in range(3):
        post(admin_client, auth, f"s{n}", BASE + "（完）" * n)
    run_worker()
    response = admin_client.post("/admin/articles/enginesettings/preview/",
                                 settings_form(k=0, match_threshold=0.99))
    assert response.status_code == 200
    body = response.content.decode()
    assert "<svg" in body and "Precision and recall" in body
    assert 'class="split-count"' in body
    assert Doc.objects.filter(size=3).exists()
    assert EngineSettings.load().version == 1  # nothing saved


def test_a_state_read_before_an_index_switch_is_read_again(admin_client, auth, run_worker,
                                                           redis_client, settings):
    import time

    from articles.tuning import state

    settings.STATE_CACHE_MS = 600_000  # the stale state stays "fresh" however slow the run
    post(admin_client, auth, "s0", BASE)
    run_worker()
    stale = state._cache.state  # what this thread read before the switch (k = 3)
    url = f"/admin/articles/enginesettings/{EngineSettings.load().pk}/change/"
    assert admin_client.post(url, settings_form(k=5)).status_code == 302
    run_worker()  # the reindex job switches to a k = 5 generation
    assert IndexState.load().config["k"] == 5
    # as in another process that read the state just before the switch: the batch
    # finds another generation in Redis, reads the state again and uses k = 5 buckets
    state._cache.state = (time.monotonic(), stale[1])
    assert state.active_state()[1].k == 3
    post(admin_client, auth, "s9", BASE + "记者 报道")
    run_worker()
    s9 = Article.objects.get(nid="s9")
    assert s9.status == "done" and s9.doc_id == Article.objects.get(nid="s0").doc_id
    assert state.active_state()[1].k == 5


def test_every_engine_setting_speaks_both_languages():
    """Each field of the admin's engine settings and of a match model version has its
    label and help text in Chinese too (what the help text says governs in both)."""
    from django.utils import translation

    from articles.models import MatchModelVersion

    for model in (EngineSettings, MatchModelVersion):
        for field in model._meta.get_fields():
            if not getattr(field, "editable", False) or field.auto_created:
                continue
            texts = [str(field.verbose_name)] + ([str(field.help_text)] if field.help_text
                                                 else [])
            with translation.override("zh-hans"):
                chinese = [str(field.verbose_name)] + (
                    [str(field.help_text)] if field.help_text else [])
            for english, zh in zip(texts, chinese, strict=True):
                assert english != zh, (model.__name__, field.name, english)


def test_the_admins_index_names_every_model_in_both_languages(admin_client):
    """The admin's sidebar and index: the app and each model it lists, in Chinese too."""
    from django.contrib import admin as django_admin
    from django.utils import translation

    from articles.apps import ArticlesConfig

    names = [ArticlesConfig.verbose_name] + [
        model._meta.verbose_name_plural for model in django_admin.site._registry
        if model._meta.app_label == "articles"]
    english = [str(name) for name in names]
    with translation.override("zh-hans"):
        chinese = [str(name) for name in names]
    untranslated = [e for e, z in zip(english, chinese, strict=True) if e == z]
    assert not untranslated
    page = admin_client.get("/admin/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "媒体权重" in page and "Media weights" not in page


def test_the_settings_page_names_its_version_in_both_languages(admin_client):
    from articles.models import EngineSettings

    settings = EngineSettings.load()
    url = f"/admin/articles/enginesettings/{settings.pk}/change/"
    english = admin_client.get(url).content.decode()
    chinese = admin_client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert f"engine settings v{settings.version}" in english
    assert f"引擎设置 v{settings.version}" in chinese
    assert "engine settings v" not in chinese
    # the read-only status rows are named in both languages too
    assert "Version:" in english and "Updated at:" in english
    assert "版本:" in chinese and "更新时间:" in chinese
    assert "Updated at" not in chinese


def test_the_lookup_and_title_settings_reach_the_engine_and_a_title_change_reindexes(
        admin_client, redis_client):
    """Every EngineConfig number an admin may set: the form refuses a value outside its
    range, a saved one is what every process's configuration reads, and a change of
    which titles have a fingerprint reindexes (stored features depend on it)."""
    from articles.tuning.state import active_config, needs_reindex

    url = f"/admin/articles/enginesettings/{EngineSettings.load().pk}/change/"
    bad = admin_client.post(url, settings_form(candidate_radius=65, probe_bits=5,
                                               anchorless_threshold=1.5,
                                               title_min_tokens=21))
    assert bad.status_code == 200 and EngineSettings.load().version == 1
    assert bad.content.decode().count("less than or equal to") == 4
    before = EngineSettings.load().engine_config()
    assert admin_client.post(url, settings_form(
        candidate_radius=5, probe_bits=2, anchorless_threshold=0.9)).status_code == 302
    now = active_config()
    assert (now.candidate_radius, now.probe_bits, now.anchorless_threshold) == (5, 2, 0.9)
    assert not needs_reindex(before, now)  # lookups and decisions: at once
    assert needs_reindex(now, replace(now, title_min_tokens=3))
