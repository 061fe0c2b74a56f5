"""Slow clients against the served web configuration.

    .venv/bin/python bench/slow_clients.py [--slow 16] [--seconds 20]

Starts the web server twice on the same embedded-default checkout (SQLite, the Redis of
REDIS_URL or the embedded one): once with `make web`'s settings
(dedupsite/gunicorn.conf.py: 2 gthread workers x 8 threads) and once with the earlier
configuration as the baseline (2 sync workers), in the same run. Each time it opens
--slow sockets that send one header line every 5 s (never finishing their request),
then times GET /api/v1/health from a normal client every second for --seconds: how
many answered, and how fast. A buffering proxy in front (docs/reliability.md) is what
protects against many more slow clients than threads.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def slow_client(port: int, stop: threading.Event) -> None:
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        sock.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        n = 0
        while not stop.wait(5):
            sock.sendall(f"X-Slow-{n}: a\r\n".encode())
            n += 1
        sock.close()
    except OSError:
        pass


def measure(args: argparse.Namespace, env: dict[str, str], extra: list[str]) -> dict:
    port = free_port()
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "dedupsite.wsgi", "-c", "dedupsite/gunicorn.conf.py",
         "--bind", f"127.0.0.1:{port}", *extra], cwd=ROOT, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                requests.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=2)
                break
            except requests.RequestException:
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.5)
        stop = threading.Event()
        for _ in range(args.slow):
            threading.Thread(target=slow_client, args=(port, stop), daemon=True).start()
        time.sleep(1)
        latencies, failed = [], 0
        for _ in range(args.seconds):
            started = time.monotonic()
            try:
                requests.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=10)
                latencies.append((time.monotonic() - started) * 1000)
            except requests.RequestException:
                failed += 1
            time.sleep(max(0.0, 1 - (time.monotonic() - started)))
        stop.set()
        return {"answered": len(latencies), "failed": failed,
                "p50_ms": statistics.median(latencies) if latencies else None,
                "max_ms": max(latencies) if latencies else None}
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slow", type=int, default=16)
    parser.add_argument("--seconds", type=int, default=20)
    args = parser.parse_args()
    var = tempfile.mkdtemp(prefix="slow-clients-")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "dedupsite.settings",
           "DEDUPSITE_VAR_DIR": var, "DATABASE_URL": f"sqlite:///{var}/db.sqlite3",
           "DEDUPSITE_WARMUP": "0"}
    subprocess.run([PY, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    served = measure(args, env, [])
    # --threads 1: with threads > 1 gunicorn would silently run gthread workers instead
    baseline = measure(args, env, ["--worker-class", "sync", "--threads", "1"])
    for name, result in (("served (2 gthread x 8)", served), ("baseline (2 sync)", baseline)):
        p50 = "-" if result["p50_ms"] is None else f"{result['p50_ms']:.0f} ms"
        top = "-" if result["max_ms"] is None else f"{result['max_ms']:.0f} ms"
        print(f"{name}: {args.slow} slow clients; {result['answered']}/{args.seconds} "
              f"health checks answered, {result['failed']} failed; p50 {p50}, max {top}")


if __name__ == "__main__":
    main()
