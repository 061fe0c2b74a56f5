"""CHANGELOG.md tells an operator what each release needs: every entry says recompute,
decisions, migrations and rollback; each release names a commit of this history; the
newest entry names every migration added since the release before it and says
`decisions: yes` when a shipped model or list file changed since."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIELDS = ("recompute", "decisions", "migrations", "rollback")
DECIDING_FILES = ("fingerprints/rule/data/vector_model.json",
                  "fingerprints/rule/data/match_model.json",
                  "fingerprints/rule/data/rule_model.json",
                  "fingerprints/rule/data/boilerplate.txt")


def entries() -> list[tuple[str, str]]:
    """(title, body) of each `## ` section, newest first."""
    parts = re.split(r"^## (.+)$", (ROOT / "CHANGELOG.md").read_text(), flags=re.M)
    return list(zip(parts[1::2], parts[2::2], strict=True))


def field(body: str, name: str) -> str:
    found = re.search(rf"^- {name}: (.+)$", body, flags=re.M)
    assert found, f"no {name}"
    return found.group(1)


def git(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True)


def test_every_entry_says_what_the_release_needs():
    found = entries()
    assert found and found[0][0] == "Unreleased"
    for title, body in found:
        assert re.match(r"(yes|no)\b", field(body, "recompute")), title
        assert re.match(r"(yes|no)\b", field(body, "decisions")), title
        assert re.match(r"(none|\d{4})", field(body, "migrations")), title
        assert re.match(r"(without a restore|restore the backup)", field(body, "rollback")), \
            title


def release_commits() -> dict[str, str]:
    return {title: field(body, "commit").split()[0] for title, body in entries()
            if title != "Unreleased"}


def test_each_release_names_its_commit_and_tag():
    releases = release_commits()
    assert releases["v0.1"] == "b7a6c35"
    if git("cat-file", "-e", "b7a6c35^{commit}").returncode != 0:
        pytest.skip("a shallow clone: the releases' commits are not here")
    for title, commit in releases.items():
        assert git("cat-file", "-e", f"{commit}^{{commit}}").returncode == 0, title
        tagged = git("rev-parse", "--short=7", f"refs/tags/{title}^{{commit}}")
        if tagged.returncode == 0:  # the tag, where this repository keeps it
            assert tagged.stdout.strip() == commit, title


def test_the_newest_entry_names_what_changed_since_the_last_release():
    (last_release, commit), *_ = release_commits().items()
    if git("cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        pytest.skip("a shallow clone: the last release's commit is not here")
    newest = entries()[0][1]
    changed = git("diff", "--name-only", "--diff-filter=AMR", commit, "--",
                  "articles/migrations", *DECIDING_FILES).stdout.split()
    added = git("diff", "--name-only", "--diff-filter=A", commit, "--",
                "articles/migrations").stdout.split()
    for path in added:
        number = Path(path).name[:4]
        if number.isdigit():
            assert number in field(newest, "migrations"), f"{path} is new since {last_release}"
    if any(path in DECIDING_FILES for path in changed):
        assert field(newest, "decisions").startswith("yes"), \
            f"a model or list changed since {last_release}: {changed}"
