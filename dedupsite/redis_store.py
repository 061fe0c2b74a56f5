"""Redis access for the dedup indexes: one lazily created client per process.

Key layout (prefix from REDIS_PREFIX, default "dd"):
  {p}:c:...     content SimHash block index  (fingerprints.index.RedisBlockIndex)
  {p}:t:...     title SimHash block index
  {p}:u:{gen}:{bucket}  URL map: 12-byte records <Q URL hash><I article id> (fingerprints/urlmap.py)
  {p}:gen       generation of the indexes (must equal IndexState.generation)
  {p}:lock:...  short-lived assignment locks (see locks.py)
"""

from __future__ import annotations

import functools
import os

import django_rq
import redis
import rq
from django.conf import settings

#: the process that last made sure the embedded server runs (a fork must check again)
_ensured_by: int | None = None


def ensure_server() -> None:
    """Start the embedded Redis when REDIS_URL is unset and it is not running; a
    configured Redis is left alone. Checked once per process (not per enqueue: the check
    is a socket round trip) and again after :func:`reset_client`."""
    global _ensured_by
    if settings.EMBEDDED_REDIS and _ensured_by != os.getpid():
        from dedupsite.embedded import ensure_redis

        ensure_redis(settings.VAR_DIR)
        _ensured_by = os.getpid()


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
    global _ensured_by
    client.cache_clear()
    _ensured_by = None
