"""What the people signing in read during a guessing attack, through the real server
(gunicorn as `make web` runs it, 2 workers of 8 threads, on a database and Redis of its
own): 24 concurrent wrong passwords for one account are all answered, at most
LOGIN_FAILURE_LIMIT of them "wrong password" (the ones checked), every other one
"temporarily locked" — a try that lost the race to the checked ones is never told its
password is wrong."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
RIGHT = "right-password-123"
WRONG_PASSWORD = "Your username and password didn"  # 't match
LOCKED = "temporarily locked"


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("login-race")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "dedupsite.settings",
           "DEDUPSITE_VAR_DIR": str(tmp_path), "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
           "REDIS_PREFIX": f"race{os.getpid()}", "DEDUPSITE_WARMUP": "0",
           "LOGIN_FAILURE_LIMIT": "5", "WEB_CONCURRENCY": "2", "WEB_THREADS": "8"}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env,
                   check=True)
    subprocess.run([sys.executable, "manage.py", "shell", "-c",
                    "from django.contrib.auth.models import User; "
                    f"User.objects.create_user('editor', password='{RIGHT}')"],
                   cwd=ROOT, env=env, check=True)
    port = free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "dedupsite.wsgi", "-c",
         "dedupsite/gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            requests.get(f"{base}/accounts/login/", timeout=5)
            break
        except requests.RequestException:
            assert time.monotonic() < deadline, "gunicorn did not start"
            time.sleep(0.2)
    yield base
    server.terminate()
    server.wait(timeout=30)


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def login_form(base: str) -> tuple[requests.Session, str]:
    session = requests.Session()
    page = session.get(f"{base}/accounts/login/", timeout=30).text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    return session, token.group(1)


def test_24_concurrent_wrong_passwords_read_wrong_at_most_5_times_else_locked(web):
    forms = [login_form(web) for _ in range(24)]
    start = threading.Barrier(len(forms))
    answers: list[str] = []

    def attempt(session: requests.Session, token: str) -> None:
        start.wait()
        answer = session.post(f"{web}/accounts/login/", timeout=120,
                              data={"username": "editor", "password": "wrong",
                                    "csrfmiddlewaretoken": token},
                              headers={"Referer": f"{web}/accounts/login/"})
        body = answer.text
        error = re.findall(r'<p class="error">([^<]*)', body)
        answers.append("wrong" if WRONG_PASSWORD in body
                       else "locked" if LOCKED in body else f"{answer.status_code}: {error}")

    threads = [threading.Thread(target=attempt, args=form) for form in forms]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    counted = Counter(answers)
    assert set(counted) <= {"wrong", "locked"}, counted
    assert 1 <= counted["wrong"] <= 5 and counted["wrong"] + counted["locked"] == 24, counted
    session, token = login_form(web)  # the real user, from the attacked address
    answer = session.post(f"{web}/accounts/login/", timeout=60,
                          data={"username": "editor", "password": RIGHT,
                                "csrfmiddlewaretoken": token},
                          headers={"Referer": f"{web}/accounts/login/"})
    assert LOCKED in answer.text
