"""The cluster page's "Clusters this one matches", in chromium: the list loads after the
page (htmx), names the other docId and why, and its button merges."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from articles.models import Article
from tests.browser.conftest import log_in
from tests.editor.test_related import post_story

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture
def story(client, auth, run_worker):
    return post_story(client, auth, run_worker, y_title="城市交通与园林简讯 <b>RLO\u202e</b>")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_matching_clusters_load_and_merge(page, live_server, story, editor, language):
    if language == "zh":
        page.context.add_cookies([{"name": "django_language", "value": "zh-hans",
                                   "url": live_server.url}])
    log_in(page, "editor")
    x, y = story["x"], story["y"]
    page.goto(f"/clusters/{x.doc_id}/")
    related = page.locator('[data-related="list"]')
    expect(related).to_contain_text(y.doc_id)
    # the other docId's title is text, not markup, and isolated from the page's direction
    expect(related.locator("form bdi")).to_have_text("城市交通与园林简讯 <b>RLO\u202e</b>")
    expect(related.locator("[data-why] bdi")).to_have_text(["z", "y"])
    if os.environ.get("DEDUPSITE_SCREENSHOTS"):
        OUT.mkdir(parents=True, exist_ok=True)
        page.locator("#merge").screenshot(path=str(OUT / f"related-{language}.png"))
    related.locator('button[data-action="merge"]').first.click()
    # the desk lands on the docId the articles went to
    expect(page.locator("#cluster-body h1.mono")).to_have_text(y.doc_id)
    assert Article.objects.get(nid="x").doc.doc_id == y.doc_id
