"""The local representative store, the embedded default: one SQLite file (WAL mode),
safe for several processes (web, workers) on one machine."""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from articles.representatives.stores.base import (
    ALL_KEYS,
    INHERITED,
    Row,
    StoreUnavailable,
    T,
    Value,
    check_doc_id,
    normalize_row,
)

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
            INHERITED.append(conn)
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
        params = self._params(check_doc_id(doc_id), normalize_row(row))
        self._run(lambda c: c.execute(_SQL_PUT, params))

    def put_if_newer(self, doc_id: str, row: Mapping[str, Any], version: int) -> bool:
        params = self._params(check_doc_id(doc_id), normalize_row(row, version=version))
        return self._run(lambda c: c.execute(_SQL_PUT_IF_NEWER, params).rowcount > 0)

    def put_many_if_newer(self, items: Sequence[tuple[str, Mapping[str, Any], int]]) -> int:
        params = [self._params(check_doc_id(d), normalize_row(r, version=v))
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
            check_doc_id(doc_id)
        self._run(lambda c: c.executemany("DELETE FROM representatives WHERE doc_id = ?",
                                          [(d,) for d in doc_ids]))

    def delete(self, doc_id: str) -> None:
        check_doc_id(doc_id)
        self._run(lambda c: c.execute("DELETE FROM representatives WHERE doc_id = ?", (doc_id,)))

    def get(self, doc_id: str) -> Row | None:
        check_doc_id(doc_id)
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
