#!/usr/bin/env python3
"""A throwaway Spark standalone cluster on loopback, from the installed pyspark.

    .venv/bin/python scripts/spark_cluster.py start [--workers 2] [--cores 1] [--memory 1g]
        starts a master and the workers (separate JVMs, each with its own work
        directory), waits until every worker has registered, prints the master URL
        (spark://127.0.0.1:PORT) and leaves them running; state in
        $TMPDIR/dedupsite-spark-cluster-<uid>.json
    .venv/bin/python scripts/spark_cluster.py stop
        stops them and deletes their directories.

Then: SPARK_MASTER=spark://127.0.0.1:PORT .venv/bin/python manage.py spark_dedup ...
(docs/batch.md). The tests start one through :func:`cluster` (tests/batch).
Needs Java 17+ (``java`` on PATH).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

STATE = Path(tempfile.gettempdir()) / f"dedupsite-spark-cluster-{os.getuid()}.json"


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports: all held at once while they are chosen, so that the
    master, its UI and the workers' UIs never draw the same one (a worker's UI on the
    master's UI port answered its JSON poll with an HTML page)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _alive_workers(ui_port: int) -> int:
    """ALIVE workers the master's UI lists; -1 while it does not answer with its JSON."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as reply:
            state = json.load(reply)
    except (OSError, ValueError):  # not up yet, or not the master's JSON (yet)
        return -1
    if not isinstance(state, dict):
        return -1
    return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")


def start(workers: int = 2, cores: int = 1, memory: str = "1g",
          timeout: float = 90.0, *, remember: bool = True) -> dict[str, object]:
    """Start the cluster; ``remember`` writes its state where ``stop`` (the command)
    finds it. :func:`cluster` keeps its own, so that two test runs at once never stop
    each other's cluster."""
    home = spark_home()
    folder = Path(tempfile.mkdtemp(prefix="dedupsite-spark-cluster-"))
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_LOG_DIR": str(folder), "SPARK_WORKER_DIR": str(folder)}
    port, ui_port, *worker_ui_ports = free_ports(2 + workers)
    spark_class = str(home / "bin" / "spark-class")
    pids = []
    log = (folder / "master.log").open("wb")
    master = subprocess.Popen(
        [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
         "--port", str(port), "--webui-port", str(ui_port)],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    pids.append(master.pid)
    url = f"spark://127.0.0.1:{port}"
    for n in range(workers):
        log = (folder / f"worker{n}.log").open("wb")
        worker = subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
             "--cores", str(cores), "--memory", memory, "--work-dir", str(folder / f"w{n}"),
             "--webui-port", str(worker_ui_ports[n])],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        pids.append(worker.pid)
    state = {"url": url, "ui_port": ui_port, "pids": pids, "folder": str(folder)}
    if remember:
        STATE.write_text(json.dumps(state))
    deadline = time.monotonic() + timeout
    while _alive_workers(ui_port) < workers:
        if time.monotonic() > deadline or master.poll() is not None:
            stop(state)
            raise RuntimeError(f"the Spark cluster did not start; logs were in {folder}")
        time.sleep(0.5)
    return state


def stop(state: dict[str, object] | None = None) -> None:
    """Stop ``state``'s cluster, or the one ``start`` remembered."""
    remembered = state is None
    if state is None:
        if not STATE.exists():
            return
        state = json.loads(STATE.read_text())
    pids = [int(p) for p in state["pids"]]  # type: ignore[attr-defined]
    for pid in reversed(pids):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:  # our child: reaped
                    break
            except ChildProcessError:  # not our child (the command): is it still there?
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
            time.sleep(0.2)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    shutil.rmtree(str(state["folder"]), ignore_errors=True)
    if remembered:
        STATE.unlink(missing_ok=True)


@contextlib.contextmanager
def cluster(workers: int = 2) -> Iterator[str]:
    """A cluster for the duration of a ``with`` block; yields the master URL."""
    state = start(workers, remember=False)
    try:
        yield str(state["url"])
    finally:
        stop(state)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("start")
    up.add_argument("--workers", type=int, default=2)
    up.add_argument("--cores", type=int, default=1)
    up.add_argument("--memory", default="1g")
    sub.add_parser("stop")
    args = parser.parse_args()
    if args.command == "start":
        print(start(args.workers, args.cores, args.memory)["url"])
    else:
        stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
