"""A small HBase Thrift (v1) server for tests — NOT a real HBase.

No HBase can be installed on the development and CI machines, so the tests
drive the real happybase client against this server instead. It implements,
with in-memory tables, the part of HBase's Thrift v1 interface (the
``Hbase.thrift`` that happybase ships) that happybase 1.3 uses: table
administration, row reads and writes, batch mutations, scanners and counters.
It speaks the buffered transport with the binary protocol (happybase's and
``hbase thrift start``'s defaults), served by thriftpy2.

Semantics kept from HBase where a client can see them:

* rows are returned in byte order of their keys; scans honour start row
  (inclusive), stop row (exclusive), column lists (``cf``, ``cf:`` or
  ``cf:qualifier``) and ``reversed``;
* one version per cell (the newest write wins); a write names an existing
  column family or fails with ``IOError`` (NoSuchColumnFamilyException);
* an unknown table is an ``IOError`` whose message contains
  ``TableNotFoundException``; ``createTable`` on an existing table raises
  ``AlreadyExists``; ``deleteTable`` needs the table disabled first;
* a counter is an 8-byte big-endian signed integer.

Not implemented (they raise ``IOError``): server-side filter strings,
``checkAndPut``, ``append``, ``increment``/``incrementRows``, region
operations. Timestamps are kept but only the newest cell is stored.

Use it in three ways:

* in-process: ``handle = start_server(port=0)`` runs the server in a daemon
  thread on 127.0.0.1; ``handle.port``; ``handle.stop()`` closes the listening
  socket and every client connection. ``start_server(port=handle.port,
  backend=handle.backend)`` starts it again on the same port with the same
  tables.
* as a separate process: ``python support/hbase_server.py --port N [--data FILE]``
  prints ``READY <port>`` on stdout once it listens; SIGTERM/SIGINT stop it.
  With ``--data`` every table change is appended to FILE and replayed at the
  next start, so that data survives a restart (as it does when only the
  Thrift gateway of a real HBase restarts).
* from a test, ``spawn_server_process(port=0, data_path=...)`` starts that
  process and returns a handle with ``.port``, ``.stop()``, ``.kill()``
  (SIGKILL), ``.pause()``/``.resume()`` (SIGSTOP/SIGCONT: a hung server) and
  ``.restart()`` (same port, same data file).
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import json
import logging
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import happybase  # importing it loads its Hbase.thrift as the module Hbase_thrift
import thriftpy2
from thriftpy2.rpc import make_server
from thriftpy2.thrift import TApplicationException, TException
from thriftpy2.transport import TSocket, TTransportException

logger = logging.getLogger("support.hbase_server")

HBASE_THRIFT_PATH = Path(happybase.__file__).with_name("Hbase.thrift")
# happybase loads the IDL under this module name; reuse it so that both sides
# share one set of generated classes.
Hbase_thrift = sys.modules.get("Hbase_thrift") or thriftpy2.load(
    str(HBASE_THRIFT_PATH), module_name="Hbase_thrift"
)

DEFAULT_HOST = "127.0.0.1"


# ---------------------------------------------------------------------------
# In-memory tables
# ---------------------------------------------------------------------------


def _now_ms() -> int:
    return int(time.time() * 1000)


def _io_error(message: str) -> Exception:
    return Hbase_thrift.IOError(message=message)


def _split_column(column: bytes) -> tuple[bytes, bytes | None]:
    """``b'cf:q'`` -> (b'cf', b'q'); ``b'cf'`` or ``b'cf:'`` -> (b'cf', None)."""
    family, sep, qualifier = column.partition(b":")
    if not sep or qualifier == b"":
        return family, None
    return family, qualifier


@dataclass
class MemTable:
    families: dict[bytes, object]  # family name without ':' -> ColumnDescriptor
    enabled: bool = True
    rows: dict[bytes, dict[bytes, tuple[bytes, int]]] = field(default_factory=dict)
    _sorted: list[bytes] | None = None

    def sorted_keys(self) -> list[bytes]:
        if self._sorted is None:
            self._sorted = sorted(self.rows)
        return self._sorted

    def touch_keys(self) -> None:
        self._sorted = None


@dataclass
class _Scanner:
    table_name: bytes
    keys: list[bytes]
    columns: list[bytes] | None
    sort_columns: bool
    pos: int = 0


class Backend:
    """In-memory tables behind a lock, optionally persisted to an append-only log."""

    def __init__(self, data_path: str | os.PathLike[str] | None = None) -> None:
        self.lock = threading.RLock()
        self.tables: dict[bytes, MemTable] = {}
        self.scanners: dict[int, _Scanner] = {}
        self._next_scanner = 1
        self.calls: Counter[str] = Counter()
        self._log = None
        if data_path is not None:
            path = Path(data_path)
            if path.exists():
                self._replay(path)
            self._log = open(path, "a", encoding="utf-8")  # noqa: SIM115 (kept open)

    # -- persistence (a tiny write-ahead log) ------------------------------

    @staticmethod
    def _b2s(b: bytes) -> str:
        return b.decode("latin-1")

    @staticmethod
    def _s2b(s: str) -> bytes:
        return s.encode("latin-1")

    def _append(self, entry: dict) -> None:
        if self._log is not None:
            self._log.write(json.dumps(entry, ensure_ascii=True) + "\n")
            self._log.flush()  # reaches the OS: survives SIGKILL of this process

    def _replay(self, path: Path) -> None:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.endswith("\n"):
                    break  # torn last line
                e = json.loads(line)
                name = self._s2b(e["t"])
                op = e["op"]
                if op == "create":
                    families = {}
                    for fam, opts in e["families"].items():
                        cd = Hbase_thrift.ColumnDescriptor(**opts)
                        cd.name = self._s2b(fam) + b":"
                        families[self._s2b(fam)] = cd
                    self.tables[name] = MemTable(families=families)
                elif op == "drop":
                    self.tables.pop(name, None)
                elif op == "enable":
                    self.tables[name].enabled = bool(e["on"])
                elif op == "row":
                    t = self.tables[name]
                    row = self._s2b(e["r"])
                    if e["cells"] is None:
                        t.rows.pop(row, None)
                    else:
                        t.rows[row] = {self._s2b(c): (self._s2b(v), ts) for c, v, ts in e["cells"]}
                    t.touch_keys()

    def _log_row(self, table_name: bytes, t: MemTable, row: bytes) -> None:
        cells = t.rows.get(row)
        self._append(
            {
                "op": "row",
                "t": self._b2s(table_name),
                "r": self._b2s(row),
                "cells": None
                if cells is None
                else [[self._b2s(c), self._b2s(v), ts] for c, (v, ts) in cells.items()],
            }
        )

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    # -- helpers -----------------------------------------------------------

    def table(self, name: bytes, *, must_be_enabled: bool = True) -> MemTable:
        t = self.tables.get(name)
        if t is None:
            raise _io_error(
                f"org.apache.hadoop.hbase.TableNotFoundException: {name.decode('utf-8', 'replace')}"
            )
        if must_be_enabled and not t.enabled:
            raise _io_error(
                "org.apache.hadoop.hbase.TableNotEnabledException: "
                f"{name.decode('utf-8', 'replace')}"
            )
        return t

    @staticmethod
    def select(cells: dict[bytes, tuple[bytes, int]], columns: list[bytes] | None):
        if not columns:
            return dict(cells)
        wanted_families = set()
        wanted_columns = set()
        for c in columns:
            fam, qual = _split_column(c)
            if qual is None:
                wanted_families.add(fam)
            else:
                wanted_columns.add(c)
        return {
            c: v
            for c, v in cells.items()
            if c in wanted_columns or c.partition(b":")[0] in wanted_families
        }

    @staticmethod
    def row_result(row: bytes, cells: dict[bytes, tuple[bytes, int]], sort_columns: bool):
        tcells = {c: Hbase_thrift.TCell(value=v, timestamp=ts) for c, (v, ts) in cells.items()}
        result = Hbase_thrift.TRowResult(row=row, columns=tcells)
        if sort_columns:
            result.sortedColumns = [
                Hbase_thrift.TColumn(columnName=c, cell=tcells[c]) for c in sorted(tcells)
            ]
        return result

    def apply_mutations(
        self, table_name: bytes, row: bytes, mutations, timestamp: int | None = None
    ) -> None:
        t = self.table(table_name)
        ts = _now_ms() if timestamp is None else timestamp
        # Validate every mutation first: a rejected mutation changes nothing.
        for m in mutations:
            if m.column is None:
                raise Hbase_thrift.IllegalArgument(message="mutation without a column")
            fam, _ = _split_column(m.column)
            if fam not in t.families:
                raise _io_error(
                    "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: "
                    f"column family {fam.decode('utf-8', 'replace')} does not exist"
                )
        cells = dict(t.rows.get(row, {}))
        # As in HBase's Thrift handler: the deletes of a row are applied
        # before its puts.
        for m in mutations:
            if m.isDelete:
                fam, qual = _split_column(m.column)
                if qual is None:
                    for c in [c for c in cells if c.partition(b":")[0] == fam]:
                        del cells[c]
                else:
                    cells.pop(m.column, None)
        for m in mutations:
            if not m.isDelete:
                fam, qual = _split_column(m.column)
                column = fam + b":" + (qual or b"")
                cells[column] = (m.value if m.value is not None else b"", ts)
        existed = row in t.rows
        if cells:
            t.rows[row] = cells
            if not existed:
                t.touch_keys()
        elif existed:
            del t.rows[row]
            t.touch_keys()
        self._log_row(table_name, t, row)


# ---------------------------------------------------------------------------
# Thrift handler: one method per Hbase service call
# ---------------------------------------------------------------------------


class HbaseHandler:
    def __init__(self, backend: Backend) -> None:
        self.b = backend

    def __getattribute__(self, name: str):
        attr = object.__getattribute__(self, name)
        if not name.startswith("_") and name != "b" and callable(attr):
            backend = object.__getattribute__(self, "b")

            def locked(*args):
                with backend.lock:
                    backend.calls[name] += 1
                    try:
                        return attr(*args)
                    except TException:
                        raise
                    except Exception as exc:
                        # a bug here reaches the client as an error, not a dropped connection
                        logger.exception("test HBase server: %s failed", name)
                        raise TApplicationException(
                            TApplicationException.INTERNAL_ERROR, f"{name}: {exc!r}"
                        ) from exc

            return locked
        return attr

    # -- tables ------------------------------------------------------------

    def getTableNames(self):
        return sorted(self.b.tables)

    def createTable(self, tableName, columnFamilies):
        if not tableName:
            raise Hbase_thrift.IllegalArgument(message="empty table name")
        if tableName in self.b.tables:
            raise Hbase_thrift.AlreadyExists(message=f"table {tableName!r} already exists")
        if not columnFamilies:
            raise Hbase_thrift.IllegalArgument(message="no column families")
        families = {}
        for cd in columnFamilies:
            fam = cd.name.rstrip(b":")
            if not fam:
                raise Hbase_thrift.IllegalArgument(message="empty column family name")
            cd.name = fam + b":"
            families[fam] = cd
        self.b.tables[tableName] = MemTable(families=families)
        self.b._append(
            {
                "op": "create",
                "t": self.b._b2s(tableName),
                "families": {
                    self.b._b2s(f): {k: v for k, v in vars(cd).items() if k != "name"}
                    for f, cd in families.items()
                },
            }
        )

    def deleteTable(self, tableName):
        t = self.b.table(tableName, must_be_enabled=False)
        if t.enabled:
            raise _io_error(
                "org.apache.hadoop.hbase.TableNotDisabledException: "
                f"{tableName.decode('utf-8', 'replace')}"
            )
        del self.b.tables[tableName]
        self.b._append({"op": "drop", "t": self.b._b2s(tableName)})

    def enableTable(self, tableName):
        self.b.table(tableName, must_be_enabled=False).enabled = True
        self.b._append({"op": "enable", "t": self.b._b2s(tableName), "on": True})

    def disableTable(self, tableName):
        self.b.table(tableName, must_be_enabled=False).enabled = False
        self.b._append({"op": "enable", "t": self.b._b2s(tableName), "on": False})

    def isTableEnabled(self, tableName):
        return self.b.table(tableName, must_be_enabled=False).enabled

    def getColumnDescriptors(self, tableName):
        t = self.b.table(tableName, must_be_enabled=False)
        return {fam + b":": cd for fam, cd in t.families.items()}

    def getTableRegions(self, tableName):
        self.b.table(tableName, must_be_enabled=False)
        return [
            Hbase_thrift.TRegionInfo(
                startKey=b"",
                endKey=b"",
                id=1,
                name=tableName + b",,1",
                version=1,
                serverName=b"localhost",
                port=0,
            )
        ]

    def compact(self, tableNameOrRegionName):
        return None

    def majorCompact(self, tableNameOrRegionName):
        return None

    # -- reads -------------------------------------------------------------

    def _get_rows(self, tableName, rows, columns):
        t = self.b.table(tableName)
        out = []
        for row in rows:
            cells = t.rows.get(row)
            if cells is None:
                continue
            selected = self.b.select(cells, columns)
            if selected:
                out.append(self.b.row_result(row, selected, False))
        return out

    def getRow(self, tableName, row, attributes):
        return self._get_rows(tableName, [row], None)

    def getRowWithColumns(self, tableName, row, columns, attributes):
        return self._get_rows(tableName, [row], columns)

    def getRowTs(self, tableName, row, timestamp, attributes):
        return self._filter_ts(self._get_rows(tableName, [row], None), timestamp)

    def getRowWithColumnsTs(self, tableName, row, columns, timestamp, attributes):
        return self._filter_ts(self._get_rows(tableName, [row], columns), timestamp)

    def getRows(self, tableName, rows, attributes):
        return self._get_rows(tableName, rows, None)

    def getRowsWithColumns(self, tableName, rows, columns, attributes):
        return self._get_rows(tableName, rows, columns)

    def getRowsTs(self, tableName, rows, timestamp, attributes):
        return self._filter_ts(self._get_rows(tableName, rows, None), timestamp)

    def getRowsWithColumnsTs(self, tableName, rows, columns, timestamp, attributes):
        return self._filter_ts(self._get_rows(tableName, rows, columns), timestamp)

    @staticmethod
    def _filter_ts(results, timestamp):
        # HBase semantics: only cells with a timestamp strictly below `timestamp`.
        out = []
        for r in results:
            r.columns = {c: cell for c, cell in r.columns.items() if cell.timestamp < timestamp}
            if r.columns:
                out.append(r)
        return out

    def get(self, tableName, row, column, attributes):
        return self.getVer(tableName, row, column, 1, attributes)

    def getVer(self, tableName, row, column, numVersions, attributes):
        t = self.b.table(tableName)
        cell = t.rows.get(row, {}).get(column)
        if cell is None or numVersions < 1:
            return []
        return [Hbase_thrift.TCell(value=cell[0], timestamp=cell[1])]

    def getVerTs(self, tableName, row, column, timestamp, numVersions, attributes):
        return [
            c
            for c in self.getVer(tableName, row, column, numVersions, attributes)
            if c.timestamp < timestamp
        ]

    # -- writes ------------------------------------------------------------

    def mutateRow(self, tableName, row, mutations, attributes):
        self.b.apply_mutations(tableName, row, mutations or [])

    def mutateRowTs(self, tableName, row, mutations, timestamp, attributes):
        self.b.apply_mutations(tableName, row, mutations or [], timestamp)

    def mutateRows(self, tableName, rowBatches, attributes):
        for bm in rowBatches or []:
            self.b.apply_mutations(tableName, bm.row, bm.mutations or [])

    def mutateRowsTs(self, tableName, rowBatches, timestamp, attributes):
        for bm in rowBatches or []:
            self.b.apply_mutations(tableName, bm.row, bm.mutations or [], timestamp)

    def deleteAll(self, tableName, row, column, attributes):
        self.b.apply_mutations(
            tableName, row, [Hbase_thrift.Mutation(isDelete=True, column=column)]
        )

    def deleteAllTs(self, tableName, row, column, timestamp, attributes):
        t = self.b.table(tableName)
        cell = t.rows.get(row, {}).get(column)
        if cell is not None and cell[1] <= timestamp:
            self.deleteAll(tableName, row, column, attributes)

    def deleteAllRow(self, tableName, row, attributes):
        t = self.b.table(tableName)
        if row in t.rows:
            del t.rows[row]
            t.touch_keys()
            self.b._log_row(tableName, t, row)

    def deleteAllRowTs(self, tableName, row, timestamp, attributes):
        t = self.b.table(tableName)
        cells = t.rows.get(row)
        if cells is None:
            return
        keep = {c: v for c, v in cells.items() if v[1] > timestamp}
        if keep:
            t.rows[row] = keep
        else:
            del t.rows[row]
            t.touch_keys()
        self.b._log_row(tableName, t, row)

    def atomicIncrement(self, tableName, row, column, value):
        t = self.b.table(tableName)
        fam, qual = _split_column(column)
        if fam not in t.families:
            raise _io_error(
                "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: "
                f"column family {fam.decode('utf-8', 'replace')} does not exist"
            )
        column = fam + b":" + (qual or b"")
        cells = t.rows.get(row, {})
        current = 0
        if column in cells:
            raw = cells[column][0]
            if len(raw) != 8:
                raise _io_error(
                    "org.apache.hadoop.hbase.DoNotRetryIOException: "
                    f"Field is not a long, it's {len(raw)} bytes wide"
                )
            current = struct.unpack(">q", raw)[0]
        new = current + value
        self.b.apply_mutations(
            tableName, row, [Hbase_thrift.Mutation(column=column, value=struct.pack(">q", new))]
        )
        return new

    # -- scanners ----------------------------------------------------------

    def _open(self, tableName, start, stop, columns, reverse=False, sort_columns=False):
        t = self.b.table(tableName)
        if not (columns is None or isinstance(columns, list)):
            raise Hbase_thrift.IllegalArgument(message="columns must be a list")
        keys = t.sorted_keys()
        start = start or b""
        stop = stop or b""
        if not reverse:
            lo = bisect.bisect_left(keys, start)
            hi = bisect.bisect_left(keys, stop) if stop else len(keys)
            selected = keys[lo:hi]
        else:
            # reversed: start is the high end (inclusive), stop the low end (exclusive)
            hi = bisect.bisect_right(keys, start) if start else len(keys)
            lo = bisect.bisect_right(keys, stop) if stop else 0
            selected = keys[lo:hi][::-1]
        sid = self.b._next_scanner
        self.b._next_scanner += 1
        self.b.scanners[sid] = _Scanner(tableName, list(selected), columns or None, sort_columns)
        return sid

    def scannerOpenWithScan(self, tableName, scan, attributes):
        if scan.filterString:
            raise _io_error("filter strings are not supported by the test server")
        return self._open(
            tableName,
            scan.startRow,
            scan.stopRow,
            scan.columns,
            reverse=bool(scan.reversed),
            sort_columns=bool(scan.sortColumns),
        )

    def scannerOpen(self, tableName, startRow, columns, attributes):
        return self._open(tableName, startRow, None, columns)

    def scannerOpenWithStop(self, tableName, startRow, stopRow, columns, attributes):
        return self._open(tableName, startRow, stopRow, columns)

    def scannerOpenWithPrefix(self, tableName, startAndPrefix, columns, attributes):
        sid = self._open(tableName, startAndPrefix, None, columns)
        sc = self.b.scanners[sid]
        sc.keys = [k for k in sc.keys if k.startswith(startAndPrefix or b"")]
        return sid

    def scannerOpenTs(self, tableName, startRow, columns, timestamp, attributes):
        return self._open(tableName, startRow, None, columns)

    def scannerOpenWithStopTs(self, tableName, startRow, stopRow, columns, timestamp, attributes):
        return self._open(tableName, startRow, stopRow, columns)

    def scannerGetList(self, id, nbRows):
        sc = self.b.scanners.get(id)
        if sc is None:
            raise Hbase_thrift.IllegalArgument(message=f"no such scanner: {id}")
        t = self.b.tables.get(sc.table_name)
        out: list[Any] = []
        while sc.pos < len(sc.keys) and len(out) < max(nbRows, 0) and t is not None:
            key = sc.keys[sc.pos]
            sc.pos += 1
            cells = t.rows.get(key)  # a row deleted since the scan opened is skipped
            if not cells:
                continue
            selected = self.b.select(cells, sc.columns)
            if selected:
                out.append(self.b.row_result(key, selected, sc.sort_columns))
        return out

    def scannerGet(self, id):
        return self.scannerGetList(id, 1)

    def scannerClose(self, id):
        if self.b.scanners.pop(id, None) is None:
            raise Hbase_thrift.IllegalArgument(message=f"no such scanner: {id}")

    # -- not implemented ---------------------------------------------------

    def _unsupported(self, *args):
        raise _io_error("not implemented by the test server")

    getRowOrBefore = _unsupported
    getRegionInfo = _unsupported
    append = _unsupported
    checkAndPut = _unsupported
    increment = _unsupported
    incrementRows = _unsupported


# ---------------------------------------------------------------------------
# Serving
# ---------------------------------------------------------------------------


class ServerHandle:
    """A running server (in a daemon thread of this process)."""

    def __init__(self, backend: Backend, host: str, port: int) -> None:
        self.backend = backend
        self.host = host
        self._thrift = make_server(
            Hbase_thrift.Hbase,
            HbaseHandler(backend),
            host=host,
            port=port or 9090,  # make_server refuses port 0; the real port is set below
            client_timeout=None,  # type: ignore[arg-type]  # never drop idle pooled clients
        )
        # Listen ourselves rather than with trans.listen(): thriftpy2 sets
        # SO_REUSEPORT, which would let a second server (say, a restart while
        # the old one still listens, or another test's server) share the port
        # and silently take half of the connections. SO_REUSEADDR alone still
        # allows a restart on the same port right after a stop or a kill.
        lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            lsock.bind((host, port))
            lsock.listen(128)
        except OSError:
            lsock.close()
            raise
        self._thrift.trans.sock = lsock
        self._lsock: socket.socket = lsock
        self.port: int = self._lsock.getsockname()[1]
        self._clients: set[socket.socket] = set()
        self._clients_lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = threading.Thread(
            target=self._serve, name=f"hbase-thrift-test-server:{self.port}", daemon=True
        )
        self._thread.start()

    def _serve(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self._lsock, selectors.EVENT_READ)
        try:
            while not self._closed.is_set():
                if not sel.select(timeout=0.2):
                    continue
                if self._closed.is_set():
                    break
                try:
                    conn, _ = self._lsock.accept()
                except OSError:
                    continue
                conn.setblocking(True)
                with self._clients_lock:
                    if self._closed.is_set():
                        conn.close()
                        break
                    self._clients.add(conn)
                threading.Thread(
                    target=self._handle, args=(conn,), name="hbase-thrift-client", daemon=True
                ).start()
        finally:
            sel.close()

    def _handle(self, conn: socket.socket) -> None:
        server = self._thrift
        client = TSocket(sock=conn)
        itrans = server.itrans_factory.get_transport(client)
        otrans = server.otrans_factory.get_transport(client)
        iprot = server.iprot_factory.get_protocol(itrans)
        oprot = server.oprot_factory.get_protocol(otrans)
        try:
            while not self._closed.is_set():
                server.processor.process(iprot, oprot)
        except (TTransportException, OSError, EOFError):
            pass  # the client went away (or stop() dropped it)
        except Exception:  # a broken request must not kill the server
            logger.exception("test HBase server: request failed")
        finally:
            with self._clients_lock:
                self._clients.discard(conn)
            with contextlib.suppress(OSError):
                conn.close()

    def stop(self) -> None:
        """Stop accepting, close the listening socket and drop every client."""
        if self._closed.is_set():
            return
        self._closed.set()
        with contextlib.suppress(OSError):
            self._lsock.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=5)
        with contextlib.suppress(OSError):
            self._lsock.close()
        self._thrift.trans.sock = None
        with self._clients_lock:
            clients = list(self._clients)
        for conn in clients:
            # shutdown (not close) wakes the handler thread blocked in recv();
            # that thread closes the socket itself.
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    @property
    def url(self) -> str:
        return f"hbase://{self.host}:{self.port}"

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_server(
    port: int = 0,
    host: str = DEFAULT_HOST,
    backend: Backend | None = None,
    data_path: str | os.PathLike[str] | None = None,
) -> ServerHandle:
    """Start the server in a background thread; ``port=0`` picks a free port.

    Pass the ``backend`` of a stopped handle to restart with the same tables.
    """
    if backend is None:
        backend = Backend(data_path)
    return ServerHandle(backend, host, port)


# ---------------------------------------------------------------------------
# Separate process
# ---------------------------------------------------------------------------


class ProcessHandle:
    """The server running as a child process (see ``spawn_server_process``)."""

    def __init__(
        self,
        port: int = 0,
        host: str = DEFAULT_HOST,
        data_path: str | os.PathLike[str] | None = None,
        startup_timeout: float = 10.0,
    ) -> None:
        self.host = host
        self.port = port
        self.data_path = None if data_path is None else str(data_path)
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            raise RuntimeError("server process already running")
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--exit-with-parent",
        ]
        if self.data_path is not None:
            cmd += ["--data", self.data_path]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + self.startup_timeout
        buf = b""
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while b"\n" not in buf:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    self.kill()
                    raise RuntimeError(f"test HBase server did not start: {buf!r}")
                if sel.select(timeout=min(left, 0.2)):
                    chunk = os.read(self.proc.stdout.fileno(), 4096)
                    if not chunk:
                        continue
                    buf += chunk
        line = buf.split(b"\n", 1)[0].decode()
        if not line.startswith("READY "):
            self.kill()
            raise RuntimeError(f"unexpected output from the test HBase server: {line!r}")
        self.port = int(line.split()[1])

    def _signal(self, sig: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)

    def _wait(self) -> None:
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def stop(self) -> None:
        """Graceful stop (SIGTERM); waits for the process to exit."""
        self.resume()
        self._signal(signal.SIGTERM)
        self._wait()

    def kill(self) -> None:
        """Abrupt stop (SIGKILL); the kernel closes its sockets."""
        self._signal(signal.SIGKILL)
        self._wait()

    def pause(self, wait: float = 5.0) -> None:
        """Freeze the process (SIGSTOP): connections are accepted, nothing answers.

        Returns once every thread of the process is stopped: a group stop takes
        effect only when the kernel schedules the process, and until then a
        running thread can still answer a request (seen on a loaded machine).
        """
        self._signal(signal.SIGSTOP)
        if self.proc is None:
            return
        task_dir = Path(f"/proc/{self.proc.pid}/task")
        if not task_dir.is_dir():
            time.sleep(0.2)  # no procfs: give the stop a moment
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            states = []
            for stat in task_dir.glob("*/stat"):
                with contextlib.suppress(OSError):
                    states.append(stat.read_text().rsplit(")", 1)[1].split()[0])
            if states and all(st in ("T", "t") for st in states):
                return
            time.sleep(0.005)
        raise RuntimeError("test HBase server process did not stop")

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def restart(self) -> None:
        """Stop if running, then start again on the same port (and data file)."""
        if self.proc is not None and self.proc.poll() is None:
            self.stop()
        self.start()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def url(self) -> str:
        return f"hbase://{self.host}:{self.port}"

    def __enter__(self) -> ProcessHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.running:
            self.kill()


def spawn_server_process(
    port: int = 0,
    host: str = DEFAULT_HOST,
    data_path: str | os.PathLike[str] | None = None,
) -> ProcessHandle:
    """Run ``python support/hbase_server.py`` as a child process and wait until it listens."""
    return ProcessHandle(port=port, host=host, data_path=data_path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Test HBase Thrift (v1) server with in-memory tables (not a real HBase)."
    )
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=9090, help="0 picks a free port")
    parser.add_argument("--data", help="append-only log file: tables survive a restart")
    parser.add_argument(
        "--exit-with-parent", action="store_true", help="exit when the parent process goes away"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    handle = start_server(port=args.port, host=args.host, data_path=args.data)
    done = threading.Event()

    def _stop(signum, frame):
        done.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    print(f"READY {handle.port}", flush=True)

    parent = os.getppid()
    while not done.wait(0.5):
        if args.exit_with_parent and os.getppid() != parent:
            break
    handle.stop()
    handle.backend.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
