"""A body over the limit gets its 413 JSON answer from the served configuration (gunicorn,
`make web`'s settings), even while the client is still sending it.

Django's development server drains unread bodies itself; gunicorn does not, so the test
runs the real server (on SQLite, in a directory of its own)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gunicorn(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("gunicorn")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "dedupsite.settings",
           "DEDUPSITE_VAR_DIR": str(tmp_path), "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
           "DEDUPSITE_WARMUP": "0", "API_MAX_BODY_BYTES": "10000"}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env,
                   check=True)
    key = subprocess.run([sys.executable, "manage.py", "create_api_key", "big"], cwd=ROOT,
                         env=env, check=True, capture_output=True, text=True
                         ).stdout.strip().splitlines()[-1]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "dedupsite.wsgi", "-c",
         "dedupsite/gunicorn.conf.py", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "gunicorn did not start"
            time.sleep(0.2)
    yield port, key
    server.terminate()
    server.wait(timeout=30)


def post_whole_body(port: int, key: str, path: str, body: bytes) -> tuple[bytes, bytes]:
    """POST ``body`` as a plain client does (the whole body, then read the answer):
    (status code, payload)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.sendall((f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
                  f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode())
    for start in range(0, len(body), 64 * 1024):
        sock.sendall(body[start:start + 64 * 1024])
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    sock.close()
    head, _, payload = answer.partition(b"\r\n\r\n")
    return head.split(b" ")[1], payload


def test_a_client_still_sending_a_too_large_body_reads_the_413(gunicorn):
    port, key = gunicorn
    body = json.dumps({"nid": "big", "url": "https://x.example/big",
                       "content": "正文" * 5_000_000}).encode()  # ~30 MB: over socket buffers
    status, payload = post_whole_body(port, key, "/api/v1/articles", body)
    assert status == b"413"
    assert json.loads(payload)["error"]["code"] == "too_large"


def test_the_seed_call_too_reads_a_too_large_body_before_its_413(gunicorn):
    port, key = gunicorn
    body = json.dumps({"url": "https://x.example/big", "content": "正文" * 5_000_000}).encode()
    status, payload = post_whole_body(port, key, "/docId/getDocId", body)
    assert status == b"413"
    assert json.loads(payload)["filterReason"] == "the body is too large"
