"""Both languages, the navigation, the admin's review rules."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from .conftest import login

pytestmark = pytest.mark.django_db


def test_the_language_switch_shows_the_pages_in_chinese(client, corpus, editor):
    login(client, editor)
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/review/"})
    assert response.status_code == 302 and response["Location"] == "/review/"
    html = client.get("/review/").content.decode()
    assert '<html lang="zh-hans">' in html
    assert "审核队列" in html
    assert "聚类" in client.get("/clusters/").content.decode()
    client.post("/i18n/setlang/", {"language": "en", "next": "/clusters/"})
    assert "Review queue" in client.get("/review/").content.decode()


def test_the_nav_links_every_page(client, corpus, viewer):
    login(client, viewer)
    html = client.get("/clusters/").content.decode()
    for url in (reverse("clusters"), reverse("review"), reverse("admin:index"),
                reverse("set_language"), reverse("logout")):
        assert f'"{url}"' in html


def test_the_review_rules_are_the_admins(client, corpus, editor):
    from articles.models import EngineSettings

    EngineSettings.objects.update_or_create(pk=1, defaults={"review_similarity": 0.95})
    login(client, editor)
    html = client.get("/review/").content.decode()
    # river-3 was verified at 0.93: below the admin's 0.95, so now also "low similarity"
    item = re.search(r'id="review-item-\d+".*?</li>', html, re.S).group(0)
    assert "river-3" in item and "low similarity" in item


def test_the_bulk_tools_the_desk_and_the_counts_speak_chinese(client, corpus, editor):
    from articles.editor import bulk

    login(client, editor)
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/clusters/"})
    html = client.get("/clusters/").content.decode()
    assert "批量决定：" in html and "符合筛选条件的全部 4 个聚类" in html
    assert "标记待审核" in html and "所选的 {n} 个聚类" in html
    assert "条待审核匹配" in client.get("/nav/counts/").content.decode()
    job = bulk.start(editor, "confirm", [(corpus["river"].pk, corpus["river"].version)])
    bulk.run(job.pk)
    assert "已确认 1 个聚类" in client.get(f"/bulk/{job.pk}/").content.decode()
    stats = client.get("/stats/").content.decode()
    assert "我今天仍有效的决定：1" in stats and "全组每小时决定数" in stats
    response = client.post("/bulk/", {"action": "confirm", "next": "/clusters/"},
                           HTTP_HX_REQUEST="true", HTTP_HX_TARGET="bulk-status")
    assert "请至少选择一个聚类。" in response.content.decode()
