"""All-or-nothing locks on several Redis keys at once.

Two near-duplicates within Hamming distance k share at least one of the k+1
pigeonhole blocks (and two copies of one URL share its hash). Each article
locks every block bucket it will read and write (through lock stripes, see
articles/dedup.py `_lock_keys`), so near-duplicates that reach
different workers at the same moment are serialised: the second one sees the
first in the index and joins its docId. Unrelated articles lock disjoint
buckets and proceed in parallel. Acquisition is a single Lua script (all keys
or none), so there is no lock-ordering deadlock; a TTL frees the locks of a
worker that died, and a holder that runs longer renews it.
"""

from __future__ import annotations

import logging
import secrets
import threading
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


# Extend every key still holding our token (a renewal never revives a lost lock).
RENEW = """
local n = 0
for i, k in ipairs(KEYS) do
  if redis.call('GET', k) == ARGV[1] then
    redis.call('PEXPIRE', k, ARGV[2])
    n = n + 1
  end
end
return n
"""

log = logging.getLogger(__name__)


class LockTimeout(RuntimeError):
    pass


class _Renewer(threading.Thread):
    """Extends the locks' TTL every third of it while the holder runs, so a short TTL
    frees the locks of a killed process quickly without expiring under a live one."""

    def __init__(self, client: redis.Redis, keys: Sequence[str], token: str,
                 ttl_ms: int) -> None:
        super().__init__(name="lock-renewer", daemon=True)
        self.client, self.keys, self.token, self.ttl_ms = client, keys, token, ttl_ms
        self.stopped = threading.Event()

    def run(self) -> None:
        renew = self.client.register_script(RENEW)
        while not self.stopped.wait(self.ttl_ms / 3000):
            try:
                renew(keys=self.keys, args=[self.token, self.ttl_ms])
            except redis.RedisError as exc:  # the holder's own Redis calls will fail too
                log.warning("could not renew %d locks: %s", len(self.keys), exc)


@contextmanager
def multi_lock(
    client: redis.Redis, keys: Sequence[str], *, ttl_ms: int = 30_000, wait_s: float = 30.0,
    gate: str = "", renew: bool = False,
) -> Iterator[None]:
    """Lock every key or none; while the `gate` key exists, wait (an index switch).
    With `renew`, a thread extends the TTL every `ttl_ms / 3` until the block ends."""
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
    renewer = _Renewer(client, keys, token, ttl_ms) if renew else None
    if renewer is not None:
        renewer.start()
    try:
        yield
    finally:
        if renewer is not None:
            renewer.stopped.set()
            renewer.join()
        client.register_script(RELEASE)(keys=keys, args=[token])
