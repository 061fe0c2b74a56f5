"""The index on a real Redis Cluster (three nodes, `redis_cluster_url`): every index
operation, the online path giving the docIds of a single Redis, keys spread over the
nodes, and a node that comes back empty noticed and rebuilt."""

from __future__ import annotations

import json

import numpy as np
import pytest
import redis
from redis.cluster import RedisCluster

from articles.index import markers, reindex, window
from articles.index.candidates import IndexUnavailable
from articles.ingest import assign, watchdog
from articles.models import Article
from dedupsite import redis_store
from fingerprints.stores.block_index import MemoryBlockIndex, RedisBlockIndex
from fingerprints.stores.key_index import RedisKeyIndex
from fingerprints.stores.redis_records import is_cluster
from fingerprints.stores.url_map import RedisUrlMap
from support import corpus
from tests.index.test_window import age, set_window

pytestmark = [pytest.mark.redis_cluster]


def keys_per_node(cluster: RedisCluster) -> list[int]:
    return [cluster.get_redis_connection(node).dbsize() for node in cluster.get_primaries()]


def whole_pass(step) -> int:
    cursor, total = 0, 0
    while True:
        cursor, n = step(cursor)
        total += n
        if cursor == 0:
            return total


def test_the_setting_picks_the_client(settings, redis_cluster_url):
    assert redis_store.cluster_nodes("redis+cluster://10.0.0.1:7000, h2:7001") == [
        redis_store.ClusterNode("10.0.0.1", 7000), redis_store.ClusterNode("h2", 7001)]
    for bad in ("redis://h:1", "redis+cluster://h", "redis+cluster://h:x,h:2"):
        with pytest.raises(ValueError):
            redis_store.cluster_nodes(bad)
    try:
        settings.INDEX_REDIS_URL = settings.REDIS_URL  # the default: one Redis for all
        redis_store.reset_client()
        assert redis_store.index_client() is redis_store.client()
        assert not redis_store.index_is_separate()
        settings.INDEX_REDIS_URL = redis_cluster_url
        redis_store.reset_client()
        assert isinstance(redis_store.index_client(), RedisCluster)
        assert isinstance(redis_store.client(), redis.Redis)  # queues, locks: REDIS_URL
        assert redis_store.index_is_separate()
    finally:
        redis_store.reset_client()


def test_the_block_index_works_on_the_cluster_as_in_memory(index_cluster):
    assert is_cluster(index_cluster) and is_cluster(index_cluster.pipeline())
    rng = np.random.default_rng(5)
    fps = [int(f) for f in rng.integers(0, 2**64 - 1, size=300, dtype=np.uint64,
                                        endpoint=True)]
    near = [fp ^ 0b101 for fp in fps[:20]]  # 2 bits away
    index = RedisBlockIndex(index_cluster, 3, namespace="t:c")
    memory = MemoryBlockIndex(3)
    index.add_many((i + 1, fp) for i, fp in enumerate(fps[:150]))
    index.bulk_load(np.arange(151, 301), np.array(fps[150:], dtype=np.uint64))
    memory.add_many((i + 1, fp) for i, fp in enumerate(fps))
    assert len(index) == 300
    for fp in near + fps[280:]:
        assert index.query(fp) == memory.query(fp)
    assert index.query_many(near) == [memory.query(fp) for fp in near]
    groups = [[fp, fp ^ (1 << 40)] for fp in near]
    assert index.query_probes(groups, 4) == [
        sorted(((i, f, (g[0] ^ f).bit_count()) for i, f in memory.query_union(g, 4).items()),
               key=lambda hit: (hit[2], hit[0])) for g in groups]
    assert all(n > 200 for n in keys_per_node(index_cluster))  # 1,200 buckets spread
    index.remove(1, fps[0])
    memory.remove(1, fps[0])
    assert index.query(fps[0]) == memory.query(fps[0]) == []
    assert len(index) == 299
    # expiry: a pass over every node drops the records below the floor
    assert whole_pass(lambda c: index.expire_step(c, 101, count=100)) == 99 * 4
    index.floor = 0
    assert index.query(fps[100])[0][0] == 101 and index.query(fps[99]) == []
    index.clear()
    assert sum(keys_per_node(index_cluster)) == 0


def test_the_key_index_and_url_map_work_on_the_cluster(index_cluster, redis_client):
    keys = RedisKeyIndex(index_cluster, namespace="t:x")
    keys.add_many([(i, [i * 7919 % 2**32, i * 104729 % 2**32]) for i in range(1, 201)])
    assert keys.query_many([[11 * 7919], [12 * 104729, 13 * 7919], [5]]) == [
        {11}, {12, 13}, set()]
    keys.remove(11, [11 * 7919])
    assert keys.query_many([[11 * 7919]]) == [set()]
    assert whole_pass(lambda c: keys.expire_step(c, 100, count=50)) == 98 * 2 + 1
    assert keys.query_many([[99 * 7919], [100 * 7919 % 2**32]]) == [set(), {100}]
    # the URL map: its buckets spread over the nodes like the other indexes'
    urls = RedisUrlMap(index_cluster, namespace="t:u")
    assert urls.cluster and not RedisUrlMap(redis_client, namespace="t:u").cluster
    hashes = [int(h) for h in np.random.default_rng(7).integers(
        1, 2**64 - 1, size=500, dtype=np.uint64)]
    pipe = index_cluster.pipeline(transaction=False)
    urls.add_many(((n + 1, h) for n, h in enumerate(hashes)), pipe)
    urls.add_many([(999, hashes[0])], pipe)  # a later article: the first one still owns it
    pipe.execute()
    assert urls.lookup([*hashes[:3], 12345]) == [1, 2, 3, None]
    assert len(urls.bucket_keys(hashes)) > 300
    assert all(n > 100 for n in keys_per_node(index_cluster))
    assert whole_pass(lambda c: urls.expire_step(c, 251, 64)) == 250
    assert urls.lookup([hashes[249], hashes[250], hashes[0]]) == [None, 251, 999]


def ingest(client, auth, run_worker, articles) -> dict[str, str]:
    for start in range(0, len(articles), 20):
        response = client.post("/api/v1/articles", content_type="application/json", **auth,
                               data=json.dumps({"articles": articles[start:start + 20]}))
        assert response.status_code in (200, 202), response.content
        run_worker()
    return {a.nid: a.doc.doc_id
            for a in Article.objects.select_related("doc").filter(doc__isnull=False)}


def stories(count: int, copies: int, prefix: str = "") -> list[dict]:
    return [corpus.article(f"{prefix}{n}-{c}", n, c) for c in range(copies)
            for n in range(count)]


pytestmark_db = pytest.mark.django_db(transaction=True)


@pytestmark_db
def test_the_online_path_gives_the_docids_of_a_single_redis(
        client, auth, run_worker, redis_client, settings, redis_cluster_url):
    articles = stories(30, 3)
    single = ingest(client, auth, run_worker, articles)
    assert len(set(single.values())) == 30  # each story and its reposts: one docId
    Article.objects.all().delete()
    from articles.models import Doc, IndexState

    Doc.objects.all().delete()
    IndexState.objects.all().delete()
    redis_client.flushdb()
    settings.INDEX_REDIS_URL = redis_cluster_url
    redis_store.reset_client()
    cluster = redis_store.index_client()
    cluster.flushall(target_nodes=RedisCluster.PRIMARIES)
    try:
        on_cluster = ingest(client, auth, run_worker, articles)
        assert on_cluster == single  # docIds are made from nids: equal, not just alike
        generation = reindex.active_generation()
        assert generation is not None
        # the index is on the cluster, spread over its nodes; the queue Redis holds none
        assert all(n > 50 for n in keys_per_node(cluster))
        assert not list(redis_client.scan_iter(f"{reindex.namespaces(generation)['c']}*"))
        assert redis_client.get(reindex.generation_key()).decode() == generation
        assert markers.present(generation)
        # rebuild: a new generation on the cluster, same answers
        assert reindex.rebuild_index() == 90
        rebuilt = reindex.active_generation()
        assert rebuilt != generation
        assert not list(cluster.scan_iter(match=f"{reindex.namespaces(generation)['c']}*"))
        more = ingest(client, auth, run_worker, stories(30, 1, prefix="again-"))
        assert {more[f"again-{n}-0"] for n in range(30)} == set(single.values())
    finally:
        cluster.flushall(target_nodes=RedisCluster.PRIMARIES)
        cluster.close()
        redis_store.reset_client()


@pytestmark_db
def test_a_node_that_comes_back_empty_is_noticed_and_the_index_rebuilt(
        client, auth, run_worker, index_cluster, redis_client):
    first = ingest(client, auth, run_worker, stories(20, 1))
    generation = reindex.active_generation()
    # one node loses everything (restarted without persistence)
    node = index_cluster.get_primaries()[1]
    index_cluster.get_redis_connection(node).flushall()
    assert not markers.present(generation)
    # the next batch notices after its lookups, drops the generation and fails (retried)
    Article.objects.create(nid="probe", url="https://n.example/probe", title="t",
                           content=corpus.repost(0, 1))
    with pytest.raises(IndexUnavailable):
        assign.assign(["probe"])
    assert reindex.active_generation() is None
    assert Article.objects.get(nid="probe").status == "queued"
    # the next attempt rebuilds from MySQL first: reposts find their stories again
    reposts = ingest(client, auth, run_worker, stories(20, 2, prefix="r")[20:])
    assert reindex.active_generation() not in (None, generation)
    assert {reposts[f"r{n}-1"] for n in range(20)} == set(first.values())
    assert markers.present(reindex.active_generation())
    # the watchdog does the same without traffic
    live = reindex.active_generation()
    index_cluster.get_redis_connection(node).flushall()
    assert watchdog.tick()["rebuilt"] == 1
    assert reindex.active_generation() not in (None, live)
    assert markers.present(reindex.active_generation())


@pytestmark_db
def test_window_expiry_visits_every_node(client, auth, run_worker, index_cluster):
    ingest(client, auth, run_worker, stories(12, 1))
    ingest(client, auth, run_worker, stories(12, 1, prefix="late-"))
    for n in range(12):
        age(f"{n}-0", 40)
    set_window(30)
    generation = reindex.active_generation()
    names = reindex.namespaces(generation)
    steps, dropped = 0, {"c": 0, "t": 0, "x": 0, "u": 0}
    while True:
        result = window.expire(generation, names, keys_per_step=40)
        steps += 1
        for name in dropped:
            dropped[name] += result[name]
        if result["pass_complete"]:
            break
    assert steps > 3  # several steps: node by node, a few keys at a time
    assert dropped["c"] == 12 * 4 and dropped["u"] == 12 and dropped["x"] > 0
    urls = RedisUrlMap(index_cluster, namespace=names["u"])
    old = Article.objects.filter(nid__in=[f"{n}-0" for n in range(12)])
    late = Article.objects.filter(nid__startswith="late-")
    assert urls.lookup([a.url_hash for a in old]) == [None] * 12
    assert urls.lookup([a.url_hash for a in late]) == [a.pk for a in late]


@pytest.mark.django_db
def test_health_reports_the_index_redis_when_it_is_separate(client, index_cluster, settings):
    from dedupsite import redis_store

    assert client.get("/api/v1/health").json()["indexRedis"] == {"ok": True}
    settings.INDEX_REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    redis_store.index_client.cache_clear()
    response = client.get("/api/v1/health")
    assert response.status_code == 503
    assert response.json()["indexRedis"] == {"ok": False}  # no reason for a stranger
    assert response.json()["redis"]["ok"]  # the queue Redis is fine
    settings.INDEX_REDIS_URL = settings.REDIS_URL  # one Redis for all: not reported apart
    redis_store.index_client.cache_clear()
    assert "indexRedis" not in client.get("/api/v1/health").json()
