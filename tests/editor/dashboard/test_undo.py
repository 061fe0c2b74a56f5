"""Undo of every editor decision: the previous state comes back exactly (docIds, pins,
editor links, statuses, representative, the representative store row, the API's docId),
the undo is audited, and a decision a later one depends on is refused with a reason."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings

from articles.editor import actions
from articles.models import Article, AuditEntry, Decision, Doc, DocStatus, EditorLink
from articles.representatives import outbox

from .conftest import at_version, htmx, login

pytestmark = pytest.mark.django_db


@pytest.fixture
def store(tmp_path):
    with override_settings(LOCAL_REPRESENTATIVE_STORE=tmp_path / "reps.sqlite3"):
        outbox.store.cache_clear()
        outbox.sync()
        yield outbox.store()
    outbox.store.cache_clear()


def state() -> tuple:
    """Everything a decision may change, but the counters (versions) it must move on."""
    return (
        sorted(Article.objects.values_list(
            "nid", "doc__doc_id", "pinned", "matched_by", "matched_article__nid", "distance",
            "similarity")),
        sorted(Doc.objects.filter(size__gt=0).values_list(
            "doc_id", "size", "status", "anchor__nid", "representative__nid",
            "representative_pinned", "first_seen", "last_seen")),
        sorted(EditorLink.objects.values_list("kind", "nid_a", "nid_b")),
    )


def stored_representatives(store) -> dict[str, str]:
    outbox.push_pending(limit=1000, rounds=10)
    return {doc_id: row.get("nid") for doc_id, row in store.scan()}


ACTIONS = {
    "confirm": ("confirm", {}),
    "split": ("split", {"nid": "river-3"}),
    "move": ("move", {"nid": "river-3", "target": "LIBRARY"}),
    "merge": ("merge", {"target": "LIBRARY"}),
    "representative": ("representative", {"nid": "river-3"}),
}


@pytest.mark.parametrize("name", [*ACTIONS, "release"])
def test_undo_restores_the_exact_previous_state(client, corpus, editor, auth, store, name):
    login(client, editor)
    river, library = corpus["river"], corpus["library"]
    if name == "release":  # a choice to release first
        actions.choose_representative(Article.objects.get(nid="river-1"), editor)
        url, data = "release", {}
    else:
        url, data = ACTIONS[name]
    data = {k: library.doc_id if v == "LIBRARY" else v for k, v in data.items()}
    if name == "merge":  # the merge form names the target's version too
        data["target_version"] = library.version
    before = state()
    reps_before = stored_representatives(store)
    api_before = {nid: client.get(f"/api/v1/articles/{nid}", **auth).json()["docId"]
                  for nid in ("river-1", "river-2", "river-3", "library-1")}

    response = client.post(f"/clusters/{river.doc_id}/{url}/", at_version(river, **data),
                           follow=True)
    html = response.content.decode()
    assert state() != before
    if name not in ("confirm", "move"):  # the store saw it (a new or emptied docId, a choice)
        assert stored_representatives(store) != reps_before
    # the message offers Undo
    undo_url = re.search(r'action="(/decisions/\d+/undo/)"', html).group(1)
    decision = Decision.objects.get(pk=int(undo_url.split("/")[2]))
    assert decision.action == ("representative_released" if name == "release" else name)

    response = client.post(undo_url)
    assert response.status_code == 302
    assert response["Location"] == f"/clusters/{river.doc_id}/"
    assert state() == before
    assert stored_representatives(store) == reps_before
    assert {nid: client.get(f"/api/v1/articles/{nid}", **auth).json()["docId"]
            for nid in api_before} == api_before
    # audited on every docId it touched
    undo_entries = AuditEntry.objects.filter(action="undo", data__decision=decision.pk)
    assert river.doc_id in set(undo_entries.values_list("doc_id", flat=True))
    assert set(undo_entries.values_list("actor_label", flat=True)) == {"editor"}
    page = client.get(response["Location"]).content.decode()
    assert "Undone:" in page and "undid a decision" in page
    # and cannot be undone twice
    again = client.post(undo_url, follow=True).content.decode()
    assert "This decision was undone already." in again
    assert state() == before


def test_a_decision_a_later_one_depends_on_is_not_undone(client, corpus, editor):
    login(client, editor)
    river = corpus["river"]
    client.post(f"/clusters/{river.doc_id}/split/", at_version(river, nid="river-3"))
    split = Decision.objects.get(action="split")
    # a later decision on the docId the split changed
    actions.confirm_doc(Doc.objects.get(pk=river.pk), None)
    before = state()
    html = client.post(f"/decisions/{split.pk}/undo/", follow=True).content.decode()
    assert (f"It cannot be undone: system changed docId {river.doc_id} since "
            "(confirmed the cluster).") in html
    assert state() == before
    assert Decision.objects.get(pk=split.pk).undone_at is None
    # undo the later one first; then the split can go
    client.post(f"/decisions/{Decision.objects.get(action='confirm').pk}/undo/")
    client.post(f"/decisions/{split.pk}/undo/")
    assert Article.objects.get(nid="river-3").doc_id == river.pk
    assert Doc.objects.get(pk=river.pk).size == 3


def test_a_split_is_not_undone_when_articles_joined_its_new_doc_id(client, corpus, editor):
    login(client, editor)
    library = corpus["library"]
    new = actions.split_article(Article.objects.get(nid="river-3"), editor)
    split = Decision.objects.get(action="split")
    # the engine placed another article in the new docId (not an editor decision)
    Article.objects.filter(nid="library-2").update(doc=new)
    html = client.post(f"/decisions/{split.pk}/undo/", follow=True).content.decode()
    assert f"new articles joined docId {new.doc_id} since" in html
    assert Article.objects.get(nid="river-3").doc_id == new.pk
    assert Decision.objects.get(pk=split.pk).undone_at is None
    assert not AuditEntry.objects.filter(action="undo").exists()
    assert library.doc_id != new.doc_id


def test_the_history_offers_undo_until_it_is_used(client, corpus, editor, viewer):
    login(client, editor)
    river = corpus["river"]
    client.post(f"/clusters/{river.doc_id}/confirm/", at_version(river))
    decision = Decision.objects.get(action="confirm")
    page = client.get(f"/clusters/{river.doc_id}/").content.decode()
    history = page[page.index('class="card audit"'):]
    assert f'action="/decisions/{decision.pk}/undo/"' in history
    # a viewer sees no Undo and may not undo
    login(client, viewer)
    page = client.get(f"/clusters/{river.doc_id}/").content.decode()
    assert "/undo/" not in page
    assert client.post(f"/decisions/{decision.pk}/undo/").status_code == 403
    login(client, editor)
    response = client.post(f"/decisions/{decision.pk}/undo/", **htmx("cluster-body"))
    assert response["HX-Redirect"] == f"/clusters/{river.doc_id}/"
    assert Doc.objects.get(pk=river.pk).status == DocStatus.AUTO
    page = client.get(f"/clusters/{river.doc_id}/").content.decode()
    history = page[page.index('class="card audit"'):]
    assert "/undo/" not in history


def test_undo_from_the_review_queue_puts_the_item_back(client, corpus, editor):
    login(client, editor)
    river = corpus["river"]
    html = client.post(f"/clusters/{river.doc_id}/split/",
                       at_version(river, nid="river-3", next="/review/?pos=0"),
                       **htmx("review-queue")).content.decode()
    assert "river-3" not in re.findall(r'<bdi class="mono">([^<]+)</bdi>', html)
    undo_url = re.search(r'hx-post="(/decisions/\d+/undo/)"', html).group(1)
    assert 'name="next" value="/review/?pos=0"' in html
    html = client.post(undo_url, {"next": "/review/?pos=0"},
                       **htmx("review-queue")).content.decode()
    assert "<html" not in html
    assert "Undone: split an article out" in html
    assert "river-3" in re.findall(r'<bdi class="mono">([^<]+)</bdi>', html)


@pytest.mark.parametrize("seconds", [7, 0])
def test_the_undo_button_beside_the_message_lasts_the_configured_time(client, corpus, editor,
                                                                      settings, seconds):
    settings.UNDO_TOAST_SECONDS = seconds
    login(client, editor)
    river = corpus["river"]
    html = client.post(f"/clusters/{river.doc_id}/confirm/", at_version(river),
                       follow=True).content.decode()
    assert re.search(rf'data-action="undo" data-hide-after="{seconds}"', html)


@pytest.mark.parametrize("value, seconds", [("5", 5), ("-1", 0), (None, 30)])
def test_the_undo_toast_time_comes_from_the_environment(value, seconds):
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if k != "UNDO_TOAST_SECONDS"}
    if value is not None:
        env["UNDO_TOAST_SECONDS"] = value
    out = subprocess.run(
        [sys.executable, "-c", "import dedupsite.settings as s; print(s.UNDO_TOAST_SECONDS)"],
        env=env, cwd=Path(__file__).resolve().parents[3], capture_output=True, text=True,
        check=True)
    assert int(out.stdout) == seconds
