"""Playwright against the live server: Debian's chromium, headless, one browser a session.

Never `playwright install`: the system chromium is used (executable_path).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Playwright's sync API runs an event loop in this thread; the ORM calls of the tests
# are still synchronous.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = "/usr/bin/chromium"

# The screenshot generator is a tool, not a test: collected only when asked for
# (DEDUPSITE_SCREENSHOTS=1 .venv/bin/pytest tests/browser/test_screenshots.py).
collect_ignore = [] if os.environ.get("DEDUPSITE_SCREENSHOTS") else ["test_screenshots.py"]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
PASSWORD = "pw-12345-long"
ROOT = Path(__file__).resolve().parents[2]
SEEDED = 60  # teaching answers given through the desk before the browser opens (taught)


@pytest.fixture(scope="session")
def browser() -> Iterator:
    # Fail loudly: `make test` installs chromium (scripts/install-system-deps.sh).
    assert os.path.exists(CHROMIUM), f"no chromium at {CHROMIUM}: apt-get install chromium"
    from playwright.sync_api import expect, sync_playwright

    # make test runs its passes side by side on two cores: an assertion waits as long
    # as a page's own actions do (10 s) rather than Playwright's 5 s
    expect.set_options(timeout=10_000)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def _browser_page(browser, live_server) -> Iterator:
    """A page in a browser context of its own (cookies, session): fails the test on
    any script error."""
    context = browser.new_context(base_url=live_server.url, locale="en-US",
                                  viewport={"width": 1360, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.on("dialog", lambda dialog: dialog.accept())  # hx-confirm before split, move, merge
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, errors  # no script error on any page


@pytest.fixture
def page(browser, live_server) -> Iterator:
    yield from _browser_page(browser, live_server)


@pytest.fixture
def other_page(browser, live_server) -> Iterator:
    """The second editor's browser."""
    yield from _browser_page(browser, live_server)


@pytest.fixture
def editor(transactional_db):
    from django.contrib.auth.models import Group, User

    from articles.editor.actions import EDITORS_GROUP

    user = User.objects.create_user("editor", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name=EDITORS_GROUP)[0])
    return user


@pytest.fixture
def viewer(transactional_db):
    from django.contrib.auth.models import User

    return User.objects.create_user("viewer", password=PASSWORD, is_staff=True)


@pytest.fixture
def second_editor(editor):
    from django.contrib.auth.models import User

    other = User.objects.create_user("editor2", password=PASSWORD)
    other.groups.set(editor.groups.all())
    return other


def log_in(page, username: str, next_path: str = "/clusters/") -> None:
    page.goto(f"/accounts/login/?next={next_path}")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"**{next_path}")


# --- the teaching desk on the labelled crawled pairs (test_teaching_two_editors_browser.py)


def teaching_drill() -> Any:
    """bench/teaching_drill.py: the drill's split, the articles, the scripted desk."""
    sys.path.insert(0, str(ROOT / "bench"))
    import teaching_drill

    return teaching_drill


@pytest.fixture
def taught(client, auth, run_worker, editor, settings, tmp_path) -> Any:
    """The labelled crawled articles posted and processed, the desk on the drill's
    pairs, and ``SEEDED`` answers of the first editor given through its pages."""
    from django.test import Client

    drill = teaching_drill()
    the_split = drill.split(drill.crawled_labels())
    path = tmp_path / "drill.csv"
    drill.write_pairs(path, the_split.asked)
    settings.TEACHING_DRILL_PAIRS = str(path)
    settings.TEACHING_AUDIT_PERCENT = 0  # the pair taken back is asked again, not a draw
    drill.post_articles(client, auth, drill.article_payloads(
        {n for pair in the_split.labels for n in pair}))
    run_worker()
    editor.is_staff = editor.is_superuser = True  # the admin of the scene too
    editor.save()
    desk_client = Client()
    assert desk_client.login(username="editor", password=PASSWORD)
    assert drill.Desk(desk_client, None).answer(SEEDED, the_split.labels) == SEEDED
    return the_split
