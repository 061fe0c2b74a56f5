"""Representative stores: where the hottest article of every docId is delivered.

Two implementations of one interface (``RepresentativeStore``):

* ``HBaseStore`` — production, when ``HBASE_URL`` is set: an HBase table
  through its Thrift (v1) gateway via happybase. Layout in docs/hbase.md.
* ``LocalStore`` — the embedded default: one SQLite file (WAL mode), safe for
  several processes (web, workers) on one machine.

``store_from_url(os.environ.get("HBASE_URL"), "var/representatives.sqlite3")``
picks one. This module imports nothing from Django and opens no connection at
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

import contextlib
import datetime as _dt
import decimal
import functools
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable
from urllib.parse import parse_qs, unquote, urlsplit

Value = str | int | float | None
Row = dict[str, Value]

#: Text fields (stored and returned as str).
TEXT_FIELDS: tuple[str, ...] = (
    "nid",
    "url",
    "title",
    "content",
    "media",
    "publishedAt",
    "updatedAt",
)
#: The document fields, in the order documented for the HBase columns.
FIELDS: tuple[str, ...] = (
    "nid",
    "url",
    "title",
    "content",
    "media",
    "publishedAt",
    "hotness",
    "clusterSize",
    "updatedAt",
)
VERSION = "version"
ALL_KEYS: tuple[str, ...] = (*FIELDS, VERSION)

DEFAULT_TABLE = "dedup_docs"
DEFAULT_POOL_SIZE = 4
DEFAULT_TIMEOUT_MS = 5000
DEFAULT_HBASE_PORT = 9090

T = TypeVar("T")

# Connections and pools inherited through fork() stay referenced here: they
# are never used, nor closed, in the child (SQLite forbids it; closing a
# Thrift socket shuts it down for the parent too).
_INHERITED: list[Any] = []


class StoreUnavailable(Exception):
    """The representative store cannot be reached (or failed); retry later."""


@runtime_checkable
class RepresentativeStore(Protocol):
    def put(self, doc_id: str, row: Mapping[str, Any]) -> None:
        """Write the row unconditionally (whole-row replace); version = row.get('version', 0)."""

    def put_if_newer(self, doc_id: str, row: Mapping[str, Any], version: int) -> bool:
        """Write only if no row is stored or the stored version < ``version``."""

    def put_many_if_newer(self, items: Sequence[tuple[str, Mapping[str, Any], int]]) -> int:
        """``put_if_newer`` for many (doc_id, row, version) at once; returns rows written."""

    def delete_many(self, doc_ids: Sequence[str]) -> None:
        """Remove these rows (no error for absent ones)."""

    def delete(self, doc_id: str) -> None:
        """Remove the row (no error if absent)."""

    def get(self, doc_id: str) -> Row | None:
        """The stored row, or None."""

    def scan(self, batch_size: int = 1000) -> Iterator[tuple[str, Row]]:
        """Every row, in byte order of the UTF-8 docId, fetched ``batch_size`` at a time."""

    def ping(self) -> None:
        """Return if the store is usable, else raise StoreUnavailable."""


# ---------------------------------------------------------------------------
# Row normalisation (shared by both stores, so both behave identically)
# ---------------------------------------------------------------------------


def _text(key: str, value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    if isinstance(value, str):
        return value
    raise TypeError(f"{key}: expected str or None, got {type(value).__name__}")


def _number(key: str, value: Any, kind: type) -> int | float | None:
    if value is None:
        return None
    if isinstance(value, decimal.Decimal):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{key}: expected a number or None, got {value!r}")
    if kind is int:
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError(f"{key}: expected an integer, got {value!r}")
            value = int(value)
        return int(value)
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{key}: must be finite, got {value!r}")
    return value


def normalize_row(row: Mapping[str, Any], version: int | None = None) -> Row:
    """Validate and coerce a row to the stored types; every key of ALL_KEYS present."""
    unknown = set(row) - set(ALL_KEYS)
    if unknown:
        raise ValueError(
            f"unknown representative field(s) {sorted(unknown)}; allowed: {list(ALL_KEYS)}"
        )
    out: Row = {}
    for key in FIELDS:
        value = row.get(key)
        if key == "hotness":
            out[key] = _number(key, value, float)
        elif key == "clusterSize":
            out[key] = _number(key, value, int)
        else:
            assert key in TEXT_FIELDS
            out[key] = _text(key, value)
    v = row.get(VERSION) if version is None else version
    out[VERSION] = 0 if v is None else _number(VERSION, v, int)
    return out


def _check_doc_id(doc_id: str) -> str:
    if not isinstance(doc_id, str) or not doc_id:
        raise ValueError(f"docId must be a non-empty str, got {doc_id!r}")
    return doc_id


# ---------------------------------------------------------------------------
# HBase
# ---------------------------------------------------------------------------

#: Column families, created with the table if it is missing (see docs/hbase.md).
#: ``d``: the document (one column per field in FIELDS); ``m``: metadata
#: (``m:version`` and ``m:nulls``). One version per cell: the store keeps
#: only the current representative.
HBASE_FAMILIES: dict[str, dict[str, Any]] = {
    "d": {"max_versions": 1, "bloom_filter_type": "ROW"},
    "m": {"max_versions": 1, "bloom_filter_type": "ROW", "in_memory": True},
}
_COL = {key: f"d:{key}".encode() for key in FIELDS}
_COL_VERSION = b"m:version"
_COL_NULLS = b"m:nulls"  # comma-separated FIELDS that are None (their d: cell is empty)


def _encode_hbase(row: Row) -> dict[bytes, bytes]:
    """Every column is written on every put (one atomic Put, no deletes)."""
    cells: dict[bytes, bytes] = {}
    nulls = []
    for key in FIELDS:
        value = row[key]
        if value is None:
            nulls.append(key)
            cells[_COL[key]] = b""
        elif key == "hotness":
            cells[_COL[key]] = repr(float(value)).encode()
        else:
            cells[_COL[key]] = str(value).encode("utf-8")
    cells[_COL_VERSION] = str(int(row[VERSION] or 0)).encode()
    cells[_COL_NULLS] = ",".join(nulls).encode()
    return cells


def _decode_hbase(cells: Mapping[bytes, bytes]) -> Row:
    nulls_raw = cells.get(_COL_NULLS)
    nulls = set(nulls_raw.decode().split(",")) if nulls_raw else set()
    row: Row = {}
    for key in FIELDS:
        raw = cells.get(_COL[key])
        if raw is None or key in nulls:
            row[key] = None
        elif key == "hotness":
            row[key] = float(raw.decode()) if raw else None
        elif key == "clusterSize":
            row[key] = int(raw.decode()) if raw else None
        else:
            row[key] = raw.decode("utf-8")
    raw_version = cells.get(_COL_VERSION)
    row[VERSION] = int(raw_version.decode()) if raw_version else 0
    return row


def parse_hbase_url(url: str) -> dict[str, Any]:
    """``hbase://host:port?table=dedup_docs&pool=4&timeout=5000`` -> settings.

    Also accepted: ``prefix`` (happybase table_prefix), ``transport``
    (buffered|framed), ``protocol`` (binary|compact), ``compat`` (0.90..0.98).
    """
    parts = urlsplit(url)
    if parts.scheme != "hbase":
        raise ValueError(f"not an hbase:// URL: {url!r}")
    query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
    allowed = {"table", "pool", "timeout", "prefix", "transport", "protocol", "compat"}
    unknown = set(query) - allowed
    if unknown:
        raise ValueError(
            f"unknown HBASE_URL option(s) {sorted(unknown)}; allowed: {sorted(allowed)}"
        )
    path_table = unquote(parts.path.strip("/"))
    settings: dict[str, Any] = {
        "host": parts.hostname or "localhost",
        "port": parts.port or DEFAULT_HBASE_PORT,
        "table": query.get("table") or path_table or DEFAULT_TABLE,
        "pool_size": int(query.get("pool", DEFAULT_POOL_SIZE)),
        "timeout_ms": int(query.get("timeout", DEFAULT_TIMEOUT_MS)),
        "table_prefix": query.get("prefix") or None,
        "transport": query.get("transport", "buffered"),
        "protocol": query.get("protocol", "binary"),
        "compat": query.get("compat", "0.98"),
    }
    if settings["pool_size"] < 1:
        raise ValueError("HBASE_URL: pool must be >= 1")
    if settings["timeout_ms"] < 1:
        raise ValueError("HBASE_URL: timeout must be >= 1 (milliseconds)")
    return settings


def _scan_page(table: Any, start: bytes, size: int) -> list[tuple[bytes, dict[bytes, bytes]]]:
    return list(table.scan(row_start=start, limit=size, batch_size=size))


class HBaseStore:
    """Representatives in an HBase table, through the Thrift gateway (happybase).

    The ``happybase.ConnectionPool`` is created on first use. Every call runs
    with the socket timeout from the URL; a connection error that is not a
    timeout (e.g. a pooled connection to a Thrift server that has since
    restarted) is retried once on a fresh connection, a timeout is not.
    A missing table (also one dropped while running) is created.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        host: str = "localhost",
        port: int = DEFAULT_HBASE_PORT,
        table: str = DEFAULT_TABLE,
        pool_size: int = DEFAULT_POOL_SIZE,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        table_prefix: str | None = None,
        transport: str = "buffered",
        protocol: str = "binary",
        compat: str = "0.98",
    ) -> None:
        if url is not None:
            s = parse_hbase_url(url)
            host, port, table = s["host"], s["port"], s["table"]
            pool_size, timeout_ms = s["pool_size"], s["timeout_ms"]
            table_prefix, transport = s["table_prefix"], s["transport"]
            protocol, compat = s["protocol"], s["compat"]
        self.host = host
        self.port = port
        self.table_name = table
        self.pool_size = pool_size
        self.timeout_ms = timeout_ms
        self._conn_kwargs = {
            "host": host,
            "port": port,
            "timeout": timeout_ms,
            "table_prefix": table_prefix,
            "transport": transport,
            "protocol": protocol,
            "compat": compat,
        }
        self._pool: Any = None
        self._table_ready = False
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def __repr__(self) -> str:
        return f"HBaseStore(host={self.host!r}, port={self.port}, table={self.table_name!r})"

    # -- plumbing ----------------------------------------------------------

    def _get_pool(self) -> Any:
        if self._pool is not None and self._pid == os.getpid():
            return self._pool
        import happybase  # imported here: no Thrift machinery at module import

        with self._lock:
            if self._pool is None or self._pid != os.getpid():
                # A pool inherited through fork() shares its sockets with the
                # parent: never use it in the child, and never let it be
                # garbage-collected there (closing shuts the parent's sockets).
                if self._pool is not None:
                    _INHERITED.append(self._pool)
                self._pool = None
                self._table_ready = False
                self._pid = os.getpid()
                # ConnectionPool connects its first connection right away.
                self._pool = happybase.ConnectionPool(size=self.pool_size, **self._conn_kwargs)
            return self._pool

    @staticmethod
    def _errors() -> tuple[type[BaseException], ...]:
        from happybase import NoConnectionsAvailable
        from thriftpy2.thrift import TException

        return (TException, OSError, EOFError, NoConnectionsAvailable)

    @staticmethod
    def _is_reconnectable(exc: BaseException) -> bool:
        """A broken connection (worth one retry on a fresh one), not a timeout."""
        from thriftpy2.transport import TTransportException

        if isinstance(exc, TimeoutError):
            return False
        if isinstance(exc, TTransportException):
            return exc.type != TTransportException.TIMED_OUT
        return isinstance(exc, OSError | EOFError)

    @staticmethod
    def _is_table_not_found(exc: BaseException) -> bool:
        message = getattr(exc, "message", None)
        if isinstance(message, bytes):
            message = message.decode("utf-8", "replace")
        return type(exc).__name__ == "IOError" and "TableNotFound" in str(message or "")

    def _ensure_table(self, conn: Any) -> None:
        if self._table_ready:
            return
        from Hbase_thrift import AlreadyExists  # loaded by happybase

        name = self.table_name.encode()
        if name not in conn.tables():
            # The first user creates it; a concurrent creator is fine.
            with contextlib.suppress(AlreadyExists):
                conn.create_table(self.table_name, HBASE_FAMILIES)
        self._table_ready = True

    def _call(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(table)`` on a pooled connection; map failures to StoreUnavailable."""
        errors = self._errors()
        retried_connection = retried_table = False
        while True:
            started = time.monotonic()
            try:
                pool = self._get_pool()
                with pool.connection(timeout=self.timeout_ms / 1000) as conn:
                    self._ensure_table(conn)
                    return fn(conn.table(self.table_name))
            except errors as exc:
                if self._is_table_not_found(exc) and not retried_table:
                    self._table_ready = False
                    retried_table = True
                    continue
                if (
                    not retried_connection
                    and self._pool is not None
                    and self._is_reconnectable(exc)
                    # a failure that took long (a connect that timed out) is not
                    # retried: a call never waits much more than the timeout
                    and time.monotonic() - started < self.timeout_ms / 2000
                ):
                    retried_connection = True
                    continue
                raise StoreUnavailable(f"HBase at {self.host}:{self.port}: {exc!r}") from exc

    # -- the interface -----------------------------------------------------

    def put(self, doc_id: str, row: Mapping[str, Any]) -> None:
        key = _check_doc_id(doc_id).encode("utf-8")
        cells = _encode_hbase(normalize_row(row))
        self._call(lambda t: t.put(key, cells))

    def put_if_newer(self, doc_id: str, row: Mapping[str, Any], version: int) -> bool:
        # Read the stored version, then write. Thrift v1 has no multi-column
        # compare-and-set, so two writers of one docId racing here could let
        # the older one win; callers serialise pushes per docId (see
        # docs/hbase.md).
        key = _check_doc_id(doc_id).encode("utf-8")
        norm = normalize_row(row, version=version)
        cells = _encode_hbase(norm)
        new_version = int(norm[VERSION] or 0)

        def run(t: Any) -> bool:
            stored = t.row(key, columns=[_COL_VERSION])
            if stored:
                raw = stored.get(_COL_VERSION)
                if raw and int(raw.decode()) >= new_version:
                    return False
            t.put(key, cells)
            return True

        return self._call(run)

    def put_many_if_newer(self, items: Sequence[tuple[str, Mapping[str, Any], int]]) -> int:
        """One read of the stored versions, one batch of puts (mutateRows)."""
        prepared = []
        for doc_id, row, version in items:
            norm = normalize_row(row, version=version)
            prepared.append((_check_doc_id(doc_id).encode("utf-8"), _encode_hbase(norm),
                             int(norm[VERSION] or 0)))
        if not prepared:
            return 0

        def run(t: Any) -> int:
            stored = dict(t.rows([key for key, _c, _v in prepared], columns=[_COL_VERSION]))
            written = 0
            with t.batch() as batch:
                for key, cells, version in prepared:
                    raw = stored.get(key, {}).get(_COL_VERSION)
                    if raw and int(raw.decode()) >= version:
                        continue
                    batch.put(key, cells)
                    written += 1
            return written

        return self._call(run)

    def delete_many(self, doc_ids: Sequence[str]) -> None:
        for doc_id in doc_ids:
            self.delete(doc_id)

    def delete(self, doc_id: str) -> None:
        key = _check_doc_id(doc_id).encode("utf-8")
        self._call(lambda t: t.connection.client.deleteAllRow(t.name, key, {}))

    def get(self, doc_id: str) -> Row | None:
        key = _check_doc_id(doc_id).encode("utf-8")
        cells = self._call(lambda t: t.row(key))
        return _decode_hbase(cells) if cells else None

    def scan(self, batch_size: int = 1000) -> Iterator[tuple[str, Row]]:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        start = b""
        while True:
            # One short scanner per page: no scanner (or pooled connection)
            # is held open while the caller works on a page.
            page = self._call(functools.partial(_scan_page, start=start, size=batch_size))
            for key, cells in page:
                yield key.decode("utf-8"), _decode_hbase(cells)
            if len(page) < batch_size:
                return
            start = page[-1][0] + b"\x00"

    def ping(self) -> None:
        self._call(lambda t: t.connection.client.getColumnDescriptors(t.name))

    def close(self) -> None:
        """Close pooled connections (a later call opens a new pool)."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._table_ready = False
        if pool is None:
            return
        while True:
            try:
                conn = pool._queue.get_nowait()
            except Exception:
                break
            with contextlib.suppress(Exception):
                conn.close()


# ---------------------------------------------------------------------------
# Local SQLite store
# ---------------------------------------------------------------------------

_SQL_COLUMNS = {
    "nid": "nid",
    "url": "url",
    "title": "title",
    "content": "content",
    "media": "media",
    "publishedAt": "published_at",
    "hotness": "hotness",
    "clusterSize": "cluster_size",
    "updatedAt": "updated_at",
    "version": "version",
}
_SQL_CREATE = """
CREATE TABLE IF NOT EXISTS representatives (
    doc_id       TEXT PRIMARY KEY NOT NULL,
    version      INTEGER NOT NULL DEFAULT 0,
    nid          TEXT,
    url          TEXT,
    title        TEXT,
    content      TEXT,
    media        TEXT,
    published_at TEXT,
    hotness      REAL,
    cluster_size INTEGER,
    updated_at   TEXT
) WITHOUT ROWID
"""
_SQL_COLS = ", ".join(_SQL_COLUMNS[k] for k in ALL_KEYS)
_SQL_PARAMS = ", ".join("?" for _ in ALL_KEYS)
_SQL_SET = ", ".join(f"{_SQL_COLUMNS[k]} = excluded.{_SQL_COLUMNS[k]}" for k in ALL_KEYS)
_SQL_PUT = (
    f"INSERT INTO representatives (doc_id, {_SQL_COLS}) VALUES (?, {_SQL_PARAMS}) "
    f"ON CONFLICT(doc_id) DO UPDATE SET {_SQL_SET}"
)
_SQL_PUT_IF_NEWER = _SQL_PUT + " WHERE excluded.version > representatives.version"
_SQL_SELECT = f"SELECT doc_id, {_SQL_COLS} FROM representatives"


def _sql_page(conn: sqlite3.Connection, after: str | None, size: int) -> list[Any]:
    if after is None:
        return conn.execute(f"{_SQL_SELECT} ORDER BY doc_id LIMIT ?", (size,)).fetchall()
    sql = f"{_SQL_SELECT} WHERE doc_id > ? ORDER BY doc_id LIMIT ?"
    return conn.execute(sql, (after, size)).fetchall()


class LocalStore:
    """Representatives in one SQLite file (WAL) — the default without HBASE_URL.

    One connection per thread and process, opened on first use; the file,
    its directory and the table are created if missing. Writers in several
    processes are serialised by SQLite (busy timeout ``timeout_ms``);
    ``put_if_newer`` is a single atomic UPSERT.
    """

    def __init__(self, path: str | os.PathLike[str], timeout_ms: int = 5000) -> None:
        self.path = Path(path)
        self.timeout_ms = timeout_ms
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"LocalStore({str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        pid = getattr(self._local, "pid", None)
        if conn is not None and pid == os.getpid():
            return conn
        if conn is not None:
            _INHERITED.append(conn)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            self.path,
            timeout=self.timeout_ms / 1000,
            isolation_level=None,  # autocommit: every statement is its own transaction
            check_same_thread=True,
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout_ms)}")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._init_db(conn)
        except sqlite3.Error:
            conn.close()
            raise
        self._local.conn = conn
        self._local.pid = os.getpid()
        return conn

    def _init_db(self, conn: sqlite3.Connection) -> None:
        """WAL mode (persistent, set once per file) and the table, if missing.

        Switching to WAL can answer "database is locked" at once, without
        waiting for the busy timeout, while another process creates the same
        file: retry until the timeout.
        """
        deadline = time.monotonic() + self.timeout_ms / 1000
        while True:
            try:
                mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                conn.execute(_SQL_CREATE)
                return
            except sqlite3.OperationalError as exc:
                transient = "locked" in str(exc) or "busy" in str(exc)
                if not transient or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        retried = False
        while True:
            try:
                return fn(self._connect())
            except sqlite3.OperationalError as exc:
                if not retried and "no such table" in str(exc):
                    retried = True
                    with contextlib.suppress(sqlite3.Error):
                        self._connect().execute(_SQL_CREATE)
                    continue
                raise StoreUnavailable(f"local store {self.path}: {exc}") from exc
            except (sqlite3.Error, OSError) as exc:
                raise StoreUnavailable(f"local store {self.path}: {exc}") from exc

    @staticmethod
    def _params(doc_id: str, row: Row) -> tuple[Value, ...]:
        return (doc_id, *(row[k] for k in ALL_KEYS))

    @staticmethod
    def _row(record: tuple[Any, ...]) -> tuple[str, Row]:
        return record[0], dict(zip(ALL_KEYS, record[1:], strict=True))

    def put(self, doc_id: str, row: Mapping[str, Any]) -> None:
        params = self._params(_check_doc_id(doc_id), normalize_row(row))
        self._run(lambda c: c.execute(_SQL_PUT, params))

    def put_if_newer(self, doc_id: str, row: Mapping[str, Any], version: int) -> bool:
        params = self._params(_check_doc_id(doc_id), normalize_row(row, version=version))
        return self._run(lambda c: c.execute(_SQL_PUT_IF_NEWER, params).rowcount > 0)

    def put_many_if_newer(self, items: Sequence[tuple[str, Mapping[str, Any], int]]) -> int:
        params = [self._params(_check_doc_id(d), normalize_row(r, version=v))
                  for d, r, v in items]

        def run(c: sqlite3.Connection) -> int:
            c.execute("BEGIN IMMEDIATE")
            try:
                before = c.total_changes
                c.executemany(_SQL_PUT_IF_NEWER, params)
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
            return c.total_changes - before

        return self._run(run)

    def delete_many(self, doc_ids: Sequence[str]) -> None:
        for doc_id in doc_ids:
            _check_doc_id(doc_id)
        self._run(lambda c: c.executemany("DELETE FROM representatives WHERE doc_id = ?",
                                          [(d,) for d in doc_ids]))

    def delete(self, doc_id: str) -> None:
        _check_doc_id(doc_id)
        self._run(lambda c: c.execute("DELETE FROM representatives WHERE doc_id = ?", (doc_id,)))

    def get(self, doc_id: str) -> Row | None:
        _check_doc_id(doc_id)
        record = self._run(
            lambda c: c.execute(f"{_SQL_SELECT} WHERE doc_id = ?", (doc_id,)).fetchone()
        )
        return None if record is None else self._row(record)[1]

    def scan(self, batch_size: int = 1000) -> Iterator[tuple[str, Row]]:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        # Keyset pages: no read transaction stays open between pages. TEXT
        # compares with memcmp on UTF-8 (BINARY collation): HBase's order.
        last: str | None = None
        while True:
            page = self._run(functools.partial(_sql_page, after=last, size=batch_size))
            for record in page:
                yield self._row(record)
            if len(page) < batch_size:
                return
            last = page[-1][0]

    def ping(self) -> None:
        self._run(lambda c: c.execute("SELECT count(*) FROM representatives WHERE 0").fetchone())

    def close(self) -> None:
        """Close this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            conn.close()
        self._local.conn = None


def store_from_url(url: str | None, local_path: str | os.PathLike[str]) -> RepresentativeStore:
    """``HBASE_URL`` -> a store: unset/empty -> LocalStore(local_path); hbase:// -> HBaseStore."""
    if not url:
        return LocalStore(local_path)
    if urlsplit(url).scheme == "hbase":
        return HBaseStore(url)
    raise ValueError(f"HBASE_URL must be an hbase:// URL, got {url!r}")
