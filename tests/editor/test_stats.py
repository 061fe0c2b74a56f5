from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.utils import timezone

from articles.editor import actions, stats
from articles.ingest import watchdog
from articles.models import Article, Decision, QueueSample

# dialect: date truncation and aggregates in the dialect's own SQL
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.dialect]

BODY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")
PASSWORD = "pw-long-enough-1"


def post(client, auth, run_worker, nids, title="绿道贯通", media="media"):
    for nid in nids:
        client.post("/api/v1/articles", content_type="application/json", **auth,
                    data=json.dumps({"nid": nid, "url": f"https://x.example/{nid}",
                                     "title": title, "content": BODY, "media": media}))
    run_worker()


def an_editor(name: str) -> User:
    user = User.objects.create_user(name, password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name=actions.EDITORS_GROUP)[0])
    return user


def test_stats_is_for_staff_and_editors(client, db):
    assert client.get("/stats/").status_code == 302
    User.objects.create_user("reader", password=PASSWORD)
    client.login(username="reader", password=PASSWORD)
    assert client.get("/stats/").status_code == 403
    an_editor("li")
    client.login(username="li", password=PASSWORD)
    assert client.get("/stats/").status_code == 200


def test_stats_draws_the_charts_with_escaped_labels(client, auth, run_worker):
    post(client, auth, run_worker, ("a", "b", "c"), media="<script>alert(1)</script>")
    User.objects.create_user("staff", password=PASSWORD, is_staff=True)
    client.login(username="staff", password=PASSWORD)
    response = client.get("/stats/")
    assert response.status_code == 200
    body = response.content.decode()
    assert body.count("<svg") == 7  # the desk's two, the system's five
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;: 0.67</title>" in body  # 2 of 3 are dups


def test_my_decisions_today_and_the_desks_throughput(client, auth, run_worker):
    post(client, auth, run_worker, ("a", "b"))
    post(client, auth, run_worker, ("c", "d"), title="另一条")
    li, wang = an_editor("li"), an_editor("wang")
    first, second = (Article.objects.get(nid=n).doc for n in ("a", "c"))
    actions.confirm_doc(first, li)
    actions.choose_representative(Article.objects.get(nid="d"), li)
    actions.confirm_doc(second, wang)
    yesterday = Decision.objects.create(action="confirm", doc_id="old", actor=li)
    Decision.objects.filter(pk=yesterday.pk).update(
        created_at=timezone.localtime().replace(hour=0, minute=0) - timedelta(minutes=5))
    client.login(username="li", password=PASSWORD)
    body = client.get("/stats/").content.decode()
    mine = body[body.index('id="my-decisions"'):body.index("The desk today")]
    assert "My decisions today that stand: 2" in mine
    assert f'href="/clusters/{first.doc_id}/"' in mine
    assert "confirmed the cluster" in mine and "chose the representative" in mine
    assert f'href="/clusters/{second.doc_id}/">' in mine  # li's choice of representative
    assert "/clusters/old/" not in mine  # yesterday's
    desk = body[body.index("The desk today"):]
    assert '<th scope="row">li</th><td class="num">2</td>' in desk
    assert '<th scope="row">wang</th><td class="num">1</td>' in desk
    # decisions per hour: the last hour's bar counts today's three and yesterday's if it
    # fell in the same hour
    hour = timezone.localtime().strftime("%H:00")
    assert f"<title>{hour}: 3</title>" in desk or f"<title>{hour}: 4</title>" in desk


def test_the_watchdog_samples_the_queue_size_for_the_chart(client, auth, run_worker,
                                                          settings):
    settings.QUEUE_SAMPLE_SECONDS = 300
    post(client, auth, run_worker, ("a", "b"))
    Article.objects.filter(nid="b").update(distance=3)  # borderline: in the review queue
    assert watchdog.sample_queue() is True
    assert watchdog.sample_queue() is False  # one a period
    assert list(QueueSample.objects.values_list("size", flat=True)) == [1]
    old = QueueSample.objects.create(size=7, taken_at=timezone.now() - timedelta(days=30))
    QueueSample.objects.exclude(pk=old.pk).update(
        taken_at=timezone.now() - timedelta(seconds=301))
    assert watchdog.sample_queue() is True  # the period is over
    assert not QueueSample.objects.filter(pk=old.pk).exists()  # older than kept
    settings.QUEUE_SAMPLE_SECONDS = 0
    QueueSample.objects.all().delete()
    assert watchdog.sample_queue() is False and not QueueSample.objects.exists()
    QueueSample.objects.create(size=42)
    User.objects.create_user("staff", password=PASSWORD, is_staff=True)
    client.login(username="staff", password=PASSWORD)
    body = client.get("/stats/").content.decode()
    label = timezone.localtime().strftime("%m-%d %H")
    assert f"<title>{label}: 42</title>" in body


def test_the_systems_figures_are_kept_for_a_while_and_the_desk_is_live(
        client, auth, run_worker, settings):
    settings.STATS_CACHE_SECONDS = 60
    post(client, auth, run_worker, ("a", "b"))
    li = an_editor("li")
    client.login(username="li", password=PASSWORD)
    tile = re.compile(r"Articles</span><strong>(\d+)</strong>")
    assert tile.search(client.get("/stats/").content.decode()).group(1) == "2"
    post(client, auth, run_worker, ("c",), title="另一条")
    actions.confirm_doc(Article.objects.get(nid="a").doc, li)
    body = client.get("/stats/").content.decode()
    assert tile.search(body).group(1) == "2"  # the system's part: kept
    assert "My decisions today that stand: 1" in body  # the desk: live
    settings.STATS_CACHE_SECONDS = 0
    cache.clear()
    assert tile.search(client.get("/stats/").content.decode()).group(1) == "3"
    client.get("/stats/")
    assert cache.get(stats.SYSTEM_CACHE_KEY) is None  # 0: never kept


def test_the_desk_counts_what_stands_by_hand_and_in_bulk(client, auth, run_worker):
    from articles.models import BulkAction

    subjects = ("滨江绿道全线贯通", "地铁三号线开通", "图书馆推出夜间借阅", "寒潮蓝色预警",
                "博物馆新馆开放")
    for n, subject in enumerate(subjects):
        body = (f"本报讯：{subject}。" + "".join(
            f"{subject}的第{i}项安排已经落实，相关部门表示将持续跟进。" for i in range(1, 6)))
        for suffix in "ab":
            client.post("/api/v1/articles", content_type="application/json", **auth,
                        data=json.dumps({"nid": f"s{n}{suffix}", "title": subject,
                                         "url": f"https://{suffix}.example/{n}",
                                         "content": body}))
    run_worker()
    li = an_editor("li")
    docs = [Article.objects.get(nid=f"s{n}a").doc for n in range(5)]
    assert len({d.pk for d in docs}) == 5  # five stories
    kept = [actions.confirm_doc(docs[0], li), actions.confirm_doc(docs[1], li)]
    undone = actions.confirm_doc(docs[2], li)
    assert kept[0].pk and undone.pk
    actions.undo(Decision.objects.get(doc_id=docs[2].doc_id), li)
    bulk = BulkAction.objects.create(action="confirm", actor=li)
    for doc in docs[3:]:
        actions.confirm_doc(doc, li, bulk=bulk)
    client.login(username="li", password=PASSWORD)
    body = client.get("/stats/").content.decode()
    assert "My decisions today that stand: 4" in body  # 2 by hand + 2 in bulk; 1 undone
    desk = body[body.index('id="desk-today"'):]
    row = re.search(r'<th scope="row">li</th>(.*?)</tr>', desk, re.S).group(1)
    cells = [re.sub(r"<[^>]+>", "", c).split()[0] for c in
             re.findall(r'<td class="num">(.*?)</td>', row, re.S)]
    assert cells == ["2", "2", "1"]  # by hand, in bulk, undone
    assert "(1 bulk action)" in row
    rows = {r.editor: r for r in stats.desk_today()}
    assert rows["li"].standing == 4 and rows["li"].bulk_actions == 1
