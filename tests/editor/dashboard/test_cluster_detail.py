"""/clusters/<docId>/: members, distances, diff."""

from __future__ import annotations

import pytest

from .conftest import htmx, login

pytestmark = pytest.mark.django_db


def test_the_cluster_page_shows_members_distances_diff_and_keywords(client, corpus, viewer):
    login(client, viewer)
    doc = corpus["river"]
    response = client.get(f"/clusters/{doc.doc_id}/")
    assert response.status_code == 200
    html = response.content.decode()
    for nid in ("river-1", "river-2", "river-3"):
        assert nid in html
    for media in ("Evening Courier", "City Daily", "News Aggregator"):
        assert media in html
    assert "representative" in html
    assert "(d=0)" in html  # the stored match distance
    assert "100%" in html  # river-1 is an exact copy of the representative
    # the default comparison: the first member after the representative
    assert "Differences from the representative" in html
    assert "<del>" in html or "<ins>" in html
    assert 'class="kw"' in html and "滨江" in html
    assert "No editor decisions yet." in html


def test_a_member_can_be_compared_with_the_representative(client, corpus, viewer):
    login(client, viewer)
    doc = corpus["river"]
    response = client.get(f"/clusters/{doc.doc_id}/", {"compare": "river-3"}, **htmx("diff"))
    html = response.content.decode()
    assert "<html" not in html and "<table" not in html
    assert "river-3" in html
    # river-3 reworded "骑行" as "骑车、跑步": word by word, each on its own side
    assert "<del>骑行</del>" in html
    assert "<ins>骑车、跑步</ins>" in html and "<ins>（完）</ins>" in html
    # the titles too (the representative, river-2, is a repost under another title)
    assert "<del>贯通（转载）</del>" in html
    # the same diff without htmx: the whole page
    page = client.get(f"/clusters/{doc.doc_id}/", {"compare": "river-3"}).content.decode()
    assert "<html" in page and "<ins>骑车、跑步</ins>" in page


def test_an_unknown_doc_id_is_404(client, viewer, db):
    login(client, viewer)
    assert client.get("/clusters/0000000000000000-0000000000000000/").status_code == 404
