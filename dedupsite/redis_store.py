"""Redis access for the dedup indexes: one lazily created client per process.

Key layout (prefix from REDIS_PREFIX, default "dd"):
  {p}:c:...     content SimHash block index  (fingerprints.index.RedisBlockIndex)
  {p}:t:...     title SimHash block index
  {p}:u         hash: 8-byte canonical-URL hash -> article id
  {p}:gen       generation of the indexes (must equal IndexState.generation)
  {p}:lock:...  short-lived assignment locks (see locks.py)
"""

from __future__ import annotations

import functools

import redis
from django.conf import settings


@functools.cache
def client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=10, socket_connect_timeout=5)


def key(*parts: object) -> str:
    return ":".join([settings.REDIS_PREFIX, *map(str, parts)])


def reset_client() -> None:
    client.cache_clear()
