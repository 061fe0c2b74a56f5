from __future__ import annotations

import pytest

from articles.models import ApiKey, Article, Doc

# dialect: unsigned 64-bit fingerprints stored in two's complement on SQLite (articles/fields.py)
pytestmark = [pytest.mark.django_db, pytest.mark.dialect]


@pytest.mark.parametrize("value", [0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1])
def test_fingerprints_round_trip_as_unsigned_64_bit(value):
    Article.objects.create(nid="n", url="https://a.example/", content="x", content_fp=value,
                           title_fp=value, url_hash=value)
    row = Article.objects.get(nid="n")
    assert row.content_fp == row.title_fp == row.url_hash == value
    assert Article.objects.filter(content_fp=value).count() == 1


def test_an_api_key_is_stored_hashed_and_authenticates():
    key, plaintext = ApiKey.issue("crawler")
    assert plaintext not in key.key_hash
    assert ApiKey.authenticate(plaintext) == key
    assert ApiKey.authenticate(plaintext + "x") is None
    assert ApiKey.authenticate("garbage") is None


def test_doc_ids_have_the_seed_format():
    from articles.ingest.assign import make_doc_id

    doc_id = make_doc_id("nid-1")
    Doc.objects.create(doc_id=doc_id)
    hi, lo = doc_id.split("-")
    assert len(hi) == len(lo) == 16
    int(hi, 16), int(lo, 16)
    assert make_doc_id("nid-1") == doc_id != make_doc_id("nid-2")
