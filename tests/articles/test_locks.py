from __future__ import annotations

import pytest

from articles.locks import LockTimeout, multi_lock
from fingerprints.index import RedisBlockIndex


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
