"""The embedded Redis (REDIS_URL unset): started only by what needs it, stopped by the
process that started it unless another process still uses it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from dedupsite import embedded

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def var_dir(tmp_path: Path):
    """A checkout's var/ of its own; whatever a test leaves running is stopped."""
    yield tmp_path
    embedded.stop_redis(tmp_path)


def manage(var_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update(DEDUPSITE_VAR_DIR=str(var_dir), DATABASE_URL=f"sqlite:///{var_dir}/db.sqlite3",
               DJANGO_SETTINGS_MODULE="dedupsite.settings")
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=120, check=True)


def server_running(var_dir: Path) -> bool:
    pidfile = var_dir / "redis.pid"
    if pidfile.exists():
        try:
            os.kill(int(pidfile.read_text()), 0)
            return True
        except ProcessLookupError:
            pass
    return embedded._alive(embedded.socket_path(var_dir))


def test_commands_that_need_no_redis_do_not_start_it(var_dir):
    manage(var_dir, "migrate", "-v0")
    manage(var_dir, "check")
    manage(var_dir, "export_mapping")
    assert not server_running(var_dir)
    assert not embedded.socket_path(var_dir).exists()


def test_a_command_that_starts_it_stops_it_when_it_exits_and_keeps_its_data(var_dir):
    manage(var_dir, "migrate", "-v0")
    out = manage(var_dir, "ingest", str(ROOT / "demo" / "sample.jsonl"))
    assert "Queued" in out.stdout + out.stderr
    assert not server_running(var_dir)
    assert (var_dir / "redis.rdb").exists()  # the queued jobs wait for the next start


def test_the_owner_leaves_it_running_while_another_process_is_connected(var_dir, monkeypatch):
    monkeypatch.setattr(embedded, "_started", None)
    sock = embedded.ensure_redis(var_dir)  # this process starts it: the owner
    assert embedded._started == (os.getpid(), sock)
    worker = redis.Redis(unix_socket_path=str(sock), client_name=embedded.client_name(1))
    worker.ping()  # another process (pid 1's name) is connected
    mine = redis.Redis(unix_socket_path=str(sock), client_name=embedded.client_name())
    mine.ping()
    assert embedded.release() is False
    assert server_running(var_dir)
    worker.close()
    assert embedded.release() is True  # only its own connections are left
    assert not server_running(var_dir)
    mine.close()


def test_a_process_that_found_it_running_never_stops_it(var_dir, monkeypatch):
    monkeypatch.setattr(embedded, "_started", None)
    sock = embedded.ensure_redis(var_dir)
    monkeypatch.setattr(embedded, "_started", None)  # as if another process had started it
    assert embedded.ensure_redis(var_dir) == sock
    assert embedded.release() is False
    assert server_running(var_dir)
