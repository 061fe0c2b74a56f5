"""Slow clients against a web server, and what a normal client gets meanwhile.

``hold(...)`` opens slow connections, from many loopback source addresses (127.0.1.x,
as many clients would): half send their request headers one line every few seconds
and never finish them, half send complete headers and then a declared body a byte at
a time. ``probe(...)`` then, once a second, asks for the health check, signs in an
editor and posts an article, and records how long each took (a failure or a wait over
``deadline_s`` counts as not answered). Used by bench/slow_clients.py and
tests/drills/test_slow_clients.py, with nginx as shipped (deploy/nginx) in front of
gunicorn as shipped (dedupsite/gunicorn.conf.py) and without it.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import ssl
import statistics
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import requests
import urllib3

urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)


def _connect(base_url: str, source: str) -> socket.socket:
    parts = urlsplit(base_url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30,
                                    source_address=(source, 0))
    if parts.scheme == "https":
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        sock = context.wrap_socket(sock, server_hostname=parts.hostname)
    return sock


def _slow(base_url: str, source: str, kind: str, stop: threading.Event, every_s: float,
          opened: list[int]) -> None:
    host = urlsplit(base_url).netloc
    # a loaded machine may drop a handshake (nginx closes a connection silent for 10 s):
    # the drill is about connections held open, so a failed one is tried again for 20 s
    give_up = time.monotonic() + 20
    while True:
        try:
            sock = _connect(base_url, source)
            break
        except OSError:
            if stop.is_set() or time.monotonic() > give_up:
                return
            time.sleep(0.5)
    opened.append(1)
    try:
        if kind == "headers":
            sock.sendall(f"GET /api/v1/health HTTP/1.1\r\nHost: {host}\r\n".encode())
        else:
            sock.sendall((f"POST /accounts/login/ HTTP/1.1\r\nHost: {host}\r\n"
                          "Content-Type: application/x-www-form-urlencoded\r\n"
                          "Content-Length: 100000\r\n\r\n").encode())
        n = 0
        while not stop.wait(every_s):
            sock.sendall(f"X-Slow-{n}: a\r\n".encode() if kind == "headers" else b"a")
            n += 1
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sock.close()


@dataclass
class Slow:
    stop: threading.Event
    threads: list[threading.Thread]
    opened: list[int]

    def release(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=15)


def hold(base_url: str, count: int, addresses: int = 50, every_s: float = 4.0) -> Slow:
    """``count`` slow connections (half slow headers, half slow bodies) from
    ``addresses`` loopback addresses; wait until they are open."""
    stop = threading.Event()
    opened: list[int] = []
    threads = []
    for i in range(count):
        source = f"127.0.1.{1 + i % addresses}"
        kind = "headers" if i % 2 == 0 else "body"
        thread = threading.Thread(target=_slow, args=(base_url, source, kind, stop, every_s,
                                                      opened), daemon=True)
        thread.start()
        threads.append(thread)
    deadline = time.monotonic() + 20
    while len(opened) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # let the servers take them in
    return Slow(stop, threads, opened)


@dataclass
class Probe:
    kind: str
    latencies_ms: list[float] = field(default_factory=list)
    failed: int = 0  # errors, timeouts and answers slower than the deadline

    @property
    def answered(self) -> int:
        return len(self.latencies_ms)

    def summary(self) -> str:
        tries = self.answered + self.failed
        if not self.latencies_ms:
            return f"{self.kind} 0/{tries}"
        return (f"{self.kind} {self.answered}/{tries} (p50 "
                f"{statistics.median(self.latencies_ms):.0f} ms, max "
                f"{max(self.latencies_ms):.0f} ms)")


def _timed(probe: Probe, deadline_s: float, call) -> None:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    try:
        ok = call()
    except requests.RequestException:
        ok = False
    took = time.monotonic() - started
    if ok and took <= deadline_s:
        probe.latencies_ms.append(took * 1000)
    else:
        probe.failed += 1


def _login(base_url: str, username: str, password: str, timeout: float) -> bool:
    """Sign in as a browser does; cookies sent by hand (the CSRF and session cookies are
    Secure, which requests would not send back over plain HTTP)."""
    page = requests.get(f"{base_url}/accounts/login/", timeout=timeout, verify=False)
    token = page.cookies.get("csrftoken") or ""
    form_token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    if page.status_code != 200 or not token or form_token is None:
        return False
    answer = requests.post(
        f"{base_url}/accounts/login/", timeout=timeout, verify=False, allow_redirects=False,
        data={"username": username, "password": password,
              "csrfmiddlewaretoken": form_token.group(1)},
        headers={"Cookie": f"csrftoken={token}", "Referer": f"{base_url}/accounts/login/",
                 "Origin": base_url})
    return answer.status_code == 302 and "sessionid" in answer.cookies


def probe(base_url: str, api_key: str, username: str, password: str, seconds: int,
          deadline_s: float = 1.0) -> dict[str, Probe]:
    """Once a second for ``seconds``: a health check, a login, an article posted."""
    results = {kind: Probe(kind) for kind in ("health", "login", "post")}
    timeout = deadline_s * 2  # a late answer counts as none: do not wait long for it
    for i in range(seconds):
        started = time.monotonic()
        _timed(results["health"], deadline_s, lambda: requests.get(
            f"{base_url}/api/v1/health", timeout=timeout, verify=False).status_code == 200)
        _timed(results["login"], deadline_s,
               lambda: _login(base_url, username, password, timeout))
        body = {"nid": f"slow-{time.time_ns()}-{i}", "url": f"https://s.example/{i}",
                "title": "慢连接演练", "content": "慢连接演练的正文。" * 10}
        _timed(results["post"], deadline_s, lambda body=body: requests.post(
            f"{base_url}/api/v1/articles", data=json.dumps(body), timeout=timeout,
            verify=False, headers={"Authorization": f"Bearer {api_key}",
                                   "Content-Type": "application/json"}).status_code == 202)
        time.sleep(max(0.0, 1 - (time.monotonic() - started)))
    return results
