"""A production-style dedupsite on 127.0.0.1 whose servers a drill may kill and restart.

Dedicated MariaDB and Redis servers (started by scripts/testenv.py's
machinery, never the shared ones), gunicorn with `web_workers` processes and
real `manage.py dedup_worker` processes (what `make worker` runs), all
configured only by the environment, as in production (DEBUG off). Used by
the slow drills and by bench/load.py.

    stack = Stack(workdir).start()
    stack.session().post(f"{stack.base_url}/api/v1/articles", json=...)  # the real API
    stack.kill_redis(); stack.start_redis()
    stack.kill_mariadb(); stack.start_mariadb()
    worker = stack.start_worker(); stack.kill_worker(worker)
    stack.stop()

Restarting a server reuses its exact command line (port, data directory), so
clients reconnect to the same address; Redis keeps nothing (no persistence),
MariaDB keeps its data directory and recovers it as after a crash.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import redis
import requests

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
QUEUES = ("ingest", "push", "default")


def load_testenv() -> ModuleType:
    """scripts/testenv.py as a module (scripts/ is not a package)."""
    name = "dedupsite_testenv"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "testenv.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cmdline(pid: int) -> list[str]:
    raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    return [part.decode() for part in raw.split(b"\0") if part]


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children first found, then theirs), from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@dataclass
class Worker:
    name: str
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


@dataclass
class Stack:
    workdir: Path
    web_workers: int = 2
    #: run gunicorn as shipped (dedupsite/gunicorn.conf.py: loopback, gthread 2 x 8)
    #: instead of `web_workers` sync workers with a long timeout
    shipped_web: bool = False
    hbase_url: str = ""
    rate_limit: int = 6000  # the API key's requests per minute (create_api_key's default)
    #: gunicorn writes an access log, `access.log` in the workdir: "<pid> METHOD path status"
    #: per request, which process served what
    access_log: bool = False
    extra_env: dict[str, str] = field(default_factory=dict)
    servers: Any = None  # testenv.TestEnv
    database_url: str = ""
    redis_url: str = ""
    api_key: str = ""
    base_url: str = ""
    web: subprocess.Popen[bytes] | None = None
    health_polls: int = 0  # start-up health checks gunicorn may have served
    workers: list[Worker] = field(default_factory=list)
    _argv: dict[str, list[str]] = field(default_factory=dict)
    _names: itertools.count = field(default_factory=lambda: itertools.count(1))

    # ---- life cycle ------------------------------------------------------------------------

    def start(self) -> Stack:
        self.workdir.mkdir(parents=True, exist_ok=True)
        testenv = load_testenv()
        self.servers = testenv.TestEnv()
        self.servers.start({})  # both: never the shared servers
        self.database_url = self.servers.exports["DATABASE_URL"]
        self.redis_url = self.servers.exports["REDIS_URL"]
        mariadb = self._server("mariadb")
        # The first start created the user and the database; a restart must not.
        self._argv["mariadb"] = [a for a in cmdline(mariadb.pid)
                                 if not a.startswith("--init-file=")]
        redis_srv = self._server("redis")
        # redis-server rewrites its command line (/proc shows "redis-server host:port"):
        # the options of scripts/testenv.py, spelled out again.
        self._argv["redis"] = [
            testenv.find_program("redis-server"), "--port", str(redis_srv.port),
            "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", str(Path(redis_srv.log).parent), "--daemonize", "no", "--logfile", "",
            "--databases", "16",
        ]
        self.manage("migrate", "--noinput")
        out = self.manage("create_api_key", "drills", "--rate-limit", str(self.rate_limit))
        self.api_key = out.strip().splitlines()[-1]
        self.start_web()
        return self

    def stop(self) -> None:
        for worker in list(self.workers):
            self.kill_worker(worker)
        self.stop_web()
        if self.servers is not None:
            self.servers.stop()
            self.servers = None

    def environ(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
        env.update({
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "HBASE_URL": self.hbase_url,
            "DJANGO_SETTINGS_MODULE": "dedupsite.settings",
            "DEBUG": "false",
            "SECRET_KEY": "drills-not-a-secret-" + "x" * 40,
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "false",
            "LOG_LEVEL": "WARNING",
            "DEDUPSITE_VAR_DIR": str(self.workdir),  # local representative store, static
            "PYTHONUNBUFFERED": "1",
        })
        env.update(self.extra_env)
        env.update(extra)
        return env

    def manage(self, *args: str, timeout: float = 300) -> str:
        done = subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=self.environ(),
                              capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
        return done.stdout

    def python(self, code: str, timeout: float = 300) -> str:
        """Run `code` in a Django process of this stack (e.g. an operator's shell)."""
        return self.manage("shell", "-c", code, timeout=timeout)

    # ---- web ---------------------------------------------------------------------------------

    def start_web(self) -> None:
        port = free_port()
        self.base_url = f"http://127.0.0.1:{port}"
        log = open(self.workdir / "web.log", "ab")  # noqa: SIM115 (lives as long as the server)
        argv = [str(ROOT / ".venv" / "bin" / "gunicorn"), "dedupsite.wsgi"]
        if self.shipped_web:
            argv += ["-c", "dedupsite/gunicorn.conf.py", "--log-level", "warning",
                     "--access-logfile", "/dev/null"]
        else:
            argv += ["--bind", f"127.0.0.1:{port}", "--workers", str(self.web_workers),
                     "--timeout", "120", "--graceful-timeout", "10", "--log-level", "warning"]
        if self.access_log:
            argv += ["--access-logfile", str(self.workdir / "access.log"),
                     "--access-logformat", "%(p)s %(m)s %(U)s %(s)s"]
        self.web = subprocess.Popen(
            argv, cwd=ROOT, env=self.environ(PORT=str(port)), stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            # counted when it reached gunicorn: a poll that timed out on a busy machine
            # may still have been served (a refused connection was not)
            with contextlib.suppress(requests.RequestException):
                try:
                    requests.get(f"{self.base_url}/api/v1/health", timeout=5)
                    self.health_polls += 1
                    return
                except requests.ReadTimeout:
                    self.health_polls += 1
                    raise
            if self.web.poll() is not None:
                raise RuntimeError(f"gunicorn exited; see {self.workdir / 'web.log'}")
            time.sleep(0.2)
        raise RuntimeError("gunicorn did not answer within 120 s")

    def served_by_process(self, method: str, path: str) -> dict[str, int]:
        """From the access log (`access_log=True`): requests to `path` by serving pid."""
        counts: dict[str, int] = {}
        for line in (self.workdir / "access.log").read_text().splitlines():
            pid, seen_method, seen_path, _status = line.split()
            if (seen_method, seen_path) == (method, path):
                counts[pid] = counts.get(pid, 0) + 1
        return counts

    def stop_web(self) -> None:
        if self.web is not None:
            self._stop_process(self.web, signal.SIGTERM, 15)
            self.web = None

    def session(self) -> requests.Session:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {self.api_key}"
        return session

    # ---- workers -----------------------------------------------------------------------------

    def start_worker(self, command: str = "dedup_worker", *args: str) -> Worker:
        """A worker as production runs it: `manage.py dedup_worker` (`make worker`: an RQ
        SimpleWorker on every queue with the scheduler and the recovery watchdog).
        `start_worker("rqworker", ...)` runs django-rq's plain command instead."""
        label = f"{command}-{os.getpid()}-{next(self._names)}"
        argv = [PY, "manage.py", command, *args]
        log_path = self.workdir / f"worker-{label}.log"
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(argv, cwd=ROOT, env=self.environ(), stdout=log,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        worker = Worker(label, proc, log_path)
        self.workers.append(worker)
        return worker

    def kill_worker(self, worker: Worker, sig: int = signal.SIGKILL) -> list[int]:
        """Send `sig` to the worker and everything below it (scheduler, work horse)."""
        pids = [worker.proc.pid, *descendants(worker.proc.pid)] if worker.alive else []
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        if sig == signal.SIGKILL:
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.proc.wait(timeout=10)
            if worker in self.workers:
                self.workers.remove(worker)
        return pids

    def stop_worker(self, worker: Worker) -> None:
        """Warm shutdown (SIGTERM: the current job finishes), SIGKILL after 60 s."""
        self._stop_process(worker.proc, signal.SIGTERM, 60)
        if worker.alive:
            self.kill_worker(worker)
        if worker in self.workers:
            self.workers.remove(worker)

    @staticmethod
    def _stop_process(proc: subprocess.Popen[bytes], sig: int, grace: float) -> None:
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    # ---- servers -----------------------------------------------------------------------------

    def _server(self, name: str) -> Any:
        return next(s for s in self.servers.servers if s.name == name)

    def kill_redis(self) -> None:
        """SIGKILL: Redis keeps nothing (no persistence), as after a crash or a failover."""
        srv = self._server("redis")
        srv.proc.kill()
        srv.proc.wait(timeout=10)

    def start_redis(self, timeout: float = 30) -> float:
        """Start Redis again, empty, on the same port; return seconds until it answers."""
        testenv = load_testenv()
        srv = self._server("redis")
        started = time.monotonic()
        srv.proc = self.servers._popen(self._argv["redis"], srv.log)
        srv.pid = srv.proc.pid
        self._wait(lambda: testenv.redis_ready(srv.port), timeout, "redis")
        return time.monotonic() - started

    def kill_mariadb(self, sig: int = signal.SIGKILL) -> None:
        """SIGKILL: a crash (InnoDB recovers at the next start); SIGTERM: a clean stop."""
        srv = self._server("mariadb")
        srv.proc.send_signal(sig)
        srv.proc.wait(timeout=60)

    def start_mariadb(self, timeout: float = 120) -> float:
        """Start MariaDB again on the same data directory and port; seconds until it answers."""
        testenv = load_testenv()
        srv = self._server("mariadb")
        home = Path(srv.log).parent
        mysql = self.servers._mysql_account()
        started = time.monotonic()
        srv.proc = self.servers._popen(self._argv["mariadb"], home / "mariadbd.out", mysql,
                                       {**os.environ, "TMPDIR": str(home / "tmp")})
        srv.pid = srv.proc.pid
        self._wait(lambda: testenv.mysql_handshake_ready(srv.port), timeout, "mariadb")
        return time.monotonic() - started

    @staticmethod
    def _wait(ready: Any, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not come back within {timeout} s")
            time.sleep(0.05)

    # ---- direct access for checks ------------------------------------------------------------

    def redis(self) -> redis.Redis:
        return redis.Redis.from_url(self.redis_url, socket_timeout=10)

    def sql(self, query: str, params: tuple[Any, ...] = (), *,
            before: tuple[str, ...] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (after `before`) on the stack's database, in a fresh connection."""
        import MySQLdb

        url = urlsplit(self.database_url)
        conn = MySQLdb.connect(host=url.hostname, port=url.port, user=url.username,
                               password=url.password, database=url.path.lstrip("/"),
                               charset="utf8mb4", connect_timeout=5)
        try:
            cursor = conn.cursor()
            for statement in before:
                cursor.execute(statement)
            cursor.execute(query, params)
            rows = list(cursor.fetchall())
            conn.commit()
            return rows
        finally:
            conn.close()

    def scalar(self, query: str, params: tuple[Any, ...] = ()) -> Any:
        rows = self.sql(query, params)
        return rows[0][0] if rows else None

    def reset_data(self) -> None:
        """Empty the articles and docs (keeps the API key and settings) and Redis."""
        tables = ("articles_article", "articles_doc", "articles_representativeoutbox",
                  "articles_auditentry", "articles_editorlink", "articles_indexstate",
                  "articles_pendingfeatures", "articles_change", "articles_webhook")
        self.sql("SET FOREIGN_KEY_CHECKS = 1", before=(
            "SET FOREIGN_KEY_CHECKS = 0", *(f"TRUNCATE TABLE {table}" for table in tables)))
        self.redis().flushall()

    def clear(self) -> None:
        """No workers, no articles, an empty Redis: the start of a drill."""
        for worker in list(self.workers):
            self.kill_worker(worker)
        self.reset_data()

    def queue_depth(self) -> int:
        client = self.redis()
        return sum(int(client.llen(f"rq:queue:{name}")) for name in QUEUES)

    def status_counts(self) -> dict[str, int]:
        return dict(self.sql("SELECT status, COUNT(*) FROM articles_article GROUP BY status"))

    def wait_until_processed(self, expected: int, timeout: float) -> float | None:
        """Seconds until `expected` articles exist and none is queued; None on time-out."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            counts = self.status_counts()
            if sum(counts.values()) >= expected and not counts.get("queued"):
                return time.monotonic() - started
            time.sleep(0.5)
        return None

    def last_processed_at(self) -> float | None:
        """Wall-clock time (epoch) of the latest processed article; MySQL keeps UTC."""
        from datetime import UTC

        value = self.scalar("SELECT MAX(processed_at) FROM articles_article")
        return None if value is None else value.replace(tzinfo=UTC).timestamp()

    def wait_until_outbox_drained(self, timeout: float) -> float | None:
        """Seconds until no representative change is pending; None on time-out."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if not self.scalar("SELECT COUNT(*) FROM articles_representativeoutbox "
                               "WHERE status='pending'"):
                return time.monotonic() - started
            time.sleep(0.5)
        return None

    def consistency(self) -> dict[str, Any]:
        """Invariants between articles and docs, as counts that must be zero."""
        return {
            "articles": self.scalar("SELECT COUNT(*) FROM articles_article"),
            "done": self.scalar("SELECT COUNT(*) FROM articles_article WHERE status='done'"),
            "docs": self.scalar("SELECT COUNT(*) FROM articles_doc WHERE size > 0"),
            # a doc whose size is not its number of done members
            "size_mismatches": self.scalar(
                "SELECT COUNT(*) FROM articles_doc d LEFT JOIN (SELECT doc_id, COUNT(*) n "
                "FROM articles_article WHERE status='done' GROUP BY doc_id) m "
                "ON m.doc_id = d.id WHERE d.size <> COALESCE(m.n, 0)"),
            "done_without_doc": self.scalar(
                "SELECT COUNT(*) FROM articles_article WHERE status='done' AND doc_id IS NULL"),
            "queued": self.scalar("SELECT COUNT(*) FROM articles_article WHERE status='queued'"),
            "failed": self.scalar("SELECT COUNT(*) FROM articles_article WHERE status='failed'"),
            "outbox_pending": self.scalar(
                "SELECT COUNT(*) FROM articles_representativeoutbox WHERE status='pending'"),
        }

    def doc_ids(self) -> dict[str, str | None]:
        return dict(self.sql("SELECT a.nid, d.doc_id FROM articles_article a "
                             "LEFT JOIN articles_doc d ON d.id = a.doc_id"))

    def failed_jobs(self) -> int:
        client = self.redis()
        return sum(int(client.zcard(f"rq:failed:{name}")) for name in QUEUES)
