#!/usr/bin/env python3
"""Throwaway MariaDB + Redis for the test suite (stdlib only).

Usage:
    python scripts/testenv.py run -- CMD [ARGS...]
        Start what is missing, run CMD with DATABASE_URL / REDIS_URL set, stop and
        delete everything afterwards (also on Ctrl-C / SIGTERM / SIGHUP) and exit
        with CMD's exit code (128+N if CMD died of signal N).
    eval "$(python scripts/testenv.py shell)"
        Start the servers, print `export ...` lines and leave the servers running.
        Their PIDs are kept in a state file ($TESTENV_STATE_FILE, by default
        $TMPDIR/dedupsite-testenv-<uid>.json). Running `shell` again reuses them.
    python scripts/testenv.py stop
        Stop what `shell` started and delete its files.

A server is only started when its variable is unset or empty:
    DATABASE_URL -> mariadbd on a free 127.0.0.1 port, own datadir/socket in a temp dir
                    (under $TMPDIR or /tmp); database `dedupsite`, user dedupsite/dedupsite
                    with ALL PRIVILEGES ON *.* (so Django can create/drop test_dedupsite).
    REDIS_URL    -> redis-server on a free 127.0.0.1 port, no persistence.
    INDEX_REDIS_CLUSTER_URL -> only with TESTENV_REDIS_CLUSTER=1: a Redis Cluster of three
                    `redis-server --cluster-enabled yes` nodes on free ports, joined with
                    `redis-cli --cluster create` (no replicas, no persistence), exported as
                    redis+cluster://127.0.0.1:a,127.0.0.1:b,127.0.0.1:c. The tests that need
                    a cluster start their own through this module when it is unset.
The system services on 3306 / 6379 are never touched.

The first run caches a freshly bootstrapped datadir as $TMPDIR/dedupsite-testenv-datadir-*
(~30 MB, keyed on the mariadbd binary and options); later runs copy it instead of running
mariadb-install-db. A run whose wrapper was SIGKILLed leaves its temp dir behind (its
servers die with it); the next run removes such dirs.

Environment knobs: TESTENV_START_TIMEOUT (seconds, default 30),
TESTENV_STOP_TIMEOUT (seconds before SIGKILL, default 10),
TESTENV_NO_TEMPLATE=1 (always run mariadb-install-db, no datadir cache),
TESTENV_DIR (where the servers' files and the datadir cache go instead of $TMPDIR;
`make test` sets /dev/shm when it exists).
Exit code 1 (with the server log on stderr) when a server cannot be started.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import pwd
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PROG = "testenv"
DB_NAME = "dedupsite"
DB_USER = "dedupsite"
DB_PASSWORD = "dedupsite"
HOST = "127.0.0.1"
SBIN_DIRS = ("/usr/sbin", "/usr/local/sbin", "/sbin", "/usr/bin", "/usr/local/bin")
# AF_UNIX paths are limited to 108 bytes including the NUL.
MAX_SOCKET_PATH = 100
DIR_PREFIX = "dedupsite-testenv-"
OWNER_FILE = "wrapper.pid"
TEMPLATE_PREFIX = "dedupsite-testenv-datadir-"
TEMPLATE_OK = "testenv-template-ok"
TEMPLATE_VERSION = 1  # bump when the bootstrap options change in a way `shared` does not show
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, "") or default)
    except ValueError:
        return default


START_TIMEOUT = env_float("TESTENV_START_TIMEOUT", 30.0)
STOP_TIMEOUT = env_float("TESTENV_STOP_TIMEOUT", 10.0)


class TestEnvError(Exception):
    """A server could not be started; the message is shown to the user."""


class Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def log(msg: str) -> None:
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


def find_program(*names: str) -> str:
    """Find a binary on PATH or in the sbin dirs (not on a normal user's PATH on Debian)."""
    for name in names:
        found = shutil.which(name) or shutil.which(name, path=os.pathsep.join(SBIN_DIRS))
        if found:
            return found
    raise TestEnvError(
        f"cannot find {' or '.join(names)}; run scripts/install-system-deps.sh first"
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def tail(path: Path, lines: int = 60) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no {path.name})"
    return "\n".join(text.splitlines()[-lines:])


def head(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no {path.name})"
    return "\n".join(text.splitlines()[:lines])


def _set_pdeathsig() -> None:
    """preexec_fn: have the kernel SIGTERM the server if this wrapper dies (even by SIGKILL)."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)


def traversable_by_others(path: Path, owner_uid: int) -> bool:
    """Can a process running as owner_uid (not root) reach inside `path`?"""
    for p in (path, *path.parents):
        try:
            st = p.stat()
        except OSError:
            return False
        if st.st_uid != owner_uid and not st.st_mode & stat.S_IXOTH:
            return False
    return True


def copy_tree(src: Path, dst: Path) -> bool:
    """`cp -a` keeps owners (mysql) and is quicker than shutil.copytree."""
    done = subprocess.run(
        ["cp", "-a", str(src), str(dst)],
        stdin=subprocess.DEVNULL, capture_output=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        shutil.rmtree(dst, ignore_errors=True)
    return done.returncode == 0


def pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale_dirs(root: Path) -> None:
    """Remove temp dirs of `run` wrappers that were SIGKILLed (their servers died with them)."""
    for d in root.glob(f"{DIR_PREFIX}*"):
        try:
            pid = int((d / OWNER_FILE).read_text())
            if pid_exists(pid) or time.time() - d.stat().st_mtime < 5:
                continue
        except (OSError, ValueError):
            continue  # not ours, a `shell` dir, or being created right now
        shutil.rmtree(d, ignore_errors=True)


def mysql_handshake_ready(port: int) -> bool:
    """True once mariadbd sends its greeting on TCP, which it does only after --init-file ran."""
    try:
        with socket.create_connection((HOST, port), timeout=1.0) as s:
            s.settimeout(1.0)
            header = s.recv(4)
            if len(header) < 4:
                return False
            payload = s.recv(512)
    except OSError:  # refused, reset, timeout (still running the init file)
        return False
    if payload[:1] == b"\x0a":  # protocol version 10 handshake
        return True
    if payload[:1] == b"\xff":
        raise TestEnvError(f"mariadbd refused the probe: {payload[3:].decode(errors='replace')}")
    return False


def redis_ready(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1.0) as s:
            s.settimeout(1.0)
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def cluster_state_ok(port: int) -> bool:
    """Does the cluster node on ``port`` report ``cluster_state:ok`` (every slot served)?"""
    try:
        with socket.create_connection((HOST, port), timeout=1.0) as s:
            s.settimeout(1.0)
            s.sendall(b"CLUSTER INFO\r\n")
            reply = b""
            while b"cluster_state:" not in reply or not reply.endswith(b"\r\n"):
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
            return b"cluster_state:ok" in reply
    except OSError:
        return False


def cluster_url(ports: list[int]) -> str:
    return "redis+cluster://" + ",".join(f"{HOST}:{port}" for port in ports)


@dataclass
class Server:
    name: str
    port: int
    log: Path
    marker: str  # must appear in /proc/PID/cmdline before `stop` kills a PID from the state file
    proc: subprocess.Popen[bytes] | None = None
    pid: int = 0
    argv: list[str] = field(default_factory=list)  # to start it again (a drill's restart)

    def alive(self) -> bool:
        if self.proc is not None:
            return self.proc.poll() is None
        return pid_matches(self.pid, self.marker)


def pid_matches(pid: int, marker: str) -> bool:
    if pid <= 0:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: fall back to "the PID exists"
        return pid_exists(pid)
    return marker in cmdline


@dataclass
class TestEnv:
    persistent: bool = False  # `shell`: servers outlive this process
    base: Path | None = None
    servers: list[Server] = field(default_factory=list)
    exports: dict[str, str] = field(default_factory=dict)
    signals: int = 0  # signals received after the first one
    stopping: bool = False
    hurry: bool = False  # SIGKILL instead of waiting for a clean shutdown

    # ---- setup -------------------------------------------------------------------------------

    def _mysql_account(self) -> pwd.struct_passwd | None:
        if os.geteuid() != 0:
            return None
        try:
            return pwd.getpwnam("mysql")
        except KeyError:
            raise TestEnvError(
                "running as root but there is no `mysql` user to run mariadbd as; "
                "install mariadb-server (scripts/install-system-deps.sh)"
            ) from None

    def _make_base(self, mysql: pwd.struct_passwd | None) -> Path:
        # TESTENV_DIR (make test sets /dev/shm when there is one: a throwaway database
        # needs no disk, and InnoDB's table files and fsyncs then cost nothing), else
        # $TMPDIR or /tmp
        root = Path(os.environ.get("TESTENV_DIR") or tempfile.gettempdir())
        sock_suffix = len(f"/{DIR_PREFIX}xxxxxxxx/mariadb/mysqld.sock")
        if len(str(root)) + sock_suffix > MAX_SOCKET_PATH:
            root = Path("/tmp")
        if mysql is not None and not traversable_by_others(root, mysql.pw_uid):
            root = Path("/tmp")  # e.g. TMPDIR=/root/tmp: the mysql user could not get in
        sweep_stale_dirs(root)
        base = Path(tempfile.mkdtemp(prefix=DIR_PREFIX, dir=root))
        if not self.persistent:
            (base / OWNER_FILE).write_text(f"{os.getpid()}\n")
        if mysql is not None:
            os.chown(base, mysql.pw_uid, mysql.pw_gid)
        return base

    def _popen(
        self,
        argv: list[str],
        logfile: Path,
        mysql: pwd.struct_passwd | None = None,
        env: dict[str, str] | None = None,
    ) -> subprocess.Popen[bytes]:
        kwargs: dict = {"env": env}
        if mysql is not None:
            kwargs.update(user=mysql.pw_uid, group=mysql.pw_gid, extra_groups=[])
        with open(logfile, "ab") as out:
            return subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a terminal Ctrl-C reaches CMD, not the servers
                preexec_fn=None if self.persistent else _set_pdeathsig,
                close_fds=True,
                **kwargs,
            )

    def start(self, environ: dict[str, str]) -> None:
        t0 = time.monotonic()
        want_db = not environ.get("DATABASE_URL")
        want_redis = not environ.get("REDIS_URL")
        want_cluster = (environ.get("TESTENV_REDIS_CLUSTER", "") not in ("", "0")
                        and not environ.get("INDEX_REDIS_CLUSTER_URL"))
        if not (want_db or want_redis or want_cluster):
            return
        mysql = self._mysql_account() if want_db else None
        self.base = self._make_base(mysql)
        redis = self._spawn_redis() if want_redis else None  # starts while mariadb initialises
        db = self._start_mariadb(mysql) if want_db else None
        if redis is not None:
            self._wait_ready(redis, redis_ready, t0)
            self.exports["REDIS_URL"] = f"redis://{HOST}:{redis.port}/0"
        if want_cluster:
            self.exports["INDEX_REDIS_CLUSTER_URL"] = self.start_redis_cluster()
        if db is not None:
            self.exports["DATABASE_URL"] = (
                f"mysql://{DB_USER}:{DB_PASSWORD}@{HOST}:{db.port}/{DB_NAME}"
            )
        started = ", ".join(
            f"{s.name} on {HOST}:{s.port}" for s in sorted(self.servers, key=lambda s: s.name)
        )
        log(f"started {started} in {time.monotonic() - t0:.1f}s ({self.base})")

    def _spawn_redis(self) -> Server:
        assert self.base is not None
        exe = find_program("redis-server")
        d = self.base / "redis"
        d.mkdir()
        port = free_port()
        srv = Server("redis", port, d / "redis.log", f"{HOST}:{port}")
        argv = [
            exe,
            "--port", str(port),
            "--bind", HOST,
            "--save", "",
            "--appendonly", "no",
            "--dir", str(d),
            "--daemonize", "no",
            "--logfile", "",  # stdout, which goes to redis.log
            "--databases", "16",
        ]  # fmt: skip
        srv.proc = self._popen(argv, srv.log)
        srv.pid = srv.proc.pid
        self.servers.append(srv)
        return srv

    def start_redis_cluster(self, nodes: int = 3, *, appendonly: bool = False,
                            name: str = "redis-cluster") -> str:
        """A Redis Cluster of ``nodes`` primaries (no replicas) on free ports, every slot
        assigned; returns its ``redis+cluster://`` URL. With ``appendonly`` each node keeps
        an AOF in its directory, so a node restarted with :meth:`restart` keeps its data.
        A short node timeout lets a restarted node be taken back within seconds."""
        if self.base is None:
            self.base = self._make_base(None)
        t0 = time.monotonic()
        exe = find_program("redis-server")
        started = []
        for number in range(nodes):
            d = self.base / f"{name}-{number}"
            d.mkdir()
            port = free_port()
            srv = Server(f"{name}-{number}", port, d / "redis.log", f"{HOST}:{port}")
            srv.argv = [
                exe,
                "--port", str(port),
                "--bind", HOST,
                "--cluster-enabled", "yes",
                "--cluster-config-file", str(d / "nodes.conf"),
                # the bus on a free port of its own (the default, port + 10000, may be taken)
                "--cluster-port", str(free_port()),
                "--cluster-node-timeout", "2000",
                "--save", "",
                "--appendonly", "yes" if appendonly else "no",
                # every write in the file before its reply: with everysec, a busy disk
                # lets Redis hold the buffer back up to 2 s, which a SIGKILL then loses
                "--appendfsync", "always",
                "--dir", str(d),
                "--daemonize", "no",
                "--logfile", "",
            ]  # fmt: skip
            srv.proc = self._popen(srv.argv, srv.log)
            srv.pid = srv.proc.pid
            self.servers.append(srv)
            started.append(srv)
        for srv in started:
            self._wait_ready(srv, redis_ready, t0)
        create = subprocess.run(
            [find_program("redis-cli"), "--cluster", "create",
             *(f"{HOST}:{srv.port}" for srv in started),
             "--cluster-replicas", "0", "--cluster-yes"],
            capture_output=True, text=True, timeout=START_TIMEOUT, check=False,
        )  # fmt: skip
        if create.returncode != 0:
            raise TestEnvError(
                f"redis-cli --cluster create failed:\n{create.stdout}{create.stderr}")
        self.wait_cluster_ok([srv.port for srv in started], t0)
        log(f"started a {nodes}-node Redis Cluster in {time.monotonic() - t0:.1f}s")
        return cluster_url([srv.port for srv in started])

    def wait_cluster_ok(self, ports: list[int], t0: float | None = None) -> None:
        """Wait until every node on ``ports`` reports ``cluster_state:ok``."""
        deadline = (t0 if t0 is not None else time.monotonic()) + START_TIMEOUT
        delay = 0.02
        while not all(cluster_state_ok(port) for port in ports):
            if time.monotonic() > deadline:
                raise TestEnvError(f"the Redis Cluster on {ports} did not reach "
                                   f"cluster_state:ok within {START_TIMEOUT:.0f}s")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.2)

    def restart(self, srv: Server) -> None:
        """Start ``srv`` again with its command line (a Redis Cluster node: same port, same
        directory); wait until it answers."""
        if srv.alive():
            raise TestEnvError(f"{srv.name} is still running")
        srv.proc = self._popen(srv.argv, srv.log)
        srv.pid = srv.proc.pid
        self._wait_ready(srv, redis_ready, time.monotonic())

    def _start_mariadb(self, mysql: pwd.struct_passwd | None) -> Server:
        assert self.base is not None
        server_exe = find_program("mariadbd", "mysqld")
        d = self.base / "mariadb"
        data = d / "data"
        (d / "tmp").mkdir(parents=True)
        init_sql = d / "init.sql"
        init_sql.write_text(
            f"CREATE DATABASE IF NOT EXISTS `{DB_NAME}` "
            "CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;\n"
            f"CREATE USER '{DB_USER}'@'%' IDENTIFIED BY '{DB_PASSWORD}';\n"
            f"GRANT ALL PRIVILEGES ON *.* TO '{DB_USER}'@'%' WITH GRANT OPTION;\n"
            f"CREATE USER '{DB_USER}'@'localhost' IDENTIFIED BY '{DB_PASSWORD}';\n"
            f"GRANT ALL PRIVILEGES ON *.* TO '{DB_USER}'@'localhost' WITH GRANT OPTION;\n"
        )
        if mysql is not None:
            for p in (d, d / "tmp", init_sql):
                os.chown(p, mysql.pw_uid, mysql.pw_gid)
        # Options shared by the bootstrap and the server. A small redo log makes
        # mariadb-install-db faster (it writes the whole file).
        shared = [
            f"--tmpdir={d / 'tmp'}",  # not $TMPDIR, which the mysql user may not be able to write
            "--innodb-log-file-size=16M",
            "--innodb-buffer-pool-size=64M",
            "--skip-log-bin",
        ]
        template = self._template_path(server_exe, shared, mysql)
        staging = d / "data.template"
        from_template = self._copy_template(template, data, mysql)
        if not from_template:
            self._install_db(data, d, shared, mysql)
            if template is not None and not template.exists():
                copy_tree(data, staging)  # snapshot before the server and init.sql touch it
        sock = d / "mysqld.sock"
        attempt = 0
        while True:
            port = free_port()
            srv = Server("mariadb", port, d / "error.log", str(data))
            argv = [
                server_exe,
                "--no-defaults",
                f"--datadir={data}",
                f"--socket={sock}",
                f"--pid-file={d / 'mariadbd.pid'}",
                f"--log-error={srv.log}",
                f"--init-file={init_sql}",
                f"--port={port}",
                f"--bind-address={HOST}",
                "--skip-name-resolve",
                "--character-set-server=utf8mb4",
                "--collation-server=utf8mb4_unicode_ci",
                "--innodb-flush-log-at-trx-commit=2",
                "--innodb-doublewrite=0",
                "--skip-performance-schema",
                "--max-connections=200",
                *shared,
            ]
            # As root the server is started directly as `mysql` (rather than with
            # --user=mysql) so that the parent-death signal survives the uid change.
            srv.proc = self._popen(
                argv, d / "mariadbd.out", mysql, {**os.environ, "TMPDIR": str(d / "tmp")}
            )
            srv.pid = srv.proc.pid
            self.servers.append(srv)
            try:
                self._wait_ready(srv, mysql_handshake_ready, time.monotonic())
            except TestEnvError:
                self._terminate(srv)
                self.servers.remove(srv)
                attempt += 1
                if attempt < 3 and "already in use" in tail(srv.log, 20):
                    continue  # the free port was taken before mariadbd could bind it
                if not from_template:
                    raise
                # A bad cached datadir: drop it and bootstrap from scratch.
                log(f"mariadbd failed on the cached datadir {template}; rebuilding it")
                from_template = False
                shutil.rmtree(template, ignore_errors=True)
                shutil.rmtree(data, ignore_errors=True)
                for f in (srv.log, d / "mariadbd.out"):
                    f.unlink(missing_ok=True)
                self._install_db(data, d, shared, mysql)
                copy_tree(data, staging)
                continue
            if template is not None and staging.is_dir():
                self._save_template(template, staging, mysql)  # it booted fine: keep it
            return srv

    def _install_db(
        self, data: Path, d: Path, shared: list[str], mysql: pwd.struct_passwd | None
    ) -> None:
        install_log = d / "install.log"
        install = [
            find_program("mariadb-install-db", "mysql_install_db"),
            "--no-defaults",
            f"--datadir={data}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
            *([f"--user={mysql.pw_name}"] if mysql is not None else []),
            *shared,
        ]
        # Own session + pdeathsig, like the servers: a Ctrl-C must not leave the bootstrap
        # mariadbd writing into the directory while it is being removed.
        installer = self._popen(install, install_log, env={**os.environ, "TMPDIR": str(d / "tmp")})
        try:
            rc = installer.wait(timeout=START_TIMEOUT)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(installer.pid, signal.SIGKILL)
            installer.wait()
            if isinstance(sys.exc_info()[1], subprocess.TimeoutExpired):
                raise TestEnvError(
                    f"mariadb-install-db took more than {START_TIMEOUT:.0f}s:\n{head(install_log)}"
                ) from None
            raise
        if rc != 0:
            raise TestEnvError(f"mariadb-install-db failed (exit {rc}):\n{head(install_log)}")

    # A freshly bootstrapped datadir is cached next to the temp dirs and copied on later
    # runs: `cp -a` of its ~30 MB takes 0.05-0.3 s, mariadb-install-db 0.6-4 s (CPU-bound,
    # mostly the sys schema, depending on load). It is kept only once a server booted from
    # the copy made right after mariadb-install-db, and dropped if a server fails on it.

    def _template_path(
        self, server_exe: str, shared: list[str], mysql: pwd.struct_passwd | None
    ) -> Path | None:
        if os.environ.get("TESTENV_NO_TEMPLATE") or self.base is None:
            return None
        st = os.stat(server_exe)
        key = json.dumps([TEMPLATE_VERSION, server_exe, st.st_size, st.st_mtime_ns, shared[1:]])
        digest = hashlib.sha256(key.encode()).hexdigest()[:12]
        owner = mysql.pw_uid if mysql is not None else os.geteuid()
        return self.base.parent / f"{TEMPLATE_PREFIX}{owner}-{digest}"

    @staticmethod
    def _copy_template(template: Path | None, data: Path, mysql: pwd.struct_passwd | None) -> bool:
        if template is None or not (template / TEMPLATE_OK).is_file():
            return False
        owner = mysql.pw_uid if mysql is not None else os.geteuid()
        try:
            if template.stat().st_uid != owner:
                return False  # not made by us: do not trust it
        except OSError:
            return False
        if not copy_tree(template, data):
            return False
        (data / TEMPLATE_OK).unlink(missing_ok=True)
        return True

    @staticmethod
    def _save_template(template: Path, staging: Path, mysql: pwd.struct_passwd | None) -> None:
        """Best effort; racing runs are fine: the first rename wins, the others give up."""
        try:
            (staging / TEMPLATE_OK).write_text("ok\n")
            if mysql is not None:
                os.chown(staging / TEMPLATE_OK, mysql.pw_uid, mysql.pw_gid)
            os.rename(staging, template)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            return
        owner_prefix = template.name.rsplit("-", 1)[0] + "-"
        for old in template.parent.glob(f"{owner_prefix}*"):
            if old != template:  # made by another mariadb version or older options
                shutil.rmtree(old, ignore_errors=True)

    def _wait_ready(self, srv: Server, probe, t0: float) -> None:
        deadline = t0 + START_TIMEOUT
        delay = 0.02
        while True:
            if probe(srv.port):
                return
            if not srv.alive():
                rc = srv.proc.returncode if srv.proc is not None else "?"
                raise TestEnvError(
                    f"{srv.name} exited during start-up (exit {rc}); {srv.log}:\n{tail(srv.log)}"
                    + self._extra_logs(srv)
                )
            if time.monotonic() > deadline:
                raise TestEnvError(
                    f"{srv.name} did not accept connections on {HOST}:{srv.port} within "
                    f"{START_TIMEOUT:.0f}s; {srv.log}:\n{tail(srv.log)}" + self._extra_logs(srv)
                )
            time.sleep(delay)
            delay = min(delay * 1.5, 0.2)

    @staticmethod
    def _extra_logs(srv: Server) -> str:
        out = srv.log.parent / "mariadbd.out"
        if srv.name == "mariadb" and out.exists() and out.stat().st_size:
            return f"\n{out}:\n{tail(out, 20)}"
        return ""

    # ---- teardown ----------------------------------------------------------------------------

    def stop(self) -> None:
        self.stopping = True
        for srv in reversed(self.servers):
            self._terminate(srv)
        self.servers.clear()
        if self.base is not None:
            for _ in range(5):  # a process that just died may still be closing files
                shutil.rmtree(self.base, ignore_errors=True)
                if not self.base.exists():
                    break
                time.sleep(0.1)
            else:
                log(f"could not remove {self.base}")
            self.base = None

    def _terminate(self, srv: Server) -> None:
        if not srv.alive():
            return
        self._signal(srv, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        while srv.alive():
            if self.hurry or time.monotonic() > deadline:
                if not self.hurry:
                    log(f"{srv.name} (pid {srv.pid}) ignored SIGTERM; sending SIGKILL")
                self._signal(srv, signal.SIGKILL)
                if srv.proc is not None:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        srv.proc.wait(timeout=5)
                break
            time.sleep(0.02)

    @staticmethod
    def _signal(srv: Server, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            if srv.proc is not None:
                srv.proc.send_signal(sig)
            else:
                os.kill(srv.pid, sig)

    # ---- state file (shell / stop) -----------------------------------------------------------

    def to_json(self) -> dict:
        return {
            "dir": str(self.base) if self.base else None,
            "exports": self.exports,
            "servers": [
                {
                    "name": s.name,
                    "pid": s.pid,
                    "port": s.port,
                    "log": str(s.log),
                    "marker": s.marker,
                }
                for s in self.servers
            ],
        }

    @classmethod
    def from_json(cls, data: dict) -> TestEnv:
        env = cls(persistent=True, base=Path(data["dir"]) if data.get("dir") else None)
        env.exports = dict(data.get("exports", {}))
        env.servers = [
            Server(s["name"], s["port"], Path(s["log"]), s["marker"], pid=s["pid"])
            for s in data.get("servers", [])
        ]
        return env


def state_file() -> Path:
    custom = os.environ.get("TESTENV_STATE_FILE")
    if custom:
        return Path(custom)
    return Path(tempfile.gettempdir()) / f"dedupsite-testenv-{os.getuid()}.json"


# ---- commands ------------------------------------------------------------------------------


def _exit_code(rc: int) -> int:
    return 128 - rc if rc < 0 else rc


def cmd_run(argv: list[str]) -> int:
    if not argv:
        log("usage: testenv.py run -- CMD [ARGS...]")
        return 2
    env = TestEnv()

    def raising(signum: int, _frame: object) -> None:
        raise Interrupted(signum)

    def recording(signum: int, _frame: object) -> None:
        env.signals += 1
        if env.stopping:
            env.hurry = True  # signal during clean-up: SIGKILL the servers right away

    for sig in HANDLED_SIGNALS:
        signal.signal(sig, raising)
    child: subprocess.Popen[bytes] | None = None
    rc = 1
    try:
        try:
            env.start(dict(os.environ))
            child_env = {**os.environ, **env.exports}
            try:
                child = subprocess.Popen(argv, env=child_env)
            except OSError as exc:
                log(f"cannot run {argv[0]!r}: {exc}")
                return 127 if isinstance(exc, FileNotFoundError) else 126
            rc = _exit_code(child.wait())
        except Interrupted as intr:
            for sig in HANDLED_SIGNALS:
                signal.signal(sig, recording)
            rc = 128 + intr.signum
            if child is not None:
                rc = _stop_child(child, intr.signum, env)
        except TestEnvError as exc:
            for sig in HANDLED_SIGNALS:
                signal.signal(sig, recording)
            log(str(exc))
            return 1
    finally:
        for sig in HANDLED_SIGNALS:
            signal.signal(sig, recording)
        env.stop()
    return rc


def _stop_child(child: subprocess.Popen[bytes], signum: int, env: TestEnv) -> int:
    """The wrapper got a signal while CMD ran: let CMD finish, then return its exit code.

    Each further signal (or the grace period running out) escalates: SIGTERM, then SIGKILL.
    """
    # A terminal Ctrl-C already reached CMD (same process group); other signals
    # were probably aimed at this wrapper only, so pass them on.
    if signum != signal.SIGINT:
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signum)
    for sig, grace in ((None, STOP_TIMEOUT), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if sig is not None:
            with contextlib.suppress(ProcessLookupError):
                child.send_signal(sig)
        seen = env.signals
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and env.signals == seen:
            try:
                rc = _exit_code(child.wait(timeout=0.1))
            except subprocess.TimeoutExpired:
                continue
            return rc if rc != 0 else 128 + signum
    return 128 + signum


def cmd_shell() -> int:
    path = state_file()
    if path.exists():
        try:
            old = TestEnv.from_json(json.loads(path.read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            old = None
        if old is not None and old.servers and all(s.alive() for s in old.servers):
            _print_exports(old.exports)
            log(f"reusing servers from {path}")
            return 0
        if old is not None:
            old.stop()
        path.unlink(missing_ok=True)
    env = TestEnv(persistent=True)

    def interrupt(signum: int, _frame: object) -> None:
        raise Interrupted(signum)

    for sig in HANDLED_SIGNALS:
        signal.signal(sig, interrupt)
    try:
        env.start(dict(os.environ))
    except (TestEnvError, Interrupted) as exc:
        for sig in HANDLED_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        env.stop()
        if isinstance(exc, Interrupted):
            return 128 + exc.signum
        log(str(exc))
        return 1
    for sig in HANDLED_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    if env.servers:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(env.to_json(), indent=2))
        tmp.replace(path)
        log(f"pids in {path}; stop with: python scripts/testenv.py stop")
    _print_exports(env.exports)
    return 0


def _print_exports(exports: dict[str, str]) -> None:
    for key, value in exports.items():
        print(f"export {key}={shlex.quote(value)}")
    sys.stdout.flush()


def cmd_stop() -> int:
    path = state_file()
    if not path.exists():
        log("nothing to stop")
        return 0
    try:
        env = TestEnv.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log(f"unreadable state file {path}: {exc}")
        return 1
    names = ", ".join(f"{s.name} (pid {s.pid})" for s in env.servers if s.alive())
    env.stop()
    path.unlink(missing_ok=True)
    log(f"stopped {names or 'nothing (already gone)'}")
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help", "help"}:
        print(__doc__.strip())
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "run":
        if rest and rest[0] == "--":
            rest = rest[1:]
        return cmd_run(rest)
    if command == "shell" and not rest:
        return cmd_shell()
    if command == "stop" and not rest:
        return cmd_stop()
    log(f"unknown command {' '.join(argv)!r}; see --help")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
