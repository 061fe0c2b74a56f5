"""All-or-nothing locks on several Redis keys at once.

Two near-duplicates within Hamming distance k share at least one of the k+1
pigeonhole blocks (and two copies of one URL share its hash). Each article
locks every block bucket it will read and write, so near-duplicates that reach
different workers at the same moment are serialised: the second one sees the
first in the index and joins its docId. Unrelated articles lock disjoint
buckets and proceed in parallel. Acquisition is a single Lua script (all keys
or none), so there is no lock-ordering deadlock; a TTL frees the locks of a
worker that died.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import redis

ACQUIRE = """
if ARGV[3] ~= '' and redis.call('EXISTS', ARGV[3]) == 1 then return 0 end
for i, k in ipairs(KEYS) do
  if redis.call('EXISTS', k) == 1 then return 0 end
end
for i, k in ipairs(KEYS) do
  redis.call('SET', k, ARGV[1], 'PX', ARGV[2])
end
return 1
"""

RELEASE = """
local n = 0
for i, k in ipairs(KEYS) do
  if redis.call('GET', k) == ARGV[1] then n = n + redis.call('DEL', k) end
end
return n
"""


class LockTimeout(RuntimeError):
    pass


@contextmanager
def multi_lock(
    client: redis.Redis, keys: Sequence[str], *, ttl_ms: int = 30_000, wait_s: float = 30.0,
    gate: str = "",
) -> Iterator[None]:
    """Lock every key or none; while the `gate` key exists, wait (an index switch)."""
    keys = sorted(set(keys))
    token = secrets.token_hex(8)
    acquire = client.register_script(ACQUIRE)
    deadline = time.monotonic() + wait_s
    delay = 0.001
    while not acquire(keys=keys, args=[token, ttl_ms, gate]):
        if time.monotonic() > deadline:
            raise LockTimeout(f"could not lock {len(keys)} index buckets in {wait_s}s")
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
    try:
        yield
    finally:
        client.register_script(RELEASE)(keys=keys, args=[token])
