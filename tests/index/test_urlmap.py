"""The canonical-URL map (fingerprints/stores/url_map.py): the first article of a URL, the
time window, expiry, bulk loading, and the rebuild of an index of another layout."""

from __future__ import annotations

import numpy as np
import pytest

from articles.index import reindex
from articles.models import Article, IndexState
from fingerprints.rule.ids import url_hash
from fingerprints.stores.url_map import BUCKET_BITS, RECORD_DTYPE, RedisUrlMap
from tests.index.test_window import BODY, post


def test_the_first_article_of_a_url_is_its_owner(redis_client):
    urls = RedisUrlMap(redis_client, namespace="t:u")
    a, b = url_hash("https://a.example/1"), url_hash("https://b.example/2")
    urls.add_many([(7, a), (3, b), (9, a), (5, 0)])  # a zero hash (no URL) is left out
    assert urls.lookup([a, b, url_hash("https://c.example/3"), 0]) == [7, 3, None, None]
    assert urls.records() == 3
    urls.floor = 8  # the window: article 7 is outside, 9 is the first inside
    assert urls.lookup([a, b]) == [9, None]


def test_expiry_drops_the_records_below_the_floor_only(redis_client):
    urls = RedisUrlMap(redis_client, namespace="t:u")
    rng = np.random.default_rng(11)
    hashes = rng.integers(1, 2**64 - 1, size=500, dtype=np.uint64).tolist()
    urls.add_many([(i + 1, h) for i, h in enumerate(hashes)])
    keys = list(redis_client.scan_iter("t:u:*"))
    assert len(keys) > 400  # spread over buckets (top BUCKET_BITS bits)
    assert all(len(k.split(b":")[-1]) == (BUCKET_BITS + 3) // 4 for k in keys)
    assert urls.expire_keys(keys, 251) == 250
    assert urls.records() == 250
    assert urls.lookup([hashes[0], hashes[499]]) == [None, 500]


def test_bulk_load_keeps_the_first_article_of_each_url(redis_client):
    urls = RedisUrlMap(redis_client, namespace="t:u")
    a, b = url_hash("https://a.example/x"), url_hash("https://b.example/y")
    assert urls.bulk_load([12, 4, 8, 6], [a, a, b, 0]) == 2
    assert urls.lookup([a, b]) == [4, 8]
    assert sum(redis_client.strlen(k) for k in redis_client.scan_iter("t:u:*")) == (
        2 * RECORD_DTYPE.itemsize)


def test_article_ids_beyond_32_bits_are_refused(redis_client):
    with pytest.raises(ValueError, match="32 bits"):
        RedisUrlMap(redis_client, namespace="t:u").add_many([(2**32, 1)])


@pytest.mark.django_db(transaction=True)
def test_an_index_of_another_layout_is_rebuilt_on_first_use(client, auth, run_worker,
                                                            redis_client):
    post(client, auth, "first", BODY, url="https://n.example/a")
    run_worker()
    state = IndexState.objects.get(pk=1)
    assert state.generation.startswith(reindex.LAYOUT)
    # what a deployment of the previous layout left: a generation without the tag
    old = state.generation[len(reindex.LAYOUT):]
    IndexState.objects.filter(pk=1).update(generation=old)
    redis_client.set(reindex.generation_key(), old)
    assert reindex.active_generation() is None
    generation = reindex.ensure_index()
    assert generation.startswith(reindex.LAYOUT) and generation != state.generation
    urls = RedisUrlMap(redis_client, namespace=reindex.namespaces(generation)["u"])
    first = Article.objects.get(nid="first")
    assert urls.lookup([url_hash("https://n.example/a")]) == [first.pk]
    post(client, auth, "again", "另一篇完全不同的正文，讲的是别的事情。" * 5,
         url="https://n.example/a")
    run_worker()
    again = Article.objects.get(nid="again")
    assert (again.doc_id, again.matched_by) == (first.doc_id, "url")
