"""A local HTTP server standing for the crawled web's picture hosts in tests."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def serve(routes: Mapping[str, bytes | tuple[str, bytes]]) -> Iterator[tuple[str, Counter[str]]]:
    """Serve ``routes`` (path -> body, or (content type, body)); any other path is a 404.
    Yields the base URL and the count of requests per path."""
    hits: Counter[str] = Counter()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802
            hits[self.path] += 1
            route = routes.get(self.path)
            kind, body = route if isinstance(route, tuple) else ("image/jpeg", route or b"")
            self.send_response(200 if route is not None else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", hits
    finally:
        httpd.shutdown()
