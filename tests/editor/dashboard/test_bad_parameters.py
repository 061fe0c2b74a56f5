"""Every parameter of the editor pages is validated, never a 500 (`²` is a digit to
str.isdigit but not to int()). Ids, positions and versions: a 400 naming
the parameter. The /clusters/ filter form: the page with the field's error, as for
every invalid filter."""

from __future__ import annotations

import pytest

from articles.models import BulkAction

from .conftest import htmx, login

pytestmark = pytest.mark.django_db

SUPERSCRIPT = "²"
HUGE = "9" * 30


@pytest.mark.parametrize("query", [
    f"/clusters/news/?since={SUPERSCRIPT}",
    f"/clusters/news/?since={HUGE}",
    f"/review/news/?since={SUPERSCRIPT}",
    "/review/news/?since=-1",
    f"/review/?item={SUPERSCRIPT}",
    f"/review/?item={HUGE}",
    f"/review/?pos={SUPERSCRIPT}",
])
def test_a_bad_parameter_is_a_400_with_a_message(client, editor, corpus, query):
    response = login(client, editor).get(query)
    assert response.status_code == 400, (query, response.status_code)
    assert b"must be a whole number" in response.content
    assert response["Content-Type"].startswith("text/plain")


@pytest.mark.parametrize(("query", "message"), [
    ("/clusters/?seen_to=9999-12-31", b"The date must be before 9999-12-31"),
    ("/clusters/?seen_from=0000-01-01", b"Enter a valid date"),
    (f"/clusters/?min_size={SUPERSCRIPT}", b"Enter a whole number"),
])
def test_a_bad_filter_shows_its_error_on_the_page(client, editor, corpus, query, message):
    response = login(client, editor).get(query)
    assert response.status_code == 200
    assert message in response.content


def test_a_cluster_page_with_a_bad_version_is_a_400(client, editor, corpus):
    doc_id = corpus["river"].doc_id
    response = login(client, editor).get(f"/clusters/{doc_id}/?version={SUPERSCRIPT}",
                                          **htmx("related"))
    assert response.status_code == 400
    assert b"version must be" in response.content


def test_a_bulk_selection_with_a_superscript_version_is_refused_not_a_500(
        client, editor, corpus):
    doc_id = corpus["river"].doc_id
    response = login(client, editor).post(
        "/bulk/", {"action": "confirm", "doc": f"{doc_id}:{SUPERSCRIPT}"}, follow=True)
    assert response.status_code == 200
    assert "is not a cluster" in response.content.decode()
    assert not BulkAction.objects.exists()


def test_a_good_parameter_still_works(client, editor, corpus):
    assert login(client, editor).get("/clusters/news/?since=0").status_code == 200
    assert client.get("/review/?item=1&pos=0").status_code == 200
    assert client.get("/clusters/?seen_to=2099-12-31").status_code == 200


@pytest.mark.parametrize("query", ["/clusters/news/?since=", "/review/news/?since=",
                                   "/review/?item=", "/review/?pos=",
                                   "/clusters/?seen_to=", "/clusters/?min_size="])
def test_fuzzed_parameters_never_get_a_500(client, editor, corpus, query):
    from urllib.parse import quote

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    login(client, editor)

    @settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.one_of(st.text(max_size=30), st.integers(min_value=-10, max_value=10**30)
                     .map(str), st.sampled_from(["²", "٣", "1e9", "0x10", "9999-12-31"])))
    def check(value: str) -> None:
        response = client.get(query + quote(value))
        assert response.status_code in (200, 400), (value, response.status_code)

    check()
