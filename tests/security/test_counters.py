"""The expiring Redis counters behind the API rate limit and the login lockout."""

from __future__ import annotations

import time

from dedupsite import counters, redis_store


def test_hits_count_up_and_expire_together(redis_client) -> None:
    assert counters.count("t", "a") == 0
    assert counters.hit("t", "a", expire_s=60) == 1
    assert counters.hit("t", "a", expire_s=60) == 2
    assert counters.count("t", "a") == 2
    assert counters.count("t", "b") == 0  # another key, another count
    assert 0 < redis_client.ttl(redis_store.key("t", "a")) <= 60


def test_a_counter_is_gone_after_its_expiry_and_after_a_reset(redis_client) -> None:
    counters.hit("t", "short", expire_s=1)
    counters.hit("t", "reset", expire_s=60)
    counters.reset("t", "reset")
    assert counters.count("t", "reset") == 0
    deadline = time.monotonic() + 5
    while counters.count("t", "short") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert counters.count("t", "short") == 0
