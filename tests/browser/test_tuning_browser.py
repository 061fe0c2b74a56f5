"""The admin's settings page with its preview chart, and /stats/, in a real browser."""

from __future__ import annotations

import json

import pytest

from tests.browser.conftest import PASSWORD, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BODY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长近六成。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")


@pytest.fixture
def admin_user(transactional_db):
    from django.contrib.auth.models import User

    return User.objects.create_superuser("boss", "boss@example.com", PASSWORD)


@pytest.fixture
def articles(client, auth, run_worker):
    for n in range(4):
        client.post("/api/v1/articles", content_type="application/json", **auth,
                    data=json.dumps({"nid": f"g{n}", "url": f"https://g.example/{n}",
                                     "title": "滨江绿道全线贯通", "content": BODY + "（完）" * n,
                                     "media": ["Daily", "Wire"][n % 2]}))
    run_worker()
    from articles.editor import actions
    from articles.models import Article

    # The editors' decisions the preview scores: a split (cannot-link) and a confirm.
    actions.split_article(Article.objects.get(nid="g3"), None, "not the same story")
    actions.confirm_doc(Article.objects.get(nid="g0").doc, None)


def test_an_admin_previews_a_k_change_and_sees_the_chart(page, admin_user, articles):
    from articles.models import EngineSettings

    log_in(page, "boss", f"/admin/articles/enginesettings/{EngineSettings.load().pk}/change/")
    page.fill("input[name=k]", "0")
    page.fill("input[name=match_threshold]", "0.99")
    page.click("input[name=_preview]")
    page.wait_for_url("**/enginesettings/preview/")
    assert page.locator(".pr-chart svg polyline").count() >= 1
    assert page.locator("td.split-count").inner_text().strip().isdigit()
    assert page.locator(".pr-table tbody tr").count() == 9  # k = 0..8
    assert EngineSettings.load().k == 3  # a preview saves nothing


def test_a_staff_member_sees_the_statistics(page, admin_user, articles):
    log_in(page, "boss", "/stats/")
    assert page.locator("svg.chart").count() == 7  # the desk's two, the system's five
    assert page.locator("svg.chart rect").count() > 10
    assert page.locator("#review-size").inner_text().strip().isdigit()
