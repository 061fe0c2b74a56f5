"""The ``next`` parameter of the editors' forms is a URL on this site, redirected to as it
is: never reversed as a route name (``next=abc`` used to answer 500 after the undo was
committed), never another host; anything else falls back to the form's own page."""

from __future__ import annotations

import pytest

from articles.models import BulkAction, Decision

from .conftest import at_version, login

pytestmark = pytest.mark.django_db

REFUSED = ["abc", "clusters", "review", "https://evil.example/", "//evil.example/x",
           "javascript:alert(1)", "\\\\evil.example", " /clusters/"]


@pytest.mark.parametrize("next_url", REFUSED)
def test_a_bulk_decision_with_a_bad_next_goes_back_to_the_clusters(client, corpus, editor,
                                                                   next_url):
    login(client, editor)
    answer = client.post("/bulk/", {"next": next_url, "scope": "selected"})  # no action
    assert answer.status_code == 302 and answer["Location"] == "/clusters/"
    assert not BulkAction.objects.exists()


def test_a_bulk_decision_keeps_a_next_on_this_site(client, corpus, editor):
    login(client, editor)
    answer = client.post("/bulk/", {"next": "/clusters/?status=auto", "scope": "selected"})
    assert answer.status_code == 302 and answer["Location"] == "/clusters/?status=auto"


@pytest.mark.parametrize("next_url", REFUSED)
def test_an_undo_with_a_bad_next_is_done_and_lands_on_its_cluster(client, corpus, editor,
                                                                   next_url):
    login(client, editor)
    river = corpus["river"]
    client.post(f"/clusters/{river.doc_id}/confirm/", at_version(river))
    decision = Decision.objects.latest("pk")
    answer = client.post(f"/decisions/{decision.pk}/undo/", {"next": next_url})
    assert answer.status_code == 302
    assert answer["Location"] == f"/clusters/{river.doc_id}/"
    decision.refresh_from_db()
    assert decision.undone_at is not None
