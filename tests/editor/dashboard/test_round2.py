"""Smaller things of the desk's second round: a refused action keeps the editor's note,
/favicon.ico, times with their offset, the merge form naming the target's version."""

from __future__ import annotations

import pytest
from django.test import Client

from articles.editor import actions

from .conftest import at_version, login

pytestmark = pytest.mark.django_db


def test_a_refused_stale_action_keeps_the_note_the_editor_typed(client, corpus, editor):
    login(client, editor)
    river = corpus["river"]
    shown = at_version(river, note="两篇都写了十一个公园，确认")
    actions.confirm_doc(river, None)  # someone else, meanwhile
    page = client.post(f"/clusters/{river.doc_id}/confirm/", shown, follow=True)
    html = page.content.decode()
    assert "changed this cluster" in html or "This cluster changed" in html
    assert 'value="两篇都写了十一个公园，确认"' in html
    # offered once: the next visit starts empty
    again = client.get(f"/clusters/{river.doc_id}/").content.decode()
    assert "两篇都写了十一个公园" not in again


def test_the_favicon_is_served():
    response = Client().get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("/favicon.svg")


def test_claim_times_show_their_offset(client, corpus, editor, settings):
    from django.contrib.auth.models import User

    settings.TIME_ZONE = "Asia/Shanghai"
    login(client, editor)
    client.post("/review/take/")
    colleague = User.objects.create_user("editor2")
    colleague.groups.set(editor.groups.all())
    page = login(Client(), colleague).get("/review/").content.decode()
    assert "taken by editor until" in page and "+0800" in page


def test_the_merge_form_names_the_targets_version(client, corpus, editor):
    login(client, editor)
    museum = corpus["museum"]
    html = client.get(f"/clusters/{corpus['river'].doc_id}/?merge_q={museum.doc_id}"
                      ).content.decode()
    assert f'name="target" value="{museum.doc_id}"' in html
    assert f'name="target_version" value="{museum.version}"' in html
    assert 'name="representative"' in html
