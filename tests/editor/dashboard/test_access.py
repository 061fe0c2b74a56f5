"""Who may see the pages and who may act."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from articles.models import AuditEntry, Doc, DocStatus

from .conftest import PASSWORD, doc_of, htmx, login

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/clusters/", "/clusters/abc/", "/review/"])
def test_the_pages_send_a_logged_out_user_to_the_login_page(client, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_an_action_sends_a_logged_out_user_to_the_login_page(client, corpus):
    response = client.post(f"/clusters/{corpus['river'].doc_id}/confirm/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert doc_of("river-1").status != DocStatus.CONFIRMED


def test_an_htmx_request_after_the_session_ended_reloads_on_the_login_page(client, db):
    response = client.get("/clusters/", {"q": "x"}, **htmx("cluster-rows"))
    assert response.status_code == 200 and not response.content  # django-htmx's redirect
    assert response["HX-Redirect"] == "/accounts/login/?next=%2Fclusters%2F%3Fq%3Dx"


def test_a_user_who_is_neither_staff_nor_editor_is_refused(client, corpus):
    login(client, User.objects.create_user("reader", password=PASSWORD))
    assert client.get("/clusters/").status_code == 403
    assert client.get(f"/clusters/{corpus['river'].doc_id}/").status_code == 403
    assert client.get("/review/").status_code == 403


@pytest.mark.parametrize("action, data", [
    ("confirm", {}),
    ("split", {"nid": "river-3"}),
    ("representative", {"nid": "river-3"}),
    ("release", {}),
    ("move", {"nid": "river-3", "target": "LIBRARY"}),
    ("merge", {"target": "LIBRARY"}),
])
def test_staff_who_are_not_editors_may_look_but_every_action_is_403(client, corpus, viewer,
                                                                   action, data):
    login(client, viewer)
    doc = corpus["river"]
    page = client.get(f"/clusters/{doc.doc_id}/")
    assert page.status_code == 200
    assert f'action="/clusters/{doc.doc_id}/split/"' not in page.content.decode()
    data = {k: corpus["library"].doc_id if v == "LIBRARY" else v for k, v in data.items()}
    response = client.post(f"/clusters/{doc.doc_id}/{action}/", data)
    assert response.status_code == 403
    assert doc_of("river-3").doc_id == doc.doc_id
    assert Doc.objects.get(pk=doc.pk).status == doc.status
    assert not AuditEntry.objects.filter(doc_id=doc.doc_id).exists()


def test_actions_are_post_only(client, corpus, editor):
    login(client, editor)
    response = client.get(f"/clusters/{corpus['river'].doc_id}/confirm/")
    assert response.status_code == 405


def test_an_action_without_the_csrf_token_is_refused(corpus, editor):
    browser = Client(enforce_csrf_checks=True)
    login(browser, editor)
    url = f"/clusters/{corpus['river'].doc_id}/confirm/"
    assert browser.post(url).status_code == 403
    assert doc_of("river-1").status != DocStatus.CONFIRMED
    page = browser.get(f"/clusters/{corpus['river'].doc_id}/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    assert browser.post(url, {"csrfmiddlewaretoken": token,
                               "version": corpus["river"].version}).status_code == 302
    assert doc_of("river-1").status == DocStatus.CONFIRMED
    # htmx sends the token in a header, from the body's hx-headers.
    header = re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)
    response = browser.post(url, {"version": corpus["river"].version + 1},
                           HTTP_X_CSRFTOKEN=header, **htmx("cluster-body"))
    assert response.status_code == 200
