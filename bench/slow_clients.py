"""Slow clients against the web tier as shipped, with and without the shipped nginx.

    .venv/bin/python bench/slow_clients.py [--slow 200] [--seconds 30]

Starts a production-style stack (support/stack.py: its own MariaDB and Redis, gunicorn
with dedupsite/gunicorn.conf.py on loopback, DEBUG off) and nginx with
deploy/nginx/dedupsite.conf in front of it (support/proxy.py: the shipped site with
this machine's ports and a self-signed certificate). For each way in (through nginx,
then straight at gunicorn as the baseline) it holds --slow slow connections from 50
loopback addresses (half slow headers, half slow bodies: support/slow_clients.py) and,
once a second for --seconds, makes a health check, an editor's login and an article
post: each counts as answered when it succeeded within 1 s.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support.proxy import Proxy  # noqa: E402
from support.slow_clients import hold, probe  # noqa: E402
from support.stack import Stack  # noqa: E402

PASSWORD = "slow-bench-Passw0rd!"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slow", type=int, default=200)
    parser.add_argument("--seconds", type=int, default=30)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="slow-clients-"))
    stack = Stack(workdir / "stack", shipped_web=True, extra_env={"TRUSTED_PROXIES": "1"})
    stack.start()
    proxy = None
    try:
        stack.python("from django.contrib.auth.models import User; "
                     f"User.objects.create_user('editor', password='{PASSWORD}')")
        proxy = Proxy(workdir / "nginx", upstream_port=int(stack.base_url.rsplit(":", 1)[1]))
        proxy.start()
        print(f"{args.slow} slow connections (50 addresses), {args.seconds} s of checks "
              "once a second; answered = succeeded within 1 s")
        for name, url in (("nginx (deploy/nginx) + gunicorn", f"https://127.0.0.1:{proxy.port}"),
                          ("gunicorn alone (baseline)", stack.base_url)):
            slow = hold(url, args.slow)
            try:
                results = probe(url, stack.api_key, "editor", PASSWORD, args.seconds)
            finally:
                slow.release()
            print(f"{name}: {len(slow.opened)} held; "
                  + "; ".join(r.summary() for r in results.values()))
    finally:
        if proxy is not None:
            proxy.stop()
        stack.stop()


if __name__ == "__main__":
    main()
