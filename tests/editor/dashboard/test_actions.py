"""The editor actions: confirm, split, move, merge, representative."""

from __future__ import annotations

import pytest

from articles.models import Article, AuditEntry, DocStatus, EditorLink, LinkKind

from .conftest import at_version, doc_of, htmx, login

pytestmark = pytest.mark.django_db


def test_confirm_marks_the_doc_confirmed_pins_its_members_and_is_audited(client, corpus, editor):
    login(client, editor)
    doc = corpus["river"]
    response = client.post(f"/clusters/{doc.doc_id}/confirm/",
                           at_version(doc, note="checked"))
    assert response.status_code == 302
    assert response["Location"] == f"/clusters/{doc.doc_id}/"
    doc.refresh_from_db()
    assert doc.status == DocStatus.CONFIRMED
    assert set(Article.objects.filter(doc=doc).values_list("pinned", flat=True)) == {True}
    entry = AuditEntry.objects.get(doc_id=doc.doc_id)
    assert (entry.action, entry.actor_label, entry.note) == ("confirm", "editor", "checked")
    page = client.get(response["Location"]).content.decode()
    assert "Confirmed docId" in page
    assert "confirmed the cluster" in page and "checked" in page


def test_split_moves_a_member_into_a_new_doc_id(client, corpus, editor, auth):
    login(client, editor)
    doc = corpus["river"]
    response = client.post(f"/clusters/{doc.doc_id}/split/", at_version(doc, nid="river-3"))
    assert response.status_code == 302
    new = doc_of("river-3")
    assert new.doc_id != doc.doc_id and new.size == 1
    doc.refresh_from_db()
    assert doc.size == 2
    assert EditorLink.objects.filter(kind=LinkKind.CANNOT).count() == 2
    api = client.get("/api/v1/articles/river-3", **auth).json()
    assert api["docId"] == new.doc_id
    assert api["matchedBy"] == "editor"
    page = client.get(f"/clusters/{doc.doc_id}/").content.decode()
    assert new.doc_id in page  # in the message and the history


def test_splitting_the_only_member_is_reported_not_a_500(client, corpus, editor):
    login(client, editor)
    client.post(f"/clusters/{corpus['library'].doc_id}/split/",
                at_version(corpus["library"], nid="library-2"))
    single = doc_of("library-2")
    response = client.post(f"/clusters/{single.doc_id}/split/",
                           at_version(single, nid="library-2"),
                           follow=True)
    assert response.status_code == 200
    assert "only member" in response.content.decode()
    assert doc_of("library-2") == single


def test_an_article_of_another_doc_cannot_be_split_from_this_one(client, corpus, editor):
    login(client, editor)
    response = client.post(f"/clusters/{corpus['river'].doc_id}/split/",
                           at_version(corpus["river"], nid="library-2"), follow=True)
    assert "is not a member of this docId" in response.content.decode()
    assert doc_of("library-2") == corpus["library"]


def test_move_puts_a_member_into_another_doc(client, corpus, editor):
    login(client, editor)
    source, target = corpus["river"], corpus["library"]
    response = client.post(f"/clusters/{source.doc_id}/move/",
                           at_version(source, nid="river-3", target=f" {target.doc_id.upper()} "))
    assert response.status_code == 302
    assert response["Location"] == f"/clusters/{source.doc_id}/"
    assert doc_of("river-3") == target
    target.refresh_from_db()
    assert target.size == 3


def test_move_to_an_unknown_doc_id_is_reported(client, corpus, editor):
    login(client, editor)
    response = client.post(f"/clusters/{corpus['river'].doc_id}/move/",
                           at_version(corpus["river"], nid="river-3", target="nope"),
                           follow=True)
    assert "No docId nope." in response.content.decode()
    assert doc_of("river-3") == corpus["river"]


def test_merge_moves_every_member_and_lands_on_the_target(client, corpus, editor):
    login(client, editor)
    source, target = corpus["museum"], corpus["library"]
    response = client.post(f"/clusters/{source.doc_id}/merge/",
                           at_version(source, target=target.doc_id,
                                      target_version=target.version))
    assert response.status_code == 302
    assert response["Location"] == f"/clusters/{target.doc_id}/"
    assert doc_of("museum-1") == doc_of("museum-2") == target
    target.refresh_from_db()
    assert (target.size, target.status) == (4, DocStatus.CONFIRMED)
    # the emptied docId says where its articles went
    page = client.get(f"/clusters/{source.doc_id}/").content.decode()
    assert "no articles any more" in page and target.doc_id in page


def test_merge_search_finds_other_clusters_by_title_and_doc_id(client, corpus, editor):
    login(client, editor)
    source = corpus["museum"]
    html = client.get(f"/clusters/{source.doc_id}/", {"merge_q": "图书馆"},
                      **htmx("merge-results")).content.decode()
    assert "<html" not in html
    assert corpus["library"].doc_id in html and corpus["river"].doc_id not in html
    assert f'action="/clusters/{source.doc_id}/merge/"' in html
    by_prefix = client.get(f"/clusters/{source.doc_id}/",
                           {"merge_q": corpus["river"].doc_id[:8]}).content.decode()
    assert f'value="{corpus["river"].doc_id}"' in by_prefix
    # never itself
    itself = client.get(f"/clusters/{source.doc_id}/", {"merge_q": source.doc_id[:10]},
                        **htmx("merge-results")).content.decode()
    assert "No other cluster matches." in itself


def test_choose_and_release_the_representative(client, corpus, editor):
    login(client, editor)
    doc = corpus["river"]
    assert doc.representative.nid == "river-2"
    client.post(f"/clusters/{doc.doc_id}/representative/", at_version(doc, nid="river-3"))
    doc.refresh_from_db()
    assert (doc.representative.nid, doc.representative_pinned) == ("river-3", True)
    page = client.get(f"/clusters/{doc.doc_id}/").content.decode()
    assert "representative chosen by an editor" in page
    client.post(f"/clusters/{doc.doc_id}/release/", at_version(doc))
    doc.refresh_from_db()
    assert (doc.representative.nid, doc.representative_pinned) == ("river-2", False)
    actions = list(AuditEntry.objects.filter(doc_id=doc.doc_id).values_list("action", flat=True))
    assert actions == ["representative_released", "representative"]


def test_an_htmx_action_answers_with_the_updated_cluster_fragment(client, corpus, editor):
    login(client, editor)
    doc = corpus["river"]
    response = client.post(f"/clusters/{doc.doc_id}/split/", at_version(doc, nid="river-3"),
                           **htmx("cluster-body"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html
    assert "Split river-3 out into the new docId" in html
    assert 'data-nid="river-3"' not in html
    merged = client.post(f"/clusters/{doc.doc_id}/merge/",
                         at_version(doc, target=corpus["museum"].doc_id,
                                    target_version=corpus["museum"].version),
                         **htmx("cluster-body"))
    assert merged["HX-Redirect"] == f"/clusters/{corpus['museum'].doc_id}/"



def test_a_split_after_a_confirm_turns_its_pairs_and_leaves_the_others_alone(corpus, editor):
    """The split's cannot-links take the place of the confirm's must-links on the same
    pairs (before, both were deleted and neither written), and a must-link between two
    members that stay is kept."""
    from articles.editor import actions

    actions.confirm_doc(corpus["river"], editor)
    confirmed = set(EditorLink.objects.values_list("nid_a", "nid_b"))
    assert len(confirmed) == 2
    actions.split_article(Article.objects.get(nid="river-2"), editor, "not the same")
    links = {(a, b): kind for a, b, kind in EditorLink.objects.values_list(
        "nid_a", "nid_b", "kind")}
    split = {("river-1", "river-2"), ("river-2", "river-3")}
    assert {pair for pair, kind in links.items() if kind == LinkKind.CANNOT} == split
    assert {pair for pair, kind in links.items() if kind == LinkKind.MUST} == confirmed - split
    assert set(EditorLink.objects.filter(kind=LinkKind.CANNOT).values_list(
        "created_by__username", flat=True)) == {"editor"}
