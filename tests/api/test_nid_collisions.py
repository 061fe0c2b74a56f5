"""Nids two crawlers post.

A nid is exactly its characters on every database: a case or accent variant of another
key's nid is another nid, never a duplicate key that poisons a batch with 503s. And
``?atomic=true`` is all or nothing when an item is another key's nid, too."""

from __future__ import annotations

import json

import pytest

from articles.models import ApiKey, Article

from .test_real_crawls import OTHER, article, post

# dialect: MariaDB's case- and accent-insensitive collations against Python's equality
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.dialect]


def _other_key() -> tuple[ApiKey, dict[str, str]]:
    key, plaintext = ApiKey.issue("second crawler")
    return key, {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"}


def test_case_and_accent_variants_of_anothers_nid_are_other_articles(client, auth):
    assert post(client, auth, article("own-1")).status_code in (200, 202)
    owner = Article.objects.get(nid="own-1")
    key, other = _other_key()
    variants = ["OWN-1", "Own-1", "ówn-1"]
    batch = post(client, other, {"articles": [article(n, content=OTHER) for n in variants]})
    assert batch.status_code == 202, batch.content
    assert [r["nid"] for r in batch.json()["results"]] == variants
    assert all(r["status"] == "queued" for r in batch.json()["results"])
    stored = {a.nid: a for a in Article.objects.filter(api_key=key)}
    assert sorted(stored) == sorted(variants)
    again = Article.objects.get(pk=owner.pk)
    assert (again.nid, again.api_key_id, again.content) == ("own-1", owner.api_key_id,
                                                             owner.content)
    # each is its own article to the API as well
    answer = client.get("/api/v1/articles/OWN-1", **other)
    assert answer.status_code == 200 and answer.json()["nid"] == "OWN-1"
    assert client.get("/api/v1/articles/own-1", **auth).json()["nid"] == "own-1"


def test_one_keys_own_variant_is_its_own_other_article_too(client, auth):
    post(client, auth, article("case-a"))
    assert post(client, auth, article("CASE-A", content=OTHER)).status_code in (200, 202)
    assert sorted(Article.objects.filter(nid__in=["case-a", "CASE-A"])
                  .values_list("nid", flat=True)) == ["CASE-A", "case-a"]


def test_an_atomic_batch_naming_anothers_nid_stores_nothing(client, auth):
    post(client, auth, article("owned-1"))
    _key, other = _other_key()
    body = {"articles": [article("fresh-1", content=OTHER), article("owned-1", title="改写")]}
    response = client.post("/api/v1/articles?atomic=true", data=json.dumps(body),
                           content_type="application/json", **other)
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "not_owner" and "Nothing was stored" in error["message"]
    assert list(error["details"]) == ["owned-1"]
    assert not Article.objects.filter(nid="fresh-1").exists()
    assert Article.objects.get(nid="owned-1").title != "改写"
    # without atomic the same batch stores the free item and refuses the other
    mixed = post(client, other, body)
    assert mixed.status_code == 202
    assert [r["status"] for r in mixed.json()["results"]] == ["queued", "conflict"]
