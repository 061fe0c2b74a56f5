"""Playwright against the live server: Debian's chromium, headless, one browser a session.

Never `playwright install`: the system chromium is used (executable_path).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

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


@pytest.fixture(scope="session")
def browser() -> Iterator:
    # Fail loudly: `make test` installs chromium (scripts/install-system-deps.sh).
    assert os.path.exists(CHROMIUM), f"no chromium at {CHROMIUM}: apt-get install chromium"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server) -> Iterator:
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


def log_in(page, username: str, next_path: str = "/clusters/") -> None:
    page.goto(f"/accounts/login/?next={next_path}")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"**{next_path}")
