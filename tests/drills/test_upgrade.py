"""An upgrade from the last release (CHANGELOG.md's newest tagged entry, v0.1) to this
code, as docs/operations.md does it: the release's code, installed by its own release
steps, populates a database (articles posted through its API), then this code runs the
release unit's steps (deploy/systemd/dedupsite-release.service: migrate, collectstatic,
load_boilerplate, rebuild_index --if-missing) on it. Every migration is applied, every
article keeps its docId, and reposts get the docIds the old release gave the same
reposts."""

from __future__ import annotations

import contextlib
import re
import shlex
import subprocess
import sys
import tarfile
import time
from io import BytesIO
from pathlib import Path

import pytest
import requests

from support.stack import free_port, load_testenv
from tests.drills import stories

pytestmark = pytest.mark.drill(slow=True)

ROOT = Path(__file__).resolve().parents[2]


def last_release() -> str:
    text = (ROOT / "CHANGELOG.md").read_text()
    commit = re.search(r"^- commit: ([0-9a-f]{7,40})", text, flags=re.M)
    assert commit, "CHANGELOG.md names its releases' commits"
    return commit.group(1)


def checkout(commit: str, into: Path) -> Path:
    archived = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True)
    if archived.returncode != 0:
        pytest.skip(f"{commit} is not in this clone (shallow?)")
    with tarfile.open(fileobj=BytesIO(archived.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


def release_steps(code: Path) -> list[list[str]]:
    """The manage.py arguments of each ExecStart of a checkout's release unit, in order."""
    unit = (code / "deploy" / "systemd" / "dedupsite-release.service").read_text()
    return [shlex.split(line.split("=", 1)[1])[2:]
            for line in unit.splitlines() if line.startswith("ExecStart=")]


class Site:
    """One code checkout serving the shared database: manage.py and gunicorn."""

    def __init__(self, code: Path, env: dict[str, str], log: Path) -> None:
        self.code, self.env, self.log = code, env, log
        self.web: subprocess.Popen[bytes] | None = None
        self.base_url = ""

    def manage(self, *args: str) -> str:
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=self.code,
                              env=self.env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"manage.py {args}: {done.stderr[-3000:]}"
        return done.stdout

    def start(self) -> Site:
        port = free_port()
        self.base_url = f"http://127.0.0.1:{port}"
        with self.log.open("ab") as log:
            self.web = subprocess.Popen(
                [str(Path(sys.executable).parent / "gunicorn"), "dedupsite.wsgi", "--bind",
                 f"127.0.0.1:{port}", "--workers", "2", "--timeout", "120"],
                cwd=self.code, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with contextlib.suppress(requests.RequestException):
                requests.get(f"{self.base_url}/api/v1/health", timeout=5)
                return self
            assert self.web.poll() is None, self.log.read_text()[-3000:]
            time.sleep(0.5)
        raise AssertionError("gunicorn did not answer")

    def stop(self) -> None:
        if self.web is not None:
            self.web.terminate()
            self.web.wait(timeout=60)
            self.web = None

    def post(self, key: str, articles: list[dict]) -> dict[str, int]:
        answer = requests.post(f"{self.base_url}/api/v1/articles", params={"wait": 10},
                               json={"articles": articles}, timeout=60,
                               headers={"Authorization": f"Bearer {key}"})
        assert answer.status_code == 200, answer.text
        return {result["nid"]: result["docId"] for result in answer.json()["results"]}

    def doc_id(self, key: str, nid: str) -> int:
        return requests.get(f"{self.base_url}/api/v1/articles/{nid}", timeout=30,
                            headers={"Authorization": f"Bearer {key}"}).json()["docId"]


def test_an_upgrade_from_the_last_release_keeps_every_docid(tmp_path):
    old_code = checkout(last_release(), tmp_path / "release")
    servers = load_testenv().TestEnv()
    servers.start({})
    env = {"PATH": "/usr/bin:/bin", "DEBUG": "false", "SECRET_KEY": "upgrade-" + "x" * 50,
           "ALLOWED_HOSTS": "127.0.0.1", "SECURE_SSL_REDIRECT": "false",
           "DEDUPSITE_VAR_DIR": str(tmp_path / "var"), "DEDUPSITE_WARMUP": "0",
           "DJANGO_SETTINGS_MODULE": "dedupsite.settings", "LOG_LEVEL": "WARNING",
           "DATABASE_URL": servers.exports["DATABASE_URL"],
           "REDIS_URL": servers.exports["REDIS_URL"]}
    old = Site(old_code, env, tmp_path / "old.log")
    new = Site(ROOT, env, tmp_path / "new.log")
    originals, reposts = stories.originals(), stories.reposts()
    try:
        for step in release_steps(old_code):  # the old release installed as it shipped
            old.manage(*step)
        key = old.manage("create_api_key", "crawler").strip().splitlines()[-1]
        old.start()
        given = old.post(key, originals)
        reposted = old.post(key, reposts)
        old.stop()

        outputs = [new.manage(*step) for step in release_steps(ROOT)]
        assert "rebuild_index" in [step[0] for step in release_steps(ROOT)]
        unapplied = [line for line in new.manage("showmigrations", "--plan").splitlines()
                     if line.startswith("[ ]")]
        assert not unapplied, unapplied

        new.start()
        assert {nid: new.doc_id(key, nid) for nid in given} == given
        assert {nid: new.doc_id(key, nid) for nid in reposted} == reposted
        again = new.post(key, [{**item, "nid": f"again-{item['nid']}"} for item in reposts])
        assert {nid.removeprefix("again-"): doc for nid, doc in again.items()} == reposted
    finally:
        old.stop()
        new.stop()
        servers.stop()
    print("release steps' output:", [output.strip()[-80:] for output in outputs])
