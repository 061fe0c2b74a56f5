"""/ops/: the operator's page, from the same code that answers /metrics."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from articles.models import Article

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def staff(client):
    user = User.objects.create_user("ops", password="pw-ops-123456", is_staff=True)
    client.force_login(user)
    return user


def test_staff_see_the_checks_and_what_waits(client, staff, redis_client):
    Article.objects.create(nid="q1", url="https://q.example/1", title="t", content="c")
    page = client.get("/ops/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Workers on the ingest queue" in html and 'class="attention"' in html  # none run
    assert "Store database" in html
    assert "Articles queued" in html
    assert 'aria-current="page"' in html


def test_the_page_speaks_chinese(client, staff, redis_client):
    client.cookies["django_language"] = "zh-hans"
    html = client.get("/ops/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "运维" in html and "摄入队列上的工作进程" in html


def test_only_staff_may_look(client, redis_client):
    assert client.get("/ops/").status_code == 302
    editor = User.objects.create_user("ed", password="pw-ed-123456")
    client.force_login(editor)
    assert client.get("/ops/").status_code == 403


def test_every_string_of_the_page_has_a_chinese_translation():
    import re
    from pathlib import Path

    from django.utils import translation

    root = Path(__file__).resolve().parents[2]
    view = (root / "articles" / "ops" / "views.py").read_text()
    template = (root / "templates" / "ops" / "operations.html").read_text()
    strings = set(re.findall(r'\b_\("([^"]+)"\)', view))
    strings |= set(re.findall(r'{% translate "([^"]+)" %}', template))
    strings |= {" ".join(m.split()) for m in
                re.findall(r"{% blocktranslate %}(.*?){% endblocktranslate %}", template, re.S)}
    assert len(strings) > 30
    with translation.override("zh-hans"):
        missing = [s for s in strings if translation.gettext(s) == s]
    assert missing == []
