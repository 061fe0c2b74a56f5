"""API keys never reach gunicorn's access log."""

from __future__ import annotations

import datetime
from types import SimpleNamespace

from gunicorn.config import Config

from dedupsite.gunicorn_logging import RedactingLogger, redact


def test_key_parameters_are_redacted_wherever_they_stand() -> None:
    assert redact("json=%7B%7D&key=dd_ab12cd34_SECRET") == "json=%7B%7D&key=[redacted]"
    assert redact("GET /docId/getDocId?key=dd_x_SECRET&json=1 HTTP/1.1") == (
        "GET /docId/getDocId?key=[redacted]&json=1 HTTP/1.1")
    assert redact("monkey=1&api_key=s&TOKEN=t") == "monkey=1&api_key=[redacted]&TOKEN=[redacted]"


def test_the_access_log_line_holds_no_key() -> None:
    logger = RedactingLogger(Config())
    environ = {"REQUEST_METHOD": "GET", "RAW_URI": "/docId/getDocId?json=%7B%7D&key=dd_a_SECRET",
               "SERVER_PROTOCOL": "HTTP/1.1", "PATH_INFO": "/docId/getDocId",
               "QUERY_STRING": "json=%7B%7D&key=dd_a_SECRET", "REMOTE_ADDR": "10.0.0.1",
               "HTTP_REFERER": "https://x.example/?key=dd_b_SECRET"}
    req = SimpleNamespace(headers=[("AUTHORIZATION", "Bearer dd_c_SECRET")])
    atoms = logger.atoms(SimpleNamespace(status="200 OK", sent=10, headers=[]), req, environ,
                         datetime.timedelta(milliseconds=5))
    line = logger.cfg.access_log_format % atoms + str(atoms)
    assert "SECRET" not in line
    assert "key=[redacted]" in atoms["r"]
