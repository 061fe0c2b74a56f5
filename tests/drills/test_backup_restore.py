"""docs/operations.md's backup and restore, on a populated service: its mysqldump (the
doc's options), a fresh database loaded from the dump, a fresh Redis and an empty
representative store, then the doc's manage.py steps in the doc's order. The restored
service gives the same docIds to the same reposts as the original did, keeps every
article's docId, and the representative store is refilled."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from support.stack import Stack
from tests.drills import stories

pytestmark = pytest.mark.drill(slow=True)

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "operations.md"


def section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"## {title}")
    return text[start:text.index("\n## ", start + 1)]


def doc_backup_options() -> list[str]:
    """The options of the doc's mysqldump line (up to the database's name)."""
    line = re.search(r"^mysqldump (.*?) dedupsite \\$", section("Backups and restores"),
                     flags=re.M)
    assert line, "the doc's backup runs mysqldump ... dedupsite"
    return shlex.split(line.group(1))


def doc_restore_commands() -> list[list[str]]:
    """The doc's `deploy/dedupsite-manage ...` steps of a restore, in order."""
    restore = section("Backups and restores").split("A restore", 1)[1]
    return [shlex.split(line.split("#", 1)[0])[1:]
            for line in restore.splitlines() if line.startswith("deploy/dedupsite-manage ")]


def client_args(database_url: str) -> list[str]:
    url = urlsplit(database_url)
    return ["-h", str(url.hostname), "-P", str(url.port), "-u", str(url.username),
            f"-p{url.password}"]


def program(*names: str) -> str:
    for name in names:
        if found := shutil.which(name):
            return found
    raise RuntimeError(f"none of {names}: apt-get install mariadb-client")


def post(stack: Stack, articles: list[dict]) -> dict[str, int]:
    answer = stack.session().post(f"{stack.base_url}/api/v1/articles", params={"wait": 10},
                                  json={"articles": articles}, timeout=60)
    assert answer.status_code == 200, answer.text
    return {result["nid"]: result["docId"] for result in answer.json()["results"]}


def test_a_restored_backup_gives_the_same_docids_to_the_same_reposts(tmp_path):
    restore_steps = doc_restore_commands()
    assert [step[0] for step in restore_steps] == [
        "migrate", "rebuild_index", "sync_representatives", "requeue_queued"]
    stack = Stack(tmp_path / "original")
    stack.start()
    timings: dict[str, float] = {}
    try:
        originals = stories.originals()
        given = post(stack, originals)
        assert len(set(given.values())) == len(stories.STORIES)  # two copies: one docId

        started = time.monotonic()
        dump = tmp_path / "dedupsite.sql"
        database = urlsplit(stack.database_url).path.lstrip("/")
        with dump.open("wb") as out:
            subprocess.run([program("mysqldump", "mariadb-dump"),
                            *client_args(stack.database_url), *doc_backup_options(), database],
                           stdout=out, check=True, timeout=300)
        timings["backup"] = time.monotonic() - started

        # reposts the original service answers after the backup: the restored service
        # must answer them alike
        reposts = stories.reposts()
        reposts.append({"nid": "r-new", "url": "https://elsewhere.example/new",
                        "title": "新的新闻", "content": "今天新开的图书馆藏书一百二十万册，"
                        "设有少儿阅览区和数字阅读区，周一至周日全天开放。"})
        before = post(stack, reposts)

        started = time.monotonic()
        restored_url = stack.database_url.rsplit("/", 1)[0] + "/dedupsite_restored"
        stack.sql("CREATE DATABASE dedupsite_restored CHARACTER SET utf8mb4")
        with dump.open("rb") as dumped:
            subprocess.run([program("mariadb", "mysql"), *client_args(stack.database_url),
                            "dedupsite_restored"], stdin=dumped, check=True, timeout=300)
        timings["load"] = time.monotonic() - started

        # the restored service: the restored database, a Redis database holding nothing
        # (the doc's flushdb), an empty representative store under a new var directory
        stack.stop_web()
        stack.database_url = restored_url
        stack.redis_url = stack.redis_url.rsplit("/", 1)[0] + "/3"
        stack.redis().flushdb()
        stack.workdir = tmp_path / "restored"
        stack.workdir.mkdir()
        outputs = {}
        for step in restore_steps:
            started = time.monotonic()
            outputs[step[0]] = stack.manage(*step)
            timings[step[0]] = time.monotonic() - started
        docs = len(set(given.values()))  # the backup's: taken before the reposts
        assert f"Indexed {len(originals)} articles." in outputs["rebuild_index"]
        assert f"Checked {docs} docIds: {docs} missing, 0 stale, 0 orphaned" \
            in outputs["sync_representatives"]
        stack.start_web()

        kept = {nid: stack.session().get(f"{stack.base_url}/api/v1/articles/{nid}",
                                         timeout=30).json()["docId"] for nid in given}
        assert kept == given
        # the reposts, as the original service got them after the backup: the restored
        # index matches each to the docId the original gave it; the new story, matching
        # nothing the backup holds, gets a docId of its own
        again = post(stack, reposts)
        for article in reposts[:-1]:
            assert again[article["nid"]] == before[article["nid"]], article["nid"]
        assert again["r-new"] not in given.values()
    finally:
        stack.stop()
    print("backup and restore drill, seconds per step:",
          {step: round(seconds, 2) for step, seconds in timings.items()})
