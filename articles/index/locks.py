"""All-or-nothing locks on several Redis keys at once.

Two near-duplicates within Hamming distance k share at least one of the k+1
pigeonhole blocks (and two copies of one URL share its hash). Each article
locks every block bucket it will read and write (through lock stripes, see
articles/ingest/assign.py `_lock_keys`), so near-duplicates that reach
different workers at the same moment are serialised: the second one sees the
first in the index and joins its docId. Unrelated articles lock disjoint
buckets and proceed in parallel. Acquisition is a single Lua script (all keys
or none), so there is no lock-ordering deadlock; a TTL frees the locks of a
worker that died, and a holder that runs longer renews it.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import redis

# ARGV: token, ttl, gate key ('' for none), key and value that must match ('' for no
# check: the index generation a batch was planned for). Returns 1 (locked), 0 (busy or
# gated: try again) or -1 (the key no longer holds the value: do not wait).
ACQUIRE = """
if ARGV[4] ~= '' and redis.call('GET', ARGV[4]) ~= ARGV[5] then return -1 end
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


class StaleValue(RuntimeError):
    """The key given as ``expect`` to :func:`multi_lock` no longer holds the value."""


class _Renewals:
    """One daemon thread per process extends the TTL of every lock set held with
    ``renew=True``, each every third of its TTL, so a short TTL frees the locks of a
    killed process quickly without expiring under a live one (and a batch does not
    pay for starting a thread)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.held: dict[str, tuple[redis.Redis, Sequence[str], int]] = {}
        self.due: dict[str, float] = {}
        self.thread: threading.Thread | None = None
        self.pid = 0

    def add(self, client: redis.Redis, keys: Sequence[str], token: str, ttl_ms: int) -> None:
        with self.lock:
            self.held[token] = (client, keys, ttl_ms)
            self.due[token] = time.monotonic() + ttl_ms / 3000
            if self.thread is None or self.pid != os.getpid() or not self.thread.is_alive():
                self.pid = os.getpid()
                self.thread = threading.Thread(target=self._run, name="lock-renewer",
                                               daemon=True)
                self.thread.start()
        self.wake.set()

    def remove(self, token: str) -> None:
        with self.lock:
            self.held.pop(token, None)
            self.due.pop(token, None)

    def _run(self) -> None:
        while True:
            now = time.monotonic()
            with self.lock:
                todo = [(token, self.held[token]) for token, at in self.due.items()
                        if at <= now]
                for token, (_c, _k, ttl_ms) in todo:
                    self.due[token] = now + ttl_ms / 3000
                upcoming = min(self.due.values(), default=now + 1.0)
            for token, (client, keys, ttl_ms) in todo:
                try:
                    # RENEW only extends keys still holding the token: a lock released
                    # (or taken over) meanwhile is never revived
                    client.register_script(RENEW)(keys=keys, args=[token, ttl_ms])
                except Exception as exc:  # Redis errors: the holder's own calls fail too;
                    # anything else must not end the thread that serves every holder
                    log.warning("could not renew %d locks: %s", len(keys), exc)
            self.wake.wait(max(0.005, min(upcoming - time.monotonic(), 1.0)))
            self.wake.clear()


_renewals = _Renewals()


def _forget_renewals_in_child() -> None:
    # A forked child holds none of its parent's locks, and the parent's renewal thread
    # (which may have held `lock` at the fork) does not exist in it: start afresh.
    global _renewals
    _renewals = _Renewals()


os.register_at_fork(after_in_child=_forget_renewals_in_child)


@contextmanager
def multi_lock(
    client: redis.Redis, keys: Sequence[str], *, ttl_ms: int = 30_000, wait_s: float = 30.0,
    gate: str = "", renew: bool = False, expect: tuple[str, str] | None = None,
) -> Iterator[None]:
    """Lock every key or none; while the `gate` key exists, wait (an index switch).
    With `renew`, the process's renewal thread extends the TTL every `ttl_ms / 3`
    until the block ends. With `expect=(key, value)`, the locks are taken only while
    `key` holds `value`, checked in the same script: otherwise :class:`StaleValue`."""
    keys = sorted(set(keys))
    token = secrets.token_hex(8)
    acquire = client.register_script(ACQUIRE)
    deadline = time.monotonic() + wait_s
    delay = 0.001
    check_key, check_value = expect if expect is not None else ("", "")
    while (got := acquire(keys=keys, args=[token, ttl_ms, gate, check_key, check_value])) != 1:
        if got == -1:
            raise StaleValue(f"{check_key} no longer holds {check_value!r}")
        if time.monotonic() > deadline:
            raise LockTimeout(f"could not lock {len(keys)} index buckets in {wait_s}s")
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
    if renew:
        _renewals.add(client, keys, token, ttl_ms)
    try:
        yield
    finally:
        if renew:
            _renewals.remove(token)
        client.register_script(RELEASE)(keys=keys, args=[token])
