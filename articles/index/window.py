"""The index's time window: articles received more than ``index_window_days`` ago
(``EngineSettings``; 0 = forever) leave the content, title and key indexes.

**The floor.** Article ids grow with arrival, so the window is an id: the *floor* is
one more than the id of the newest article received before the window's start
(:func:`floor`, one indexed query on ``received_at``). Every lookup drops records of
ids below it (``RedisBlockIndex.floor``, ``RedisKeyIndex.floor``), so an article
leaves the window for every worker at once, without touching Redis. Each process
re-reads the floor at most every :data:`FLOOR_TTL` seconds; a stale floor is lower,
never higher, so nothing inside the window is ever hidden.

**Expiry** (:func:`expire`, a few thousand buckets per watchdog tick): an incremental
``SCAN`` over each index namespace of the active generation, with a Lua script that
drops, per bucket, the records below the floor. Each bucket is rewritten atomically,
so concurrent ``APPEND``\\ s are never lost, and only ids below the floor are dropped,
so a story inside the window is never split. Redis memory in steady state is articles
per day x window x bytes per article.

**URLs.** The Redis URL map (``fingerprints.stores.url_map``: buckets of records, like the
other indexes) is expired with the window by the same scan, and beyond it a URL is
looked up in MySQL's ``url_hash`` index (:func:`owners_beyond_window`, one query per
batch for the URLs Redis did not know):
a repost of a known URL joins its docId however old it is. Content, title and keys
of articles outside the window are not found: a repost of an old story by another URL
starts a new docId.

``rebuild_index`` (``reindex.build``) loads only the window.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from cachetools import TTLCache
from django.db.models import Min
from django.utils import timezone

from articles.models import Article, ArticleStatus, EngineSettings
from articles.tuning.state import active_config
from dedupsite import redis_store
from fingerprints.stores.block_index import RedisBlockIndex
from fingerprints.stores.key_index import RedisKeyIndex
from fingerprints.stores.redis_records import scan_step
from fingerprints.stores.url_map import RedisUrlMap

#: seconds a process keeps the floor before reading it again
FLOOR_TTL = 30.0
_floor: TTLCache[str, int] = TTLCache(maxsize=1, ttl=FLOOR_TTL)


def window_days() -> int:
    return int(EngineSettings.objects.filter(pk=1)
               .values_list("index_window_days", flat=True).first() or 0)


def floor(now: datetime | None = None) -> int:
    """The smallest article id inside the window (0: no window, or nothing outside it)."""
    days = window_days()
    if not days:
        return 0
    start = (now or timezone.now()) - timedelta(days=days)
    newest_outside = (Article.objects.filter(received_at__lt=start)
                      .order_by("-received_at", "-id").values_list("id", flat=True).first())
    return 0 if newest_outside is None else newest_outside + 1


def live_floor() -> int:
    """:func:`floor`, re-read at most every :data:`FLOOR_TTL` seconds."""
    value = _floor.get("floor")
    if value is None:
        value = _floor["floor"] = floor()
    return value


def forget_floor() -> None:
    _floor.clear()


def owners_beyond_window(hashes: Iterable[int]) -> dict[int, int]:
    """URL hash -> the first done article with it, from MySQL: the URL rule for the
    URLs the Redis map no longer holds."""
    wanted = sorted({h for h in hashes if h})
    if not wanted:
        return {}
    rows = (Article.objects.filter(url_hash__in=wanted, status=ArticleStatus.DONE,
                                   doc__isnull=False)
            .values("url_hash").annotate(first=Min("id")).values_list("url_hash", "first"))
    return {int(h): int(first) for h, first in rows if h is not None and first is not None}


def expire(generation: str, names: dict[str, str], keys_per_step: int = 5000
           ) -> dict[str, int]:
    """One step of the expiry pass over the generation's indexes (``names``:
    ``reindex.namespaces(generation)``): one ``SCAN`` of about ``keys_per_step`` keys
    whose buckets go to their index's expiry script (content, title, picture and key
    indexes and URL map alike). Returns the records dropped per namespace, and ``pass_complete`` = 1
    when the scan came back to its start. Where the scan stands is kept in the queue
    Redis; the next pass starts again, so records that fall below a later floor go too.
    On a Redis Cluster the scan goes node by node (``scan_step``)."""
    value = floor()
    if not value:
        return {}
    client = redis_store.index_client()
    state = redis_store.client()
    config = active_config()
    indexes: dict[str, Any] = {
        "c": RedisBlockIndex(client, k=config.k, namespace=names["c"]),
        "t": RedisBlockIndex(client, k=config.title_k, namespace=names["t"]),
        "x": RedisKeyIndex(client, namespace=names["x"]),
        "u": RedisUrlMap(client, namespace=names["u"]),
        "p": RedisBlockIndex(client, k=config.picture_k, namespace=names["p"]),
    }
    prefixes = {name: f"{names[name]}:".encode() for name in indexes}
    cursor_key = redis_store.key("expiry", generation, "keys")
    cursor = int(state.get(cursor_key) or 0)
    # the namespaces differ in one letter before the generation: one scan
    pattern = names["c"][: -len(generation) - 2] + "?:" + generation + ":*"
    cursor, scanned = scan_step(client, cursor, pattern, keys_per_step)
    state.set(cursor_key, cursor, ex=7 * 86400)
    dropped = dict.fromkeys(indexes, 0)
    for node, keys in scanned:
        found = [key if isinstance(key, bytes) else str(key).encode() for key in keys]
        for name, index in indexes.items():
            mine = [key for key in found if key.startswith(prefixes[name])]
            dropped[name] += index.expire_keys(mine, value, node) if mine else 0
    dropped["pass_complete"] = int(cursor == 0)
    return dropped
