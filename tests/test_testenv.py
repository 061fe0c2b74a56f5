"""scripts/testenv.py starts a throwaway MariaDB + Redis, runs a command, and cleans up.

Runs without Django: `python -m pytest -p no:django tests/test_testenv.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

TESTENV = Path(__file__).resolve().parent.parent / "scripts" / "testenv.py"
TEMPLATE_PREFIX = "dedupsite-testenv-datadir-"

INNER = r"""
import json, os, sys, time
from urllib.parse import urlsplit

import MySQLdb
import redis

db = urlsplit(os.environ["DATABASE_URL"])
conn = MySQLdb.connect(
    host=db.hostname, port=db.port, user=db.username, passwd=db.password,
    db=db.path.lstrip("/"), charset="utf8mb4",
)
cur = conn.cursor()
cur.execute("CREATE TABLE probe (id INT PRIMARY KEY, title VARCHAR(50))")
cur.execute("INSERT INTO probe VALUES (1, %s)", ("重复新闻 near-duplicate",))
conn.commit()
cur.execute("SELECT title FROM probe WHERE id = 1")
assert cur.fetchone()[0] == "重复新闻 near-duplicate"
# Django's test runner creates and drops test_<name>.
cur.execute("CREATE DATABASE test_dedupsite")
cur.execute("DROP DATABASE test_dedupsite")
conn.close()

r = redis.Redis.from_url(os.environ["REDIS_URL"])
r.set("probe", "值")
assert r.get("probe").decode() == "值"

print(json.dumps({"db": os.environ["DATABASE_URL"], "redis": os.environ["REDIS_URL"]}), flush=True)
if len(sys.argv) > 1:
    time.sleep(float(sys.argv[1]))
"""


@pytest.fixture
def clean_env() -> Iterator[tuple[dict[str, str], Path]]:
    """Environment without DATABASE_URL/REDIS_URL and with a TMPDIR of our own to check."""
    tmp = Path(tempfile.mkdtemp(prefix="testenv-test-"))
    tmp.chmod(0o755)  # as root, mariadbd runs as `mysql` and must get in
    env = {k: v for k, v in os.environ.items()
           if k not in {"DATABASE_URL", "REDIS_URL", "TESTENV_DIR"}}
    env["TMPDIR"] = str(tmp)
    yield env, tmp
    shutil.rmtree(tmp, ignore_errors=True)  # leave nothing behind even when a test fails


def ports_of(line: str) -> tuple[int, int]:
    urls = json.loads(line)
    db, rd = urlsplit(urls["db"]), urlsplit(urls["redis"])
    assert (db.scheme, db.hostname, db.path) == ("mysql", "127.0.0.1", "/dedupsite")
    assert (rd.scheme, rd.hostname, rd.path) == ("redis", "127.0.0.1", "/0")
    assert db.port and rd.port
    assert {db.port, rd.port}.isdisjoint({3306, 6379})  # never the system services
    return db.port, rd.port


def is_listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def leftovers(tmp: Path) -> list[str]:
    """What a run left in TMPDIR, apart from the cached bootstrapped datadir."""
    return sorted(p.name for p in tmp.iterdir() if not p.name.startswith(TEMPLATE_PREFIX))


def test_run_starts_both_servers_and_stops_them(clean_env):
    env, tmp = clean_env
    # 1st run bootstraps the datadir with mariadb-install-db, 2nd copies the cached one.
    for run in ("bootstrap", "cached datadir"):
        t0 = time.monotonic()
        proc = subprocess.run(
            [sys.executable, str(TESTENV), "run", "--", sys.executable, "-c", INNER],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        elapsed = time.monotonic() - t0
        assert proc.returncode == 0, f"{run}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        db_port, redis_port = ports_of(proc.stdout.strip().splitlines()[-1])
        assert f"mariadb on 127.0.0.1:{db_port}" in proc.stderr
        assert f"redis on 127.0.0.1:{redis_port}" in proc.stderr
        assert not is_listening(db_port)
        assert not is_listening(redis_port)
        assert leftovers(tmp) == []  # temp dir removed
        assert len(list(tmp.glob(f"{TEMPLATE_PREFIX}*"))) == 1
        # both servers stopped on SIGTERM, not after the stop timeout's SIGKILL
        assert "ignored SIGTERM" not in proc.stderr, proc.stderr
        # seconds on a quiet machine (mariadb-install-db alone takes 0.6-4 s with load);
        # the bound catches a run that waits on something, not a busy CI machine
        assert elapsed < 45, f"{run}: start + run + stop took {elapsed:.1f}s"


def test_sigterm_to_wrapper_stops_everything(clean_env):
    env, tmp = clean_env
    proc = subprocess.Popen(
        [sys.executable, str(TESTENV), "run", "--", sys.executable, "-c", INNER, "60"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once both servers work
        db_port, redis_port = ports_of(line)
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rc == 128 + signal.SIGTERM, proc.stderr.read() if proc.stderr else ""
    assert not is_listening(db_port)
    assert not is_listening(redis_port)
    assert leftovers(tmp) == []


def test_existing_urls_are_passed_through_and_exit_code_kept(clean_env):
    env, tmp = clean_env
    env = {**env, "DATABASE_URL": "mysql://u:p@127.0.0.1:1/x", "REDIS_URL": "redis://127.0.0.1:1/0"}
    proc = subprocess.run(
        [
            sys.executable,
            str(TESTENV),
            "run",
            "--",
            sys.executable,
            "-c",
            "import os, sys; e = os.environ; print(e['DATABASE_URL'], e['REDIS_URL']); sys.exit(7)",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 7, proc.stderr
    assert proc.stdout.split() == ["mysql://u:p@127.0.0.1:1/x", "redis://127.0.0.1:1/0"]
    assert list(tmp.iterdir()) == []


INNER_CLUSTER = r"""
import json, os

from redis.cluster import ClusterNode, RedisCluster

url = os.environ["INDEX_REDIS_CLUSTER_URL"]
assert url.startswith("redis+cluster://")
nodes = [ClusterNode(h, int(p)) for h, p in
         (part.rsplit(":", 1) for part in url.removeprefix("redis+cluster://").split(","))]
client = RedisCluster(startup_nodes=nodes)
primaries = client.get_primaries()
for n in range(300):
    client.set(f"probe:{n}", n)
holding = [client.get_redis_connection(node).dbsize() for node in primaries]
print(json.dumps({"ports": [node.port for node in primaries], "holding": holding,
                  "state": client.cluster_info()["cluster_state"]}), flush=True)
"""


def test_a_cluster_is_started_only_when_asked_for_and_stopped(clean_env):
    env, tmp = clean_env
    # the shared servers are given: only the cluster is started
    env = {**env, "DATABASE_URL": "mysql://u:p@127.0.0.1:1/x", "REDIS_URL": "redis://127.0.0.1:1/0"}
    plain = subprocess.run(
        [sys.executable, str(TESTENV), "run", "--", sys.executable, "-c",
         "import os; print(os.environ.get('INDEX_REDIS_CLUSTER_URL', 'none'))"],
        env=env, capture_output=True, text=True, timeout=30, check=False,
    )
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.strip() == "none"  # not asked for: no cluster
    proc = subprocess.run(
        [sys.executable, str(TESTENV), "run", "--", sys.executable, "-c", INNER_CLUSTER],
        env={**env, "TESTENV_REDIS_CLUSTER": "1"}, capture_output=True, text=True,
        timeout=60, check=False,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["state"] == "ok"
    assert len(report["ports"]) == 3
    assert all(n > 30 for n in report["holding"])  # 300 keys spread over the three
    assert sum(report["holding"]) == 300
    assert "3-node Redis Cluster" in proc.stderr
    for port in report["ports"]:
        assert not is_listening(port)
    assert leftovers(tmp) == []


def read_back(host: str, port: int, count: int, within_s: float = 30.0) -> list:
    """The probes' values read through a new cluster client. On a machine running make
    test's passes side by side, the other nodes may take a while to see the restarted
    one again (CLUSTERDOWN, a refused or reset connection): such errors are retried
    until ``within_s``; the values read are returned as they are."""
    from redis.cluster import RedisCluster
    from redis.exceptions import RedisError

    deadline = time.monotonic() + within_s
    while True:
        try:
            client = RedisCluster(host=host, port=port)
            return [client.get(f"probe:{n}") for n in range(count)]
        except RedisError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.25)


def test_a_cluster_node_restarted_with_its_append_only_file_keeps_its_keys(clean_env):
    import importlib.util

    from redis.cluster import RedisCluster

    env, tmp = clean_env
    spec = importlib.util.spec_from_file_location("testenv_under_test", TESTENV)
    assert spec is not None and spec.loader is not None
    testenv = importlib.util.module_from_spec(spec)
    sys.modules["testenv_under_test"] = testenv
    spec.loader.exec_module(testenv)
    servers = testenv.TestEnv()
    servers.base = Path(tempfile.mkdtemp(dir=tmp))
    try:
        url = servers.start_redis_cluster(appendonly=True)
        host, port = url.removeprefix("redis+cluster://").split(",")[0].rsplit(":", 1)
        client = RedisCluster(host=host, port=int(port))
        for n in range(100):
            client.set(f"probe:{n}", n)
        node = servers.servers[0]
        kept = client.get_redis_connection(client.get_node(host, node.port)).dbsize()
        assert kept > 0
        node.proc.kill()
        node.proc.wait(timeout=10)
        assert not is_listening(node.port)
        servers.restart(node)
        servers.wait_cluster_ok([s.port for s in servers.servers])
        assert read_back(host, int(port), 100) == [str(n).encode() for n in range(100)]
    finally:
        servers.stop()
    assert not any(is_listening(s.port) for s in servers.servers)


def test_testenv_dir_takes_the_servers_files_instead_of_tmpdir(clean_env):
    env, tmp = clean_env
    elsewhere = Path(tempfile.mkdtemp(prefix="testenv-dir-"))
    elsewhere.chmod(0o755)
    try:
        proc = subprocess.run(
            [sys.executable, str(TESTENV), "run", "--", sys.executable, "-c", INNER],
            env={**env, "TESTENV_DIR": str(elsewhere)}, capture_output=True, text=True,
            timeout=60, check=False)
        assert proc.returncode == 0, proc.stderr
        assert str(elsewhere) in proc.stderr  # "started ... in <dir>"
        assert any(p.name.startswith(TEMPLATE_PREFIX) for p in elsewhere.iterdir())
        assert list(tmp.iterdir()) == []
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)
