from __future__ import annotations

from types import SimpleNamespace

import pytest

from articles.index import locks
from articles.index.locks import LockTimeout, multi_lock
from fingerprints.stores.block_index import RedisBlockIndex


def test_bucket_locks_exclude_each_other_only_when_buckets_overlap(redis_client):
    index = RedisBlockIndex(redis_client, 3)
    a = index.bucket_keys(0x1111_2222_3333_4444)
    near = index.bucket_keys(0x1111_2222_3333_4445)  # shares three blocks
    far = index.bucket_keys(0x9999_8888_7777_6666)
    with multi_lock(redis_client, a):
        with pytest.raises(LockTimeout), multi_lock(redis_client, near, wait_s=0.05):
            pass
        with multi_lock(redis_client, far, wait_s=0.05):
            pass
    with multi_lock(redis_client, near, wait_s=0.05):
        pass
    assert redis_client.keys("*") == []


def test_the_gate_holds_every_new_lock_back(redis_client):
    redis_client.set("gate", 1)
    with pytest.raises(LockTimeout), multi_lock(redis_client, ["x"], wait_s=0.05, gate="gate"):
        pass
    redis_client.delete("gate")
    with multi_lock(redis_client, ["x"], wait_s=0.05, gate="gate"):
        assert redis_client.exists("x")


def _article(url_hash: int | None = None) -> SimpleNamespace:
    return SimpleNamespace(url_hash=url_hash)


def test_lock_stripes_cover_every_shared_bucket(settings) -> None:
    from articles.ingest.assign import _lock_keys
    from fingerprints.rule import EngineConfig, content_probes, extract

    settings.INDEX_LOCK_STRIPES = 1024
    config = EngineConfig()
    text = "新华社北京电 国务院今天召开常务会议，部署进一步稳定就业的措施。" * 8
    a = extract("稳就业", text, config)
    b = extract("稳就业", text + "责任编辑：某某", config)
    other = extract("天气", "今天北京晴，最高气温二十五度，空气质量良。" * 8, config)
    keys = {name: set(_lock_keys([(_article(), f)], [content_probes(f, config)], config))
            for name, f in {"a": a, "b": b, "other": other}.items()}
    assert keys["a"] & keys["b"]  # near-duplicates share buckets, hence stripes
    # a batch locks at most INDEX_LOCK_STRIPES keys however many buckets it reads
    batch = [(_article(n), extract(f"t{n}", f"正文{n} " * 40, config)) for n in range(300)]
    probes = [content_probes(f, config) for _a, f in batch]
    assert len(_lock_keys(batch, probes, config)) <= 1024
    settings.INDEX_LOCK_STRIPES = 8
    assert len(_lock_keys(batch, probes, config)) <= 8
    # the same URL hash always maps to the same stripe
    url_only = set(_lock_keys([(_article(77), other)], [[]], config))
    assert url_only & set(_lock_keys([(_article(77), a)], [[]], config))


def test_a_renewed_lock_outlives_its_ttl_and_an_abandoned_one_expires(redis_client):
    import threading
    import time

    # (TTLs with room for a loaded 2-CPU machine: renewal is due after a third of one)
    with multi_lock(redis_client, ["held"], ttl_ms=900, renew=True):
        time.sleep(2.0)  # over two TTLs: only the renewals keep it
        assert redis_client.exists("held")
        assert 0 < redis_client.pttl("held") <= 900
    assert not redis_client.exists("held")
    assert "held" not in str(locks._renewals.held)  # nothing renews it any more
    # two holders with different TTLs share the process's renewal thread
    with multi_lock(redis_client, ["a"], ttl_ms=900, renew=True), \
            multi_lock(redis_client, ["b"], ttl_ms=1500, renew=True):
        time.sleep(2.0)  # over two TTLs of `a`
        assert redis_client.exists("a") and redis_client.exists("b")
    assert [t.name for t in threading.enumerate()].count("lock-renewer") == 1
    # without renewal (a killed holder renews nothing) the TTL frees the key
    with multi_lock(redis_client, ["left"], ttl_ms=300):
        time.sleep(0.5)
        assert not redis_client.exists("left")
        with multi_lock(redis_client, ["left"], ttl_ms=300, wait_s=0.05):
            pass  # another holder gets it at once


def test_a_renewal_never_revives_a_lock_taken_over(redis_client):
    from articles.index.locks import RENEW

    redis_client.set("k", "other-token", px=10_000)
    renew = redis_client.register_script(RENEW)
    assert renew(keys=["k", "missing"], args=["my-token", 50]) == 0
    assert redis_client.get("k") == b"other-token" and redis_client.pttl("k") > 5_000
    assert not redis_client.exists("missing")


def test_an_expected_value_is_checked_in_the_acquiring_script(redis_client):
    redis_client.set("gen", "g1")
    with multi_lock(redis_client, ["x"], expect=("gen", "g1")):
        assert redis_client.exists("x")
    redis_client.set("gen", "g2")
    with pytest.raises(locks.StaleValue), multi_lock(redis_client, ["x"], expect=("gen", "g1"),
                                                     wait_s=5):
        pass  # pragma: no cover - never entered
    assert not redis_client.exists("x")  # nothing locked, and no waiting for a change
    redis_client.delete("gen")  # Redis restarted empty: stale too
    with pytest.raises(locks.StaleValue), multi_lock(redis_client, ["x"], expect=("gen", "g1")):
        pass  # pragma: no cover


def test_a_forked_child_renews_its_own_locks(redis_client):
    import os
    import time

    # the parent's renewal thread is running (and may hold its lock at the fork)
    with multi_lock(redis_client, ["parent"], ttl_ms=900, renew=True):
        pid = os.fork()
        if pid == 0:  # child: a fresh renewal state; its lock outlives the TTL
            code = 1
            try:
                assert not locks._renewals.held
                with multi_lock(redis_client, ["child"], ttl_ms=900, renew=True):
                    time.sleep(2.0)
                    code = 0 if redis_client.exists("child") else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert not redis_client.exists("child") and not redis_client.exists("parent")
