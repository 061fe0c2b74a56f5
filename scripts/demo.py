"""`make demo`: the product on embedded defaults, on one machine.

Migrates, starts the embedded Redis, one RQ worker and the web server, loads
demo/sample.jsonl, prints the URL and a login, and stops everything it started
on Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
PORT = os.environ.get("PORT", "8000")
USER, PASSWORD = "demo", "demo-password"


def manage(*args: str, **kwargs: object) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "manage.py", *args], cwd=ROOT, check=True, **kwargs)  # type: ignore[call-overload]


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedupsite.settings")
    manage("migrate", "--noinput", stdout=subprocess.DEVNULL)
    manage("load_boilerplate", stdout=subprocess.DEVNULL)  # a fresh install starts warm
    manage("shell", "-c", (
        "from django.contrib.auth.models import User\n"
        f"u = User.objects.filter(username='{USER}').first() or User(username='{USER}')\n"
        "u.is_staff = u.is_superuser = True\n"
        f"u.set_password('{PASSWORD}'); u.save()\n"
    ))
    children = [
        subprocess.Popen([PY, "manage.py", "dedup_worker"], cwd=ROOT),
        subprocess.Popen([PY, "manage.py", "runserver", f"127.0.0.1:{PORT}", "--noreload"],
                         cwd=ROOT),
    ]

    def stop(*_: object) -> None:
        for child in children:
            if child.poll() is None:
                child.terminate()
        for child in children:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
        sys.path.insert(0, str(ROOT))
        from dedupsite.embedded import stop_redis

        if not os.environ.get("REDIS_URL"):
            stop_redis(Path(os.environ.get("DEDUPSITE_VAR_DIR", ROOT / "var")))
        print("\nStopped the web server, the worker and the embedded Redis.")
        sys.exit(0)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    manage("ingest", str(ROOT / "demo" / "sample.jsonl"))
    manage("shell", "-c", (
        "import time\nfrom articles.models import Article\n"
        "deadline = time.time() + 60\n"
        "while Article.objects.queued().exists() and time.time() < deadline: time.sleep(0.2)\n"
        "print(Article.objects.filter(status='done').count(), 'articles processed')\n"
    ))
    print(
        f"\n  dedupsite is running: http://127.0.0.1:{PORT}/clusters/\n"
        f"  log in as {USER} / {PASSWORD}   (admin: http://127.0.0.1:{PORT}/admin/)\n"
        "  Press Ctrl-C to stop.\n",
        flush=True,
    )
    while all(child.poll() is None for child in children):
        time.sleep(0.5)
    stop()
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
