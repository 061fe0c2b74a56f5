"""The HBase representative store: an HBase table through its Thrift (v1) gateway via
happybase, when ``HBASE_URL`` is set. Layout in docs/hbase.md."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from articles.representatives.stores.base import (
    FIELDS,
    INHERITED,
    VERSION,
    Row,
    StoreUnavailable,
    T,
    check_doc_id,
    normalize_row,
)

DEFAULT_TABLE = "dedup_docs"
DEFAULT_POOL_SIZE = 4
DEFAULT_TIMEOUT_MS = 5000
DEFAULT_HBASE_PORT = 9090

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
                    INHERITED.append(self._pool)
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
        key = check_doc_id(doc_id).encode("utf-8")
        cells = _encode_hbase(normalize_row(row))
        self._call(lambda t: t.put(key, cells))

    def put_if_newer(self, doc_id: str, row: Mapping[str, Any], version: int) -> bool:
        # Read the stored version, then write. Thrift v1 has no multi-column
        # compare-and-set, so two writers of one docId racing here could let
        # the older one win; callers serialise pushes per docId (see
        # docs/hbase.md).
        key = check_doc_id(doc_id).encode("utf-8")
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
            prepared.append((check_doc_id(doc_id).encode("utf-8"), _encode_hbase(norm),
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
        key = check_doc_id(doc_id).encode("utf-8")
        self._call(lambda t: t.connection.client.deleteAllRow(t.name, key, {}))

    def get(self, doc_id: str) -> Row | None:
        key = check_doc_id(doc_id).encode("utf-8")
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
