"""Expiring Redis counters: the API's per-key rate limit and the login lockout.

Both count events under a key that expires on its own (one INCR and one EXPIRE in
one round trip), on the queue Redis (``REDIS_URL``): counters, like locks and queues,
never live on the index Redis.
"""

from __future__ import annotations

from dedupsite import redis_store


def hit(*parts: object, expire_s: int, sliding: bool = True) -> int:
    """Count one event under ``{prefix}:parts...``. ``sliding``: the count expires
    ``expire_s`` after the latest event; else ``expire_s`` after the first one (a fixed
    window that further events do not extend). Returns the count, this event included."""
    key = redis_store.key(*parts)
    pipe = redis_store.client().pipeline()
    if sliding:
        pipe.incr(key)
        pipe.expire(key, expire_s)
        return int(pipe.execute()[0])
    pipe.set(key, 0, ex=expire_s, nx=True)
    pipe.incr(key)
    return int(pipe.execute()[1])


def ttl(*parts: object) -> int:
    """Seconds until the count expires (0 when there is none)."""
    return max(0, int(redis_store.client().ttl(redis_store.key(*parts))))


def count(*parts: object) -> int:
    """The current count (0 when none, or expired)."""
    value = redis_store.client().get(redis_store.key(*parts))
    return int(value) if value is not None else 0


_TAKE_BACK = """
local n = redis.call('GET', KEYS[1])
if n and tonumber(n) > 0 then return redis.call('DECR', KEYS[1]) end
return 0
"""


def take_back(*parts: object) -> None:
    """Undo one :func:`hit` of a count that still exists (never below 0; the window
    is left as it is)."""
    redis_store.client().eval(_TAKE_BACK, 1, redis_store.key(*parts))


def claim(*parts: object, expire_s: int) -> bool:
    """Take ``{prefix}:parts...`` for ``expire_s`` seconds if nobody holds it (SET NX)."""
    return bool(redis_store.client().set(redis_store.key(*parts), 1, ex=expire_s, nx=True))


def hold(*parts: object, expire_s: int) -> None:
    """Hold ``{prefix}:parts...`` for ``expire_s`` seconds from now (SET EX)."""
    redis_store.client().set(redis_store.key(*parts), 1, ex=max(1, expire_s))


def reset(*parts: object) -> None:
    redis_store.client().delete(redis_store.key(*parts))
