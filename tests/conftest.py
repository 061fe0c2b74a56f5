"""Shared fixtures: real Redis (REDIS_URL), real RQ workers, API keys.

`make test` runs the suite inside scripts/testenv.py, which sets DATABASE_URL
and REDIS_URL to throwaway MariaDB and Redis servers when they are not set. The tests
of the index on a Redis Cluster use INDEX_REDIS_CLUSTER_URL when it is set
(`TESTENV_REDIS_CLUSTER=1`), else start a 3-node cluster of their own through the same
script, once per session and only when such a test runs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator

import pytest
import redis

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow-drills", action="store_true", default=False,
                     help="also run the slow reliability drills (tests/drills, `make drills`)")


@pytest.fixture
def redis_client() -> Iterator[redis.Redis]:
    """The configured Redis, emptied before and after the test."""
    from django.conf import settings

    from dedupsite import redis_store

    client = redis.Redis.from_url(settings.REDIS_URL)
    client.flushdb()
    redis_store.reset_client()
    yield client
    client.flushdb()
    redis_store.reset_client()


@pytest.fixture(scope="session")
def redis_cluster_url() -> Iterator[str]:
    """A Redis Cluster of three nodes, flushed by the tests that use it."""
    given = os.environ.get("INDEX_REDIS_CLUSTER_URL", "")
    if given:
        yield given
        return
    from support.stack import load_testenv

    servers = load_testenv().TestEnv()
    try:
        yield servers.start_redis_cluster()
    finally:
        servers.stop()


@pytest.fixture
def index_cluster(redis_cluster_url: str, redis_client: redis.Redis, settings):
    """INDEX_REDIS_URL on the cluster (queues, locks and counters stay on REDIS_URL);
    the cluster's client, every node emptied before and after the test."""
    from redis.cluster import RedisCluster

    from dedupsite import redis_store

    settings.INDEX_REDIS_URL = redis_cluster_url
    redis_store.reset_client()
    cluster = redis_store.index_client()
    assert isinstance(cluster, RedisCluster)
    cluster.flushall(target_nodes=RedisCluster.PRIMARIES)
    yield cluster
    cluster.flushall(target_nodes=RedisCluster.PRIMARIES)
    cluster.close()
    redis_store.reset_client()


@pytest.fixture
def api_key(db: None) -> str:
    from articles.models import ApiKey

    _key, plaintext = ApiKey.issue("test crawler")
    return plaintext


@pytest.fixture
def auth(api_key: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {api_key}"}


@pytest.fixture
def rule_model(redis_client: redis.Redis) -> None:
    """The rule's shipped model (``labels-1``: the weights of the rule walk's levels,
    engine v3) as the engine's model instead of the default on the comparison vector,
    activated as an admin would: its version added, then activated. For tests of the
    rule walk's own levels and explanations (``same-picture``, ``shared-other-title``...)."""
    from articles.index.reindex import apply_settings
    from articles.tuning import matcher

    apply_settings(matcher.activate(matcher.shipped_rule_version()))


@pytest.fixture
def run_worker(redis_client: redis.Redis) -> Callable[[], int]:
    """Run a real RQ worker (no fork, timing its jobs as dedup_worker's does) in burst
    mode over every queue; return jobs done."""
    import django_rq

    from articles.ops.worker import MeteredWorker

    def run() -> int:
        queues = [django_rq.get_queue(name)
                  for name in ("ingest", "push", "default", "images")]
        before = sum(q.finished_job_registry.count for q in queues)
        worker = MeteredWorker(queues, connection=queues[0].connection)
        worker.work(burst=True, with_scheduler=False)
        return sum(q.finished_job_registry.count for q in queues) - before

    return run


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Users' passwords hashed with MD5 in tests: Django's PBKDF2 costs ~0.3 s per
    hash. tests/security/ overrides this and keeps the production hasher."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _empty_cache():
    """Django's cache (the /stats/ figures) is per process: every test starts without."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _local_representative_store(settings, tmp_path_factory):
    """Keep the default (local) representative store out of the checkout's var/; start
    every test without remembered API keys, engine state or boilerplate clauses."""
    from articles.models import ApiKey
    from articles.representatives import election, outbox
    from articles.tuning import boilerplate
    from articles.tuning.state import forget_state

    ApiKey.forget_cached()
    forget_state()
    # the active clauses are reused for STATE_CACHE_MS: a test that loaded the shipped
    # list (rolled back since) must not lend it to the next one
    boilerplate.forget()
    # burst workers in tests run without the RQ scheduler: pushes are enqueued at once
    # (test_representatives.py covers the delayed path)
    settings.PUSH_DELAY_MS = 0

    settings.LOCAL_REPRESENTATIVE_STORE = tmp_path_factory.mktemp("reps") / "reps.sqlite3"
    outbox.store.cache_clear()
    election.clear_weights_cache()
    yield
    outbox.store.cache_clear()


@pytest.fixture
def one_rate_window(monkeypatch) -> None:
    """Hold the rate limit's clock one second into a wall-clock minute for a test that
    counts requests against a per-minute limit: a test whose requests straddled two
    minutes would see its count start again (on a busy machine they can take seconds)."""
    from articles.api import endpoints

    start = (time.time() // 60) * 60 + 1
    monkeypatch.setattr(endpoints, "clock", lambda: start)
