"""Two editors teach the engine in chromium, then an admin retrains it and /stats/ shows it.

The labelled crawled pairs are posted through the API and the desk is restricted to the
families it may ask (``TEACHING_DRILL_PAIRS``, as bench/teaching_drill.py runs it);
one editor has already answered a morning's worth through the desk's pages. In the
browser: the first editor answers by keyboard with the labels, the second is asked
another pair, answers it and takes the answer back with ``u``; an admin fits a
comparison-vector version in the admin, reads its preview against the active model on
held-out answers and activates it; /stats/ shows both editors' labels and the version
on its chart. The same scene, in English and Chinese, makes the screenshots
(tests/browser/test_screenshots.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from articles.models import EngineSettings, MatchModelVersion, PairLabel
from tests.browser.conftest import SEEDED, log_in

pytestmark = [pytest.mark.browser, pytest.mark.data, pytest.mark.django_db(transaction=True)]

KEYS = {True: "s", False: "d"}


def in_chinese(page, live_server) -> None:
    page.context.add_cookies([{"name": "django_language", "value": "zh-hans",
                               "url": live_server.url}])


def shown_pair(page) -> tuple[str, str]:
    left, right = (page.locator(".teach-pair .side-label .mono").nth(i).inner_text()
                   for i in range(2))
    return left, right


def answer_by_keyboard(page, labels: dict[tuple[str, str], bool]) -> tuple[str, str]:
    """Answer the pair on the page with its label, by keyboard; wait for the verdict."""
    expect(page.locator(".teach-pair")).to_have_attribute("data-answered", "0")
    left, right = shown_pair(page)
    page.keyboard.press(KEYS[labels[(min(left, right), max(left, right))]])
    expect(page.locator(".teach-verdict")).to_be_visible()
    return left, right


def scene(page, other_page, live_server, the_split: Any, editor, second,
          shoot: Callable[[Any, str], None] | None = None) -> None:
    """The two editors, the retraining and /stats/ (``shoot(page_or_locator, name)``
    takes a screenshot at each step when given)."""
    for each in (page, other_page):
        each.set_default_timeout(20_000)
    labels = the_split.labels
    log_in(page, "editor", "/review/teach/")
    expect(page.locator(".teach-verdict")).to_have_count(0)  # blind
    first = answer_by_keyboard(page, labels)
    if shoot:
        shoot(page, "teach-keyboard")
    # the second editor is asked another pair: the first one has an answer now
    log_in(other_page, second.username, "/review/teach/")
    assert shown_pair(other_page) != first
    theirs = answer_by_keyboard(other_page, labels)
    label = PairLabel.objects.get(editor=second)
    assert (label.nid_a, label.nid_b) == theirs and label.undone_at is None
    other_page.keyboard.press("u")  # taken back
    expect(other_page.locator(".message.success")).to_be_visible()
    expect(other_page.locator(".teach-progress")).to_have_attribute("data-total", "0")
    label.refresh_from_db()
    assert label.undone_at is not None
    assert shown_pair(other_page) == theirs  # asked again: the pair is open once more
    answer_by_keyboard(other_page, labels)
    # the first editor goes on with j
    for _ in range(2):
        page.keyboard.press("j")
        answer_by_keyboard(page, labels)
    expect(page.locator(".teach-progress")).to_have_attribute("data-total", str(SEEDED + 3))
    standing = PairLabel.objects.filter(undone_at__isnull=True)
    assert standing.filter(editor=editor).count() == SEEDED + 3
    assert standing.filter(editor=second).count() == 1

    # the admin fits a version, reads its preview and activates it
    page.goto("/admin/articles/matchmodelversion/")
    page.locator("form.train-form:has(input[name=vector]) button").click()
    page.wait_for_url("**/admin/articles/matchmodelversion/*/change/")
    version = MatchModelVersion.objects.get(trained_pairs__gt=0)
    assert version.labels["answers"] and version.report["heldOutDecisions"] > 0
    expect(page.locator("table.model-comparison")).to_be_visible()  # held-out answers
    expect(page.locator(".pr-chart svg")).to_be_visible()
    if shoot:
        shoot(page, "teach-retrained-preview")
    page.locator("input[name=_activate]").click()
    expect(page.locator(".active-model")).to_be_visible()
    assert EngineSettings.load().match_model == version

    # /stats/: both editors' labels, the version on the chart
    page.goto("/stats/")
    rows = page.locator("#labels-per-editor tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator("#labels-per-editor")).to_contain_text(second.username)
    expect(page.locator("#versions-chart svg")).to_be_visible()
    expect(page.locator("#versions-chart")).to_contain_text(version.version)
    if shoot:
        shoot(page.locator("#teaching"), "teach-stats")


def test_two_editors_teach_by_keyboard_and_the_retrained_model_shows(
        page, other_page, live_server, taught, editor, second_editor) -> None:
    scene(page, other_page, live_server, taught, editor, second_editor)
