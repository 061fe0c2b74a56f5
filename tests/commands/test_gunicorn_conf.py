"""`make web`'s gunicorn settings follow the environment the README documents."""

from __future__ import annotations

import runpy
from pathlib import Path

CONF = Path(__file__).resolve().parents[2] / "dedupsite" / "gunicorn.conf.py"


def test_port_workers_and_threads_come_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("PORT", "8123")
    monkeypatch.setenv("WEB_CONCURRENCY", "3")
    monkeypatch.setenv("WEB_THREADS", "5")
    conf = runpy.run_path(str(CONF))
    assert (conf["bind"], conf["workers"], conf["threads"]) == ("127.0.0.1:8123", 3, 5)
    assert conf["worker_class"] == "gthread"
    assert conf["logger_class"] == "dedupsite.gunicorn_logging.RedactingLogger"


def test_the_defaults(monkeypatch) -> None:
    for name in ("PORT", "WEB_CONCURRENCY", "WEB_THREADS"):
        monkeypatch.delenv(name, raising=False)
    conf = runpy.run_path(str(CONF))
    assert (conf["bind"], conf["workers"], conf["threads"]) == ("127.0.0.1:8000", 2, 8)
