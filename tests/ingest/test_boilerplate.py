"""Boilerplate learned online: through the real API, a real RQ worker, MariaDB/SQLite
and Redis; listed and edited in the admin."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User

from articles.index.reindex import apply_settings
from articles.models import Article, BoilerplateClause, BoilerplateSource, EngineSettings
from articles.tuning.boilerplate import active_boilerplate, add_clause
from fingerprints.rule.boilerplate import clause_hash
from fingerprints.rule.ids import to_signed

pytestmark = pytest.mark.django_db(transaction=True)

DISCLAIMER = "特别声明：以上文章内容仅代表作者本人观点，不代表本平台观点或立场。"
STORIES = [
    ("社区消防演练", "南京市鼓楼区今天开展了为期三天的社区消防演练，"
     "数百名居民在消防员指导下学习使用灭火器和逃生技巧。"),
    ("长江中游水位超警", "受持续强降雨影响，"
     "长江中游多个水文站水位超过警戒线，防汛部门已启动三级应急响应并加强巡堤查险。"),
    ("国际马拉松开跑", "本届国际马拉松吸引了来自四十多个国家和地区的三万余名选手参赛，"
     "赛道沿途设置了二十个补给站。"),
    ("课后延时服务推行", "市教育局发布通知，"
     "今年秋季学期起全市中小学将推行课后延时服务，家长可根据需要自愿选择参加。"),
    ("电池工厂落户本地", "一家新能源汽车企业宣布在本地投资建设电池工厂，"
     "项目建成后预计年产值超过百亿元并带动就业。"),
    ("唐代文物展出", "博物馆新展出一批唐代出土文物，"
     "包括陶俑、铜镜和金银器，展览将持续到明年春节之后结束。"),
]


def min_docs(n):
    """What saving the admin's settings page does (a new version, applied)."""
    settings = EngineSettings.load()
    settings.boilerplate_min_docs = n
    settings.version += 1
    settings.save()
    apply_settings(settings)


def post(client, auth, nid, title, content):
    response = client.post("/api/v1/articles", content_type="application/json", **auth,
                           data=json.dumps({"nid": nid, "url": f"https://a.example/{nid}",
                                            "title": title, "content": content}))
    assert response.status_code in (200, 202), response.content
    return response


def doc_of(nid):
    return Article.objects.get(nid=nid).doc.doc_id


def test_a_disclaimer_under_five_stories_is_learned_and_stops_merging_stories(
        client, auth, run_worker):
    min_docs(5)
    # before it is learned, two bodies that are only the disclaimer are copies of each
    # other; neither is about its title, and the titles are unrelated: two items
    post(client, auth, "early-1", "吴卓林欠房租事件引发网友热议", DISCLAIMER)
    post(client, auth, "early-2", "新余生活超过十年的最珍贵回忆", DISCLAIMER)
    run_worker()
    assert doc_of("early-1") != doc_of("early-2")
    for n, (title, body) in enumerate(STORIES):
        post(client, auth, f"s{n}", title, body + DISCLAIMER)
    run_worker()
    learned = BoilerplateClause.objects.filter(source=BoilerplateSource.LEARNED)
    assert set(learned.values_list("text", flat=True)) == {
        "以上文章内容仅代表作者本人观点", "不代表本平台观点或立场"}
    assert all(c.stories == 5 and c.active for c in learned)
    # from now on: disclaimer-only bodies under other titles are different items ...
    post(client, auth, "late-1", "男子深夜救下落水儿童", DISCLAIMER)
    post(client, auth, "late-2", "春运首日铁路客流创新高", DISCLAIMER)
    # ... the same title over a disclaimer-only body is the same item ...
    post(client, auth, "late-3", "男子深夜救下落水儿童", "\n" + DISCLAIMER)
    # ... and a repost of a story without the disclaimer joins the story
    post(client, auth, "repost", "转载：" + STORIES[5][0], STORIES[5][1])
    run_worker()
    assert doc_of("late-1") != doc_of("late-2")
    assert doc_of("late-3") == doc_of("late-1")
    assert Article.objects.get(nid="late-3").matched_by == "title"
    assert doc_of("repost") == doc_of("s5")
    assert len({doc_of(f"s{n}") for n in range(len(STORIES))}) == len(STORIES)


REDIRECT = ("正在为您跳转到访问页面，如果您的浏览器没有自动跳转，请检查以下设置。"
            "请确保浏览器没有禁止发送cookie，请确保浏览器可以正常执行javascript脚本。")


def test_pages_whose_body_is_not_about_their_title_count_even_when_they_join(
        client, auth, run_worker):
    min_docs(5)
    # related titles, one redirect page as the body: they join one doc (a copy under
    # similar titles), and each still counts, so the redirect text is learned. (Titles
    # with another number, "第1次" against "第2次", would be two meetings: templates.)
    titles = ["全市召开环境保护工作会议", "全市召开环境保护工作会议现场",
              "全市环境保护工作会议召开", "全市召开环境保护工作会议直击",
              "全市召开环境保护工作会议速览"]
    for n, title in enumerate(titles, start=1):
        post(client, auth, f"r{n}", title, REDIRECT)
        run_worker()
    first = Article.objects.get(nid="r1")
    assert Article.objects.get(nid="r5").doc_id == first.doc_id
    assert Article.objects.get(nid="r5").matched_by in {"content", "title"}
    learned = set(BoilerplateClause.objects.values_list("text", flat=True))
    assert "请确保浏览器没有禁止发送cookie" in learned
    # now a redirect page is an empty body: decided by its title alone
    post(client, auth, "r6", "全市召开第六次环境保护工作会议部署明年任务", REDIRECT)
    run_worker()
    assert Article.objects.get(nid="r6").doc_id not in {
        a.doc_id for a in Article.objects.filter(nid__startswith="r").exclude(nid="r6")}


def test_learning_off_learns_nothing(client, auth, run_worker):
    min_docs(0)
    for n, (title, body) in enumerate(STORIES):
        post(client, auth, f"s{n}", title, body + DISCLAIMER)
    run_worker()
    assert not BoilerplateClause.objects.exists()


def test_a_redis_failure_while_learning_loses_no_article(client, auth, run_worker, monkeypatch):
    from articles.ingest import boilerplate

    def broken(config):
        raise ConnectionError("redis went away")

    monkeypatch.setattr(boilerplate, "counter", broken)
    for n, (title, body) in enumerate(STORIES):
        post(client, auth, f"s{n}", title, body + DISCLAIMER)
    run_worker()
    assert Article.objects.filter(status="done").count() == len(STORIES)
    assert not BoilerplateClause.objects.exists()


@pytest.fixture
def admin_client(client, db):
    User.objects.create_superuser("admin", "a@example.com", "pw-long-enough-1")
    client.login(username="admin", password="pw-long-enough-1")
    return client


def test_the_admin_lists_adds_and_switches_off_clauses(admin_client, redis_client):
    url = "/admin/articles/boilerplateclause/"
    learned = BoilerplateClause.objects.create(
        clause_hash=to_signed(clause_hash("签到排名今日本吧第")), text="签到排名今日本吧第",
        stories=12)
    page = admin_client.get(url)
    assert page.status_code == 200 and "签到排名今日本吧第" in page.content.decode()
    # a bad clause is refused with a message and changes nothing
    bad = admin_client.post(url + "add/", {"text": "两句话。不是一句", "active": "on"})
    assert bad.status_code == 200 and "One clause" in bad.content.decode()
    assert BoilerplateClause.objects.count() == 1
    # clause punctuation inside: two clauses, refused too
    assert admin_client.post(url + "add/", {"text": "返回搜狐，查看更多", "active": "on"}
                             ).status_code == 200
    added = admin_client.post(url + "add/", {"text": "本文来自大风号仅代表大风号自媒体观点",
                                             "active": "on"})
    assert added.status_code == 302
    own = BoilerplateClause.objects.get(source=BoilerplateSource.ADMIN)
    assert to_signed(clause_hash("本文来自大风号仅代表大风号自媒体观点")) == own.clause_hash
    assert {learned.clause_hash, own.clause_hash} == {to_signed(h) for h in active_boilerplate(0)}
    admin_client.post(url, {"action": "switch_off", "_selected_action": [learned.pk]})
    learned.refresh_from_db()
    assert not learned.active
    assert {to_signed(h) for h in active_boilerplate(0)} == {own.clause_hash}


def test_add_clause_refuses_what_is_not_one_clause(db):
    with pytest.raises(ValueError):
        add_clause("短句")
    with pytest.raises(ValueError):
        add_clause("第一句很长很长的话。第二句也很长很长的话")
    assert add_clause("网易仅提供信息发布平台").active
