"""/clusters/: the list, its filters, sorting and paging."""

from __future__ import annotations

import pytest

from articles.editor import actions

from .conftest import htmx, login

pytestmark = pytest.mark.django_db


def test_the_cluster_list_shows_each_doc_with_its_representative(client, corpus, viewer):
    login(client, viewer)
    response = client.get("/clusters/")
    assert response.status_code == 200
    html = response.content.decode()
    for doc in corpus.values():
        assert doc.doc_id in html
    assert "滨江绿道贯通（转载）" in html  # river's representative (hottest member)
    assert "City Daily" in html
    assert "4 clusters" in html


def test_the_cluster_list_filters(client, corpus, viewer):
    login(client, viewer)
    actions.confirm_doc(corpus["library"], None)

    def listed(**params) -> set[str]:
        html = client.get("/clusters/", params).content.decode()
        return {d for d in (doc.doc_id for doc in corpus.values()) if d in html}

    every = {doc.doc_id for doc in corpus.values()}
    assert listed() == every
    assert listed(status="confirmed") == {corpus["library"].doc_id}
    assert listed(status="auto") == every - {corpus["library"].doc_id}
    assert listed(q="图书馆") == {corpus["library"].doc_id}
    assert listed(q=corpus["museum"].doc_id) == {corpus["museum"].doc_id}
    assert listed(media="News Aggregator") == {corpus["river"].doc_id, corpus["museum"].doc_id}
    assert listed(min_size=3) == {corpus["river"].doc_id}
    assert listed(max_size=2) == every - {corpus["river"].doc_id}
    assert listed(min_size=1, max_size=1) == set()
    assert listed(seen_from="2000-01-01", seen_to="2000-01-02") == set()
    assert listed(seen_from="2000-01-01") == every
    # an invalid value is reported, not a 500
    response = client.get("/clusters/", {"min_size": "lots", "seen_from": "yesterday"})
    assert response.status_code == 200


def test_the_cluster_list_sorts_and_pages(client, corpus, viewer, monkeypatch):
    from articles.editor import views

    login(client, viewer)
    html = client.get("/clusters/", {"sort": "-size"}).content.decode()
    assert html.index(corpus["river"].doc_id) < html.index(corpus["library"].doc_id)
    html = client.get("/clusters/", {"sort": "size"}).content.decode()
    assert html.index(corpus["river"].doc_id) > html.index(corpus["library"].doc_id)
    monkeypatch.setattr(views, "PAGE_SIZE", 3)
    first = client.get("/clusters/", {"sort": "-size"}).content.decode()
    assert "Page 1 of 2" in first
    assert "sort=-size&amp;page=2" in first
    second = client.get("/clusters/", {"sort": "-size", "page": 2}).content.decode()
    assert second.count('class="doc-id"') == 1


def test_an_htmx_request_gets_only_the_rows(client, corpus, viewer):
    login(client, viewer)
    response = client.get("/clusters/", {"q": "图书馆"}, **htmx("cluster-rows"))
    html = response.content.decode()
    assert "<html" not in html and "<form" not in html
    assert corpus["library"].doc_id in html
    assert corpus["river"].doc_id not in html
    assert "HX-Target" in response["Vary"]


def test_the_cluster_list_runs_a_fixed_number_of_queries(client, corpus, viewer,
                                                        django_assert_max_num_queries):
    login(client, viewer)
    # session, user, groups, count, page, the newest docId and article (bulk, banner),
    # the page's review claims ("anna is reviewing this")
    with django_assert_max_num_queries(8):
        client.get("/clusters/")
