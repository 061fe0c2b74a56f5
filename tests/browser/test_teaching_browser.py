"""The teaching queue in chromium: answered by keyboard, the verdict only after the
answer, the answer taken back with u, the next pair with j."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from articles.models import PairLabel
from tests.browser import stories
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def loaded(client, auth, run_worker, editor, settings):
    settings.TEACHING_AUDIT_PERCENT = 0
    stories.load(client, auth, run_worker)


def test_an_editor_teaches_by_keyboard_and_takes_an_answer_back(page, loaded):
    log_in(page, "editor", "/review/teach/")
    pair = page.locator(".teach-pair")
    expect(pair).to_have_attribute("data-answered", "0")
    expect(page.locator(".teach-verdict")).to_have_count(0)  # blind
    page.keyboard.press("n")
    expect(page.locator(".teach-verdict")).to_be_visible()
    expect(page.locator(".teach-verdict")).to_contain_text("The engine said:")
    assert PairLabel.objects.filter(answer="unsure", undone_at__isnull=True).count() == 1
    expect(page.locator(".teach-progress")).to_contain_text("1 not sure")
    page.keyboard.press("u")
    expect(page.locator(".message.success")).to_contain_text("Answer taken back.")
    expect(page.locator(".teach-progress")).to_contain_text("0 not sure")
    assert PairLabel.objects.get().undone_at is not None
    page.keyboard.press("n")
    expect(page.locator(".teach-verdict")).to_be_visible()
    first = PairLabel.objects.filter(undone_at__isnull=True).get()
    page.keyboard.press("j")
    expect(page.locator(".teach-pair")).to_have_attribute("data-answered", "0")
    page.keyboard.press("n")
    expect(page.locator(".teach-progress")).to_contain_text("2 not sure")
    second = PairLabel.objects.filter(undone_at__isnull=True).exclude(pk=first.pk).get()
    assert (second.nid_a, second.nid_b) != (first.nid_a, first.nid_b)


def test_the_review_queue_links_to_the_teaching_queue(page, loaded):
    log_in(page, "editor", "/review/")
    page.click("text=Help the engine")
    page.wait_for_url("**/review/teach/")
    expect(page.locator("h1")).to_have_text("Help the engine")
