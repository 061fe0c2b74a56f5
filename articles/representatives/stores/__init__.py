"""Representative stores: where the hottest article of every docId is delivered.

One backend a module behind one interface (``base.RepresentativeStore``), as Django's
cache backends are laid out:

* ``hbase.HBaseStore`` — production, when ``HBASE_URL`` is set: an HBase table
  through its Thrift (v1) gateway via happybase. Layout in docs/hbase.md.
* ``local.LocalStore`` — the embedded default: one SQLite file (WAL mode), safe for
  several processes (web, workers) on one machine.

``store_from_url(os.environ.get("HBASE_URL"), "var/representatives.sqlite3")``
picks one. This package imports nothing from Django and opens no connection at
import time or in a constructor: the first call does, and a store that could
not connect tries again on the next call.

A row is a dict with the keys in ``FIELDS`` plus ``version``::

    nid, url, title, content, media, publishedAt, updatedAt   -> str | None
    hotness                                                   -> float | None
    clusterSize                                               -> int | None
    version                                                   -> int (0 if never given)

``put`` replaces the whole row (a missing key is stored as None). ``get`` and
``scan`` return every key, None where nothing is stored. Values round-trip
exactly (any Unicode, HTML as is); ``hotness`` comes back as a float.
Datetimes given for publishedAt/updatedAt are stored as ISO 8601 strings.
Any failure to reach the backend raises ``StoreUnavailable``.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from articles.representatives.stores.base import (
    ALL_KEYS,
    FIELDS,
    TEXT_FIELDS,
    VERSION,
    RepresentativeStore,
    Row,
    StoreUnavailable,
    Value,
    normalize_row,
)
from articles.representatives.stores.hbase import HBASE_FAMILIES, HBaseStore, parse_hbase_url
from articles.representatives.stores.local import LocalStore

__all__ = [
    "ALL_KEYS", "FIELDS", "HBASE_FAMILIES", "TEXT_FIELDS", "VERSION", "HBaseStore", "LocalStore",
    "RepresentativeStore", "Row", "StoreUnavailable", "Value", "normalize_row",
    "parse_hbase_url", "store_from_url",
]


def store_from_url(url: str | None, local_path: str | os.PathLike[str]) -> RepresentativeStore:
    """``HBASE_URL`` -> a store: unset/empty -> LocalStore(local_path); hbase:// -> HBaseStore."""
    if not url:
        return LocalStore(local_path)
    if urlsplit(url).scheme == "hbase":
        return HBaseStore(url)
    raise ValueError(f"HBASE_URL must be an hbase:// URL, got {url!r}")
