"""Fixtures for the engine tests.

``redis_client`` is defined here only until tests/conftest.py provides the shared one
(a redis.Redis on a flushed database from REDIS_URL); pytest prefers the closer
definition, so delete this one then.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import redis


@pytest.fixture
def redis_client() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15"))
    client.flushdb()
    yield client
    client.flushdb()
    client.close()
