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

import django_rq
import redis
import rq
from django.conf import settings


def ensure_server() -> None:
    """Start the embedded Redis when REDIS_URL is unset and it is not running (the first
    use in this process, or after it stopped); a configured Redis is left alone."""
    if settings.EMBEDDED_REDIS:
        from dedupsite.embedded import ensure_redis

        ensure_redis(settings.VAR_DIR)


@functools.cache
def client() -> redis.Redis:
    ensure_server()
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=10, socket_connect_timeout=5)


def queue(name: str) -> rq.Queue:
    """The RQ queue ``name`` (django-rq's settings), on a running Redis."""
    ensure_server()
    return django_rq.get_queue(name)


def key(*parts: object) -> str:
    return ":".join([settings.REDIS_PREFIX, *map(str, parts)])


def reset_client() -> None:
    client.cache_clear()
