"""A local HTTP server standing for the crawled web's picture hosts in tests."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class Drip:
    """A hostile host's answer: 200, a large Content-Length, the first bytes of a PNG,
    then one byte every ``every_s`` seconds for as long as the client keeps reading."""

    every_s: float = 5.0
    length: int = 1_000_000


@dataclass(frozen=True)
class Redirect:
    location: str
    status: int = 302


Route = bytes | tuple[str, bytes] | Drip | Redirect


@contextmanager
def serve(routes: Mapping[str, Route]) -> Iterator[tuple[str, Counter[str]]]:
    """Serve ``routes`` (path -> body, (content type, body), a :class:`Drip` or a
    :class:`Redirect`); any other path is a 404. Yields the base URL and the count of
    requests per path."""
    hits: Counter[str] = Counter()
    closing = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802
            hits[self.path] += 1
            route = routes.get(self.path)
            if isinstance(route, Redirect):
                self.send_response(route.status)
                self.send_header("Location", route.location)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if isinstance(route, Drip):
                self._drip(route)
                return
            kind, body = route if isinstance(route, tuple) else ("image/jpeg", route or b"")
            self.send_response(200 if route is not None else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _drip(self, route: Drip) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(route.length))
            self.end_headers()
            try:
                self.wfile.write(PNG_SIGNATURE)
                self.wfile.flush()
                while not closing.wait(route.every_s):
                    self.wfile.write(b"\0")
                    self.wfile.flush()
            except OSError:  # the client gave up
                pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", hits
    finally:
        closing.set()
        httpd.shutdown()
