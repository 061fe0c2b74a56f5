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


def test_percent_encoded_key_names_are_redacted_too() -> None:
    assert redact("GET /docId/getDocId?%6Bey=dd_x_SECRET&json=1") == (
        "GET /docId/getDocId?%6Bey=[redacted]&json=1")
    assert "SECRET" not in redact("k%65y=dd_SECRET;api%5Fkey=dd_SECRET2")
    assert redact("monkey=1&json=%7B%7D") == "monkey=1&json=%7B%7D"


def test_the_error_log_holds_no_key(caplog) -> None:
    logger = RedactingLogger(Config())
    with caplog.at_level("DEBUG", logger="gunicorn.error"):
        logger.error_log.propagate = True
        logger.warning("Invalid request from ip=%s: %s", "10.0.0.1",
                       "Invalid HTTP request line: 'GET /docId/getDocId?key=dd_a_SECRET HTTP/1.1'")
        logger.error("bad %s", "?%6Bey=dd_b_SECRET")
    text = caplog.text + " ".join(r.getMessage() for r in caplog.records)
    assert "SECRET" not in text
    assert "key=[redacted]" in text
