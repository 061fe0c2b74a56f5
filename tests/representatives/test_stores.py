"""Representative stores: the same behaviour from LocalStore (SQLite) and HBaseStore.

HBaseStore is driven through the real happybase client against
support/hbase_server.py — a small server implementing HBase's Thrift (v1)
interface with in-memory tables, not a real HBase (none can be installed here).
Needs no Django settings: run with ``python -m pytest -p no:django``.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import happybase
import pytest

from articles.representatives.stores import (
    ALL_KEYS,
    HBASE_FAMILIES,
    HBaseStore,
    LocalStore,
    RepresentativeStore,
    StoreUnavailable,
    normalize_row,
    parse_hbase_url,
    store_from_url,
)
from support.hbase_server import spawn_server_process, start_server

ROOT = Path(__file__).resolve().parents[2]


def make_row(i: int = 0, **over):
    row = {
        "nid": f"nid-{i}",
        "url": f"https://news.example.com/{i}.html",
        "title": f"标题 {i}",
        "content": f"正文第{i}段。",
        "media": "新华网",
        "publishedAt": "2024-03-01T08:00:00+08:00",
        "hotness": 10.5 + i,
        "clusterSize": 2 + i,
        "updatedAt": "2024-03-01T09:00:00+00:00",
    }
    row.update(over)
    return row


def doc_id(i: int) -> str:
    # the docId format: two 64-bit hex words
    return f"{i * 2654435761 % 2**64:016x}-{i:016x}"


def expected(row, version=None):
    return normalize_row(row, version=version)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hbase_url(port: int, table: str | None = None, **opts) -> str:
    opts.setdefault("timeout", 2000)
    opts.setdefault("pool", 2)
    query = "&".join(f"{k}={v}" for k, v in opts.items())
    return f"hbase://127.0.0.1:{port}?table={table or 't_' + uuid.uuid4().hex[:12]}&{query}"


@pytest.fixture(autouse=True)
def _local_representative_store():
    """Override tests/conftest.py's autouse fixture of this name: it needs Django
    settings, and these tests need no Django (they run with ``-p no:django``)."""
    yield


@pytest.fixture(scope="module")
def hbase_server():
    handle = start_server(port=0)
    yield handle
    handle.stop()


@pytest.fixture(params=["local", "hbase"])
def store(request, tmp_path):
    if request.param == "local":
        s = LocalStore(tmp_path / "var" / "representatives.sqlite3")
    else:
        server = request.getfixturevalue("hbase_server")
        s = HBaseStore(hbase_url(server.port))
    yield s
    s.close()


# ---------------------------------------------------------------------------
# Both stores
# ---------------------------------------------------------------------------


def test_is_a_representative_store(store):
    assert isinstance(store, RepresentativeStore)


def test_put_get_overwrite(store):
    assert store.get(doc_id(1)) is None
    store.put(doc_id(1), make_row(1))
    assert store.get(doc_id(1)) == expected(make_row(1))
    got = store.get(doc_id(1))
    assert set(got) == set(ALL_KEYS)
    assert got["hotness"] == 11.5 and got["clusterSize"] == 3 and got["version"] == 0

    # whole-row replace: fields now None or missing are gone, not kept
    new = make_row(7, media=None, publishedAt=None, version=3)
    del new["clusterSize"]
    store.put(doc_id(1), new)
    got = store.get(doc_id(1))
    assert got == expected(new)
    assert got["media"] is None and got["clusterSize"] is None and got["version"] == 3
    assert store.get(doc_id(2)) is None


def test_put_many_if_newer_writes_only_newer_rows_and_delete_many_removes(store):
    a, b, c = doc_id(30), doc_id(31), doc_id(32)
    store.put_if_newer(a, make_row(1, title="a5"), 5)
    written = store.put_many_if_newer([(a, make_row(2, title="a4"), 4),
                                       (b, make_row(3, title="b1"), 1),
                                       (c, make_row(4, title="c2"), 2)])
    assert written == 2
    assert store.get(a)["title"] == "a5"
    assert store.get(b)["title"] == "b1" and store.get(c)["version"] == 2
    store.delete_many([b, c, doc_id(33)])
    assert store.get(b) is None and store.get(c) is None and store.get(a) is not None


def test_put_if_newer_keeps_the_newer(store):
    d = doc_id(3)
    assert store.put_if_newer(d, make_row(1, title="v5"), 5) is True
    assert store.put_if_newer(d, make_row(2, title="v4"), 4) is False  # older: ignored
    assert store.put_if_newer(d, make_row(3, title="v5 again"), 5) is False  # equal: ignored
    got = store.get(d)
    assert got["title"] == "v5" and got["version"] == 5
    assert store.put_if_newer(d, make_row(4, title="v9"), 9) is True
    assert store.get(d) == expected(make_row(4, title="v9"), version=9)
    # the version argument wins over a version inside the row
    assert store.put_if_newer(d, make_row(5, version=100), 10) is True
    assert store.get(d)["version"] == 10
    # put() is unconditional
    store.put(d, make_row(6, version=1))
    assert store.get(d)["version"] == 1


def test_delete(store):
    store.put(doc_id(4), make_row(4))
    store.put(doc_id(5), make_row(5))
    store.delete(doc_id(4))
    assert store.get(doc_id(4)) is None
    assert store.get(doc_id(5)) == expected(make_row(5))
    store.delete(doc_id(4))  # absent: no error
    store.delete(doc_id(999))
    assert [d for d, _ in store.scan()] == [doc_id(5)]
    # a deleted docId can be written again, at any version
    assert store.put_if_newer(doc_id(4), make_row(8), 1) is True
    assert store.get(doc_id(4))["nid"] == "nid-8"


def test_scan_order_and_paging(store, request):
    assert list(store.scan()) == []
    n = 257
    ids = [doc_id(i) for i in range(n)]
    order = list(range(n))
    random.Random(7).shuffle(order)
    for i in order:
        store.put(ids[i], make_row(i, version=i))
    server = request.getfixturevalue("hbase_server") if isinstance(store, HBaseStore) else None
    opened = server.backend.calls["scannerOpenWithScan"] if server else 0

    got = list(store.scan(batch_size=100))

    assert [d for d, _ in got] == sorted(ids)
    by_id = dict(got)
    assert all(by_id[ids[i]] == expected(make_row(i, version=i)) for i in range(n))
    if server:  # 3 pages of at most 100 rows, each its own short scanner
        assert server.backend.calls["scannerOpenWithScan"] - opened == 3
    # a batch size dividing the count exactly, and batch_size=1
    assert [d for d, _ in store.scan(batch_size=257)] == sorted(ids)
    assert len(list(store.scan(batch_size=1))) == n
    # rows deleted and added while paging do not break it
    it = store.scan(batch_size=50)
    first = [next(it) for _ in range(60)]
    store.delete(sorted(ids)[-1])
    rest = list(it)
    assert len(first) + len(rest) == n - 1
    with pytest.raises(ValueError):
        list(store.scan(batch_size=0))


def test_scan_orders_by_utf8_bytes(store):
    keys = ["b", "a", "é", "中文", "😀", "z-1", "Z"]
    for k in keys:
        store.put(k, make_row(0))
    assert [k for k, _ in store.scan(batch_size=2)] == sorted(keys, key=lambda k: k.encode("utf-8"))


def test_unicode_and_html_round_trip_exactly(store):
    row = make_row(
        1,
        title="央行：下调存款准备金率0.5个百分点 <b>快讯</b> &amp; “引号” 😀",
        content=(
            '<div class="article"><p>第一段&nbsp;内容&lt;不是标签&gt;</p>\r\n'
            "<script>alert('x')</script>\t制表符\n"
            "零宽\u200b字符、全角ＡＢＣ、NUL\x00结束、\u2028行分隔</div>" * 50
        ),
        media="人民日报 · 客户端",
        url="https://例子.中国/新闻?id=1&lang=zh#段落",
        nid="新华-0001",
    )
    d = "cdd71f57317390e7-ad7b2a053b6e4176"
    store.put(d, row)
    assert store.get(d) == expected(row)
    assert dict(store.scan())[d] == expected(row)
    big = make_row(2, content="长" * 300_000)  # ~900 KB of UTF-8
    store.put(d, big)
    assert store.get(d)["content"] == big["content"]


def test_values_are_validated_and_coerced(store):
    with pytest.raises(ValueError, match="unknown"):
        store.put(doc_id(1), {**make_row(1), "docId": "x"})
    with pytest.raises(ValueError):
        store.put(doc_id(1), make_row(1, hotness=float("nan")))
    with pytest.raises(TypeError):
        store.put(doc_id(1), make_row(1, clusterSize="3"))
    with pytest.raises(ValueError):
        store.put("", make_row(1))
    published = dt.datetime(2024, 3, 1, 8, 0, tzinfo=dt.timezone(dt.timedelta(hours=8)))
    store.put(doc_id(1), make_row(1, hotness=7, publishedAt=published))
    got = store.get(doc_id(1))
    assert got["hotness"] == 7.0 and isinstance(got["hotness"], float)
    assert got["publishedAt"] == "2024-03-01T08:00:00+08:00"
    store.put(doc_id(2), {"nid": "only-nid"})
    assert store.get(doc_id(2)) == {**dict.fromkeys(ALL_KEYS), "nid": "only-nid", "version": 0}
    store.put(doc_id(3), make_row(3, title="", media=""))  # empty is not None
    got = store.get(doc_id(3))
    assert got["title"] == "" and got["media"] == ""


def test_many_threads_share_one_store(store):
    def work(t):
        for i in range(25):
            store.put_if_newer(doc_id(t * 100 + i), make_row(i), t + 1)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(list(store.scan(batch_size=40))) == 150


# ---------------------------------------------------------------------------
# Table / file created if missing
# ---------------------------------------------------------------------------


def test_local_file_and_table_created_if_missing(tmp_path):
    path = tmp_path / "deep" / "var" / "representatives.sqlite3"
    s = LocalStore(path)
    assert not path.exists()  # nothing happens before the first call
    s.ping()
    assert path.exists()
    import sqlite3

    with sqlite3.connect(path) as c:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        c.execute("DROP TABLE representatives")  # behind the store's back
    s.put(doc_id(1), make_row(1))
    assert s.get(doc_id(1)) == expected(make_row(1))
    s.close()


def test_local_store_unusable_path_is_unavailable(tmp_path):
    (tmp_path / "a-file").write_text("not a directory")
    s = LocalStore(tmp_path / "a-file" / "representatives.sqlite3")
    with pytest.raises(StoreUnavailable):
        s.ping()
    with pytest.raises(StoreUnavailable):
        s.get(doc_id(1))


def test_hbase_table_created_if_missing(hbase_server):
    table = "dedup_docs_" + uuid.uuid4().hex[:8]
    conn = happybase.Connection("127.0.0.1", hbase_server.port, timeout=2000)
    assert table.encode() not in conn.tables()
    s = HBaseStore(hbase_url(hbase_server.port, table))
    assert table.encode() not in conn.tables()  # nothing happens before the first call
    s.ping()
    assert table.encode() in conn.tables()
    families = conn.table(table).families()
    assert set(families) == {b"d", b"m"}
    assert families[b"d"]["max_versions"] == HBASE_FAMILIES["d"]["max_versions"] == 1
    # dropped while the store runs: created again on the next call
    conn.delete_table(table, disable=True)
    s.put(doc_id(1), make_row(1))
    assert s.get(doc_id(1)) == expected(make_row(1))
    # the layout a downstream reader sees: plain UTF-8 strings, row key = docId
    raw = conn.table(table).row(doc_id(1).encode())
    assert raw[b"d:title"].decode() == "标题 1"
    assert raw[b"d:hotness"] == b"11.5" and raw[b"d:clusterSize"] == b"3"
    assert raw[b"m:version"] == b"0"
    # a second store on the same (existing) table works too
    s2 = HBaseStore(hbase_url(hbase_server.port, table))
    assert s2.get(doc_id(1)) == expected(make_row(1))
    s.close()
    s2.close()
    conn.close()


# ---------------------------------------------------------------------------
# URLs, import, processes
# ---------------------------------------------------------------------------


def test_store_from_url(tmp_path):
    local = store_from_url(None, tmp_path / "r.sqlite3")
    assert isinstance(local, LocalStore) and local.path == tmp_path / "r.sqlite3"
    assert isinstance(store_from_url("", str(tmp_path / "r.sqlite3")), LocalStore)
    hb = store_from_url("hbase://hbase-1.internal:9091?table=docs&pool=8&timeout=1500", "x")
    assert isinstance(hb, HBaseStore)
    assert (hb.host, hb.port, hb.table_name, hb.pool_size, hb.timeout_ms) == (
        "hbase-1.internal",
        9091,
        "docs",
        8,
        1500,
    )
    s = parse_hbase_url("hbase://127.0.0.1")
    assert (s["port"], s["table"], s["pool_size"], s["timeout_ms"]) == (
        9090,
        "dedup_docs",
        4,
        5000,
    )
    with pytest.raises(ValueError):
        store_from_url("mysql://x", "y")
    with pytest.raises(ValueError, match="unknown"):
        store_from_url("hbase://h:1?tabel=x", "y")


def test_no_connection_until_first_call_and_down_is_unavailable():
    port = free_port()  # nothing listens here
    t0 = time.monotonic()
    s = HBaseStore(hbase_url(port, timeout=1000))
    assert time.monotonic() - t0 < 0.1
    for call in (
        s.ping,
        lambda: s.get("x"),
        lambda: s.put("x", make_row(1)),
        lambda: list(s.scan()),
    ):
        with pytest.raises(StoreUnavailable):
            call()
    # the server comes up later on that port: the same store object works
    server = start_server(port=port)
    try:
        s.put("x", make_row(1))
        assert s.get("x") == expected(make_row(1))
    finally:
        s.close()
        server.stop()


def test_module_imports_without_django_settings_or_connections():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    code = (
        "import sys, articles.representatives.stores as r\n"
        "assert 'thriftpy2' not in sys.modules and 'happybase' not in sys.modules\n"
        "s = r.store_from_url('hbase://127.0.0.1:1', 'var/x.sqlite3')\n"
        "print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=20
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_local_store_is_safe_across_processes(tmp_path):
    path = tmp_path / "representatives.sqlite3"
    code = textwrap.dedent(
        """
        import sys
        from articles.representatives.stores import LocalStore
        w = int(sys.argv[1]); s = LocalStore(sys.argv[2])
        for v in range(w, 60, 3):          # the three writers interleave versions
            for d in range(10):
                s.put_if_newer(f"doc-{d}", {"nid": f"w{w}-v{v}", "title": "标题"}, v)
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(w), str(path)], cwd=ROOT)
        for w in range(3)
    ]
    assert [p.wait(timeout=25) for p in procs] == [0, 0, 0]
    s = LocalStore(path)
    rows = dict(s.scan())
    assert len(rows) == 10
    assert all(r["version"] == 59 and r["nid"] == "w2-v59" for r in rows.values())


# ---------------------------------------------------------------------------
# HBase outages
# ---------------------------------------------------------------------------


def test_thread_server_stop_closes_socket_and_restart_on_same_port():
    server = start_server(port=0)
    s = HBaseStore(hbase_url(server.port, timeout=1000))
    s.put(doc_id(1), make_row(1))
    server.stop()
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection(("127.0.0.1", server.port), timeout=1),
    ):
        pass  # the listening socket is really closed
    t0 = time.monotonic()
    with pytest.raises(StoreUnavailable):
        s.get(doc_id(1))
    with pytest.raises(StoreUnavailable):
        s.put(doc_id(2), make_row(2))
    assert time.monotonic() - t0 < 3
    again = start_server(port=server.port, backend=server.backend)  # same tables
    try:
        assert s.get(doc_id(1)) == expected(make_row(1))
        s.put(doc_id(2), make_row(2))
        assert [d for d, _ in s.scan()] == sorted([doc_id(1), doc_id(2)])
    finally:
        s.close()
        again.stop()


@pytest.mark.drill
def test_server_process_killed_and_restarted_on_same_port(tmp_path):
    with spawn_server_process(port=0, data_path=tmp_path / "hbase.log") as server:
        port = server.port
        s = HBaseStore(hbase_url(port, table="dedup_docs", timeout=1000, pool=4))
        s.put(doc_id(1), make_row(1))
        assert s.put_if_newer(doc_id(2), make_row(2), 5)

        server.kill()  # SIGKILL: the Thrift server is gone
        for call in (
            s.ping,
            lambda: s.get(doc_id(1)),
            lambda: s.put(doc_id(3), make_row(3)),
            lambda: s.put_if_newer(doc_id(2), make_row(2), 6),
            lambda: s.delete(doc_id(1)),
            lambda: list(s.scan()),
        ):
            t0 = time.monotonic()
            with pytest.raises(StoreUnavailable):
                call()
            assert time.monotonic() - t0 < 2.5

        server.start()  # same port, same data file
        assert server.port == port
        assert s.get(doc_id(1)) == expected(make_row(1))
        assert s.put_if_newer(doc_id(2), make_row(2), 4) is False
        assert s.put_if_newer(doc_id(2), make_row(9), 6) is True
        s.put(doc_id(3), make_row(3))
        assert [d for d, _ in s.scan()] == sorted(doc_id(i) for i in (1, 2, 3))
        s.close()


@pytest.mark.drill
def test_idle_pooled_connection_survives_a_server_restart(tmp_path):
    with spawn_server_process(port=0, data_path=tmp_path / "hbase.log") as server:
        s = HBaseStore(hbase_url(server.port, timeout=1000, pool=1))
        s.put(doc_id(1), make_row(1))  # the one pooled connection is now open
        server.kill()
        server.start()
        # the stale connection fails once and is replaced: the caller sees no error
        assert s.get(doc_id(1)) == expected(make_row(1))
        s.close()


@pytest.mark.drill
def test_hung_server_times_out_instead_of_hanging(tmp_path):
    with spawn_server_process(port=0) as server:
        s = HBaseStore(hbase_url(server.port, timeout=1000))
        s.put(doc_id(1), make_row(1))
        server.pause()  # SIGSTOP: connections are accepted, nothing answers
        try:
            t0 = time.monotonic()
            with pytest.raises(StoreUnavailable):
                s.get(doc_id(1))
            elapsed = time.monotonic() - t0
            assert 0.9 < elapsed < 3, elapsed
        finally:
            server.resume()
        assert s.get(doc_id(1)) == expected(make_row(1))
        s.close()


# ---------------------------------------------------------------------------
# The test server itself: the raw Thrift calls happybase does not make
# ---------------------------------------------------------------------------


def test_test_server_raw_thrift_calls(hbase_server):
    from Hbase_thrift import IllegalArgument, Mutation
    from Hbase_thrift import IOError as HbaseIOError

    conn = happybase.Connection("127.0.0.1", hbase_server.port, timeout=2000)
    name = ("raw_" + uuid.uuid4().hex[:8]).encode()
    conn.create_table(name, {"d": {}, "m": {}})
    c = conn.client
    c.mutateRow(
        name, b"r2", [Mutation(column=b"d:a", value=b"2"), Mutation(column=b"m:v", value=b"x")], {}
    )
    c.mutateRow(name, b"r1", [Mutation(column=b"d:a", value=b"1")], {})
    c.mutateRow(name, b"r3", [Mutation(column=b"d:a", value=b"3")], {})
    assert [r.row for r in c.getRow(name, b"r2", {})] == [b"r2"]
    assert c.getRow(name, b"nope", {}) == []
    assert [r.row for r in c.getRows(name, [b"r3", b"r1", b"zz"], {})] == [b"r3", b"r1"]
    # delete one column, keep the rest
    c.mutateRow(name, b"r2", [Mutation(isDelete=True, column=b"m:v")], {})
    assert set(c.getRow(name, b"r2", {})[0].columns) == {b"d:a"}
    sid = c.scannerOpen(name, b"r2", [b"d"], {})
    assert [r.row for r in c.scannerGet(sid)] == [b"r2"]
    assert [r.row for r in c.scannerGet(sid)] == [b"r3"]
    assert c.scannerGet(sid) == []
    c.scannerClose(sid)
    with pytest.raises(IllegalArgument):
        c.scannerGet(sid)
    c.deleteAllRow(name, b"r1", {})
    assert c.getRow(name, b"r1", {}) == []
    with pytest.raises(HbaseIOError):  # unknown column family
        c.mutateRow(name, b"r9", [Mutation(column=b"x:a", value=b"1")], {})
    with pytest.raises(HbaseIOError, match="TableNotFound"):
        c.getRow(b"no_such_table", b"r1", {})
    assert c.atomicIncrement(name, b"cnt", b"m:n", 5) == 5
    assert c.atomicIncrement(name, b"cnt", b"m:n", -2) == 3
    conn.close()
