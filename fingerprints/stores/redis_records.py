"""Redis plumbing every candidate store shares: one Redis or a Redis Cluster.

The engine imports no Redis client: the client (redis-py's ``Redis`` or ``RedisCluster``,
or a pipeline of either) is passed in and recognised by duck typing (:func:`is_cluster`).
What is here: batched reads that become one round trip (``MGET`` on one Redis, ``GET``s
grouped by node on a cluster), a ``SCAN`` pass that visits every primary of a cluster,
the Lua script that drops the records of items below the time window's floor, deletion
by pattern, and :class:`RecordBuckets`, the buckets of fixed-size records that the key
index and the URL map are made of (the block index has buckets of its own layout).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

MGET_CHUNK = 1000  # keys per MGET


def is_cluster(client: Any) -> bool:
    """Is ``client`` (or pipeline) redis-py's cluster client? Duck-typed: the engine
    imports no Redis. On a cluster a command or script may only name keys of one slot,
    and a cluster pipeline takes neither ``MGET`` nor scripts: its commands are grouped
    by node, one round trip per node."""
    return callable(getattr(client, "get_primaries", None))


def get_many(pipe: Any, keys: Sequence[Any]) -> int:
    """Queue the reads of ``keys`` on ``pipe``: ``MGET`` in chunks of
    :data:`MGET_CHUNK` on one Redis, one ``GET`` per key on a cluster (whose
    pipeline groups them by node). Returns the commands queued (for :func:`take_many`)."""
    if is_cluster(pipe):
        for key in keys:
            pipe.get(key)
        return -len(keys)
    for start in range(0, len(keys), MGET_CHUNK):
        pipe.mget(keys[start:start + MGET_CHUNK])
    return -(-len(keys) // MGET_CHUNK)


def take_many(replies: Iterator[Any], queued: int) -> list[Any]:
    """The values read by :func:`get_many` (``queued``: what it returned)."""
    if queued < 0:
        return [next(replies) for _ in range(-queued)]
    values: list[Any] = []
    for _ in range(queued):
        values += next(replies)
    return values


def scan_step(client: Any, cursor: int, match: str, count: int
              ) -> tuple[int, list[tuple[Any, list[Any]]]]:
    """One ``SCAN`` step of a pass over every key matching ``match``: on one Redis its
    cursor; on a cluster the pass visits each primary in turn (by name), and the cursor
    holds both, ``node number << 64 | node's cursor``. Returns the next cursor (0: the
    pass is complete) and ``[(client of the node, keys)]``: scripts over those keys run
    on that node (:func:`expire_records`)."""
    if not is_cluster(client):
        cursor, keys = client.scan(cursor=cursor, match=match, count=count)
        return int(cursor), [(client, keys)]
    nodes = sorted(client.get_primaries(), key=lambda node: node.name)
    number, node_cursor = divmod(int(cursor), 1 << 64)
    if number >= len(nodes):  # the cluster lost a primary since: start the pass again
        number, node_cursor = 0, 0
    node = client.get_redis_connection(nodes[number])
    node_cursor, keys = node.scan(cursor=node_cursor, match=match, count=count)
    if int(node_cursor) == 0:
        number += 1
        if number == len(nodes):
            return 0, [(node, keys)]
    return number << 64 | int(node_cursor), [(node, keys)]


# Drop, from each bucket KEYS[i], the records whose item id (a little-endian uint32 at
# byte ARGV[3] of each ARGV[2]-byte record) is below ARGV[1]: the time window's floor
# (articles/index/window.py). Buckets left empty are deleted. Returns records dropped.
EXPIRE_KEYS_PER_CALL = 10
EXPIRE_LUA = """
local floor = tonumber(ARGV[1])
local size = tonumber(ARGV[2])
local offset = tonumber(ARGV[3])
local dropped = 0
for i = 1, #KEYS do
  local key = KEYS[i]
  if redis.call('TYPE', key).ok == 'string' then
    local data = redis.call('GET', key)
    local parts = {}
    local n = 0
    for pos = 1, string.len(data), size do
      local id = struct.unpack('<I4', data, pos + offset)
      if id >= floor then parts[#parts + 1] = string.sub(data, pos, pos + size - 1)
      else n = n + 1 end
    end
    if n > 0 then
      dropped = dropped + n
      if #parts == 0 then redis.call('DEL', key)
      else redis.call('SET', key, table.concat(parts)) end
    end
  end
end
return dropped
"""


def expire_records(client: Any, keys: Sequence[Any], floor: int, record_size: int,
                   id_offset: int, *, one_key_per_call: bool = False) -> int:
    """Drop the records below ``floor`` from the buckets ``keys`` (:data:`EXPIRE_LUA`):
    :data:`EXPIRE_KEYS_PER_CALL` buckets a call (Redis serves nothing else while a script
    runs). On a cluster (``one_key_per_call``), ``client`` is the node that holds the
    keys (:func:`scan_step`) and a script may name one key only: the calls go to that
    node in one pipeline. Returns the records dropped."""
    if not keys:
        return 0
    script = client.register_script(EXPIRE_LUA)
    args = [floor, record_size, id_offset]
    if one_key_per_call:
        pipe = client.pipeline(transaction=False)
        for key in keys:
            script(keys=[key], args=args, client=pipe)
        return sum(int(n) for n in pipe.execute())
    dropped = 0
    for start in range(0, len(keys), EXPIRE_KEYS_PER_CALL):
        dropped += int(script(keys=keys[start:start + EXPIRE_KEYS_PER_CALL], args=args))
    return dropped


def unlink_matching(client: Any, match: str, batch: int = 5000) -> None:
    """Delete every key matching ``match`` (SCAN and UNLINK: Redis is never blocked; on
    a cluster redis-py scans every primary and splits the UNLINK by slot)."""
    found = []
    for key in client.scan_iter(match=match, count=10_000):
        found.append(key)
        if len(found) >= batch:
            client.unlink(*found)
            found = []
    if found:
        client.unlink(*found)


class RecordBuckets:
    """What the key index and the URL map share: buckets ``{namespace}:{hex}`` holding
    fixed-size records whose item id is a little-endian uint32 at ``ID_OFFSET``,
    expired by :data:`EXPIRE_LUA` (node by node on a cluster) and cleared by pattern."""

    RECORD_SIZE: int
    ID_OFFSET: int
    client: Any
    namespace: str
    cluster: bool

    def expire_step(self, cursor: int, floor: int, count: int = 1000) -> tuple[int, int]:
        """Drop the records of items below ``floor`` from about ``count`` buckets from
        ``cursor`` on (:func:`scan_step`); (next cursor, records dropped)."""
        cursor, found = scan_step(self.client, cursor, f"{self.namespace}:*", count)
        return cursor, sum(self.expire_keys(keys, floor, node) for node, keys in found)

    def expire_keys(self, keys: Sequence[Any], floor: int, node: Any = None) -> int:
        """Drop the records below ``floor`` from these bucket keys; records dropped.
        ``node``: on a cluster, the node holding the keys (:func:`scan_step`)."""
        return expire_records(node if node is not None else self.client, keys, floor,
                              self.RECORD_SIZE, self.ID_OFFSET, one_key_per_call=self.cluster)

    def clear(self) -> None:
        unlink_matching(self.client, f"{self.namespace}:*")
