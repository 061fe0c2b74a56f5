"""Expiring Redis counters: the API's per-key rate limit and the login lockout.

Both count events under a key that expires on its own (one INCR and one EXPIRE in
one round trip), on the queue Redis (``REDIS_URL``): counters, like locks and queues,
never live on the index Redis.
"""

from __future__ import annotations

from dedupsite import redis_store


def hit(*parts: object, expire_s: int) -> int:
    """Count one event under ``{prefix}:parts...``; the count expires ``expire_s`` after
    the latest event. Returns the count, this event included."""
    key = redis_store.key(*parts)
    pipe = redis_store.client().pipeline()
    pipe.incr(key)
    pipe.expire(key, expire_s)
    return int(pipe.execute()[0])


def count(*parts: object) -> int:
    """The current count (0 when none, or expired)."""
    value = redis_store.client().get(redis_store.key(*parts))
    return int(value) if value is not None else 0


def reset(*parts: object) -> None:
    redis_store.client().delete(redis_store.key(*parts))
