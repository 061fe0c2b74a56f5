"""docs/operations.md run as written, every shell block of it, on a fresh machine made of
this one (support/sandbox: an overlay of /, a network and process namespace of its own, so
that nothing of this machine changes and no port of it is taken). systemd is absent there
and the network too: `systemctl` runs each unit's ExecStart with its User,
WorkingDirectory and EnvironmentFile, `apt-get install` checks that the packages are
installed, `make install-prod` installs from a wheelhouse of constraints.txt's pins, the
doc's git URL reaches a copy of the working tree (tagged as the next release, the last
release tagged at its commit), dedup.example.com resolves to the sandbox and a local ACME
server (pebble) stands in for Let's Encrypt, with the machine's certbot. In order:

1. the install block; then health over HTTPS through nginx (the self-signed pair checked
   for the site's name), an article posted through nginx gets its docId, /static/
   served, the admin the doc made signs in through nginx and sees /ops/, Prometheus
   scrapes the job (up) with the rules loaded and knows the Alertmanager;
2. the certificate block: certbot --webroot answers the ACME server's HTTP-01 challenge
   through the site's port 80, nginx serves the issued certificate, the webroot is what
   /.well-known/acme-challenge/ serves (everything else on port 80 redirects), and a
   renewal (what certbot.timer runs, forced) reloads nginx with a new certificate;
3. the stories posted, the backup block, reposts, the service stopped and its
   representative store lost, the restore block; then the index was rebuilt and the
   store refilled from the restored database, every article keeps its docId, the
   reposts get the docIds the original service gave them, the store equals the database
   (this replaces tests/drills/test_backup_restore.py, which ran the doc's steps);
4. the machine back to the last release (its tag checked out and installed, its release
   unit on a fresh database, its web and workers), the stories posted through nginx;
   the backup block again (the doc: "take a backup"), the upgrade block, CHANGELOG.md's
   entries since read (`rebuild_index --recompute` run if one says "recompute: yes");
   then every migration applied (those CHANGELOG.md names), every docId kept, reposts
   get the last release's docIds (this replaces tests/drills/test_upgrade.py);
5. with the webhook's URL set (the operator's edit the doc asks for) to a receiver of the
   drill's and a mail relay of the drill's on the address alertmanager.yml names, both
   workers killed: DedupsiteNoWorkers fires when the doc's table says (~4 min after a
   kill: there is no systemd to restart them), and the webhook and the mail get it.

A block the doc marks `# not run by the drill: WHY` (its first line) is not run and is
named with its reason; none is marked today."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.drill(slow=True)

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "support" / "sandbox"
DOC = ROOT / "docs" / "operations.md"
NOT_RUN = re.compile(r"# not run by the drill: (.+)")
# Each shell block of the doc, by what it does; support/sandbox/inner.sh runs them by name
BLOCKS = {"install": "# 1. packages", "certificate": "certbot certonly --webroot",
          "backup": "mysqldump ", "restore": "CREATE DATABASE dedupsite_restored",
          "upgrade": "git checkout"}
CHECKS = ("health over HTTPS through nginx", "an article posted through nginx got docId",
          "nginx serves /static/", "the admin the doc made signs in through nginx",
          "Prometheus scrapes the dedupsite job: up",
          "Prometheus sends alerts to the Alertmanager",
          "Prometheus loaded the dedupsite rules",
          "port 80 serves /.well-known/acme-challenge/ from /var/www/letsencrypt",
          "nginx serves the certificate certbot got", "a renewal reloads nginx",
          "the restore's steps rebuilt the index", "the restored service keeps every docId",
          "the restored service gives the reposts their docIds",
          "the representative store equals the restored database",
          "the upgrade applied every migration",
          "the upgraded service keeps every docId",
          "the upgraded service gives the reposts v0.1's docIds",
          "DedupsiteNoWorkers fires", "the webhook receiver gets DedupsiteNoWorkers",
          "the mail relay gets DedupsiteNoWorkers for ops@example.com")


def shell_blocks() -> dict[str, str]:
    """The doc's ```sh blocks by name (BLOCKS): each known, each once."""
    named: dict[str, str] = {}
    for block in re.findall(r"```sh\n(.*?)```", DOC.read_text(), flags=re.DOTALL):
        names = [name for name, mark in BLOCKS.items() if mark in block]
        assert len(names) == 1, ("a shell block of docs/operations.md the drill does not "
                                 f"know where to run (support/sandbox/inner.sh): {block[:200]}")
        assert names[0] not in named, f"two {names[0]} blocks"
        named[names[0]] = block
    assert set(named) == set(BLOCKS), f"blocks gone from the doc: {set(BLOCKS) - set(named)}"
    return named


def releases() -> tuple[str, str, str]:
    """CHANGELOG.md's newest release, its commit, and the tag the tree under test gets (the
    next minor version)."""
    text = (ROOT / "CHANGELOG.md").read_text()
    found = re.search(r"^## (v(\d+)\.(\d+))\n+- commit: ([0-9a-f]{7,40})", text, flags=re.M)
    assert found, "CHANGELOG.md names its newest release and its commit"
    name, major, minor, commit = found.groups()
    return name, commit, f"v{major}.{int(minor) + 1}"


def wheelhouse(cache: Path) -> Path:
    """The wheels of constraints.txt's pins and the build's own, fetched once per pin set."""
    pins = (ROOT / "constraints.txt").read_bytes()
    folder = cache / hashlib.sha1(pins).hexdigest()[:12]
    if not (folder / ".complete").exists():
        folder.mkdir(parents=True, exist_ok=True)
        # every pin, whatever this interpreter's markers say (Debian's python3 may need
        # what this one does not), and what building the project needs
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w",
                        str(folder), "-r", "constraints.txt", "setuptools>=68", "wheel"],
                       cwd=ROOT, check=True, timeout=1200)
        (folder / ".complete").touch()
    return folder


def test_every_block_of_the_doc_runs_as_written_and_the_service_works(tmp_path):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare (namespaces, an overlay mount, chroot)")
    missing = [program for program in ("certbot", "pebble") if not shutil.which(program)]
    if missing:
        pytest.skip(f"{missing} missing: scripts/install-system-deps.sh installs them")
    last, commit, following = releases()
    if subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT).returncode:
        pytest.skip(f"{last}'s commit {commit} is not in this clone (shallow?)")
    run = tmp_path / "run"
    for part in ("upper", "work", "root"):
        (run / part).mkdir(parents=True)
    blocks = tmp_path / "blocks"
    blocks.mkdir()
    not_run = {}
    for name, block in shell_blocks().items():
        marked = NOT_RUN.match(block.splitlines()[0])
        if marked:
            not_run[name] = marked.group(1)
            block = f"echo 'not run by the drill: {name}: {marked.group(1)}'\n"
        (blocks / f"{name}.sh").write_text(block)
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "SANDBOX": str(SANDBOX), "RUN": str(run),
           "SOURCE": str(ROOT), "BLOCKS": str(blocks),
           "STORIES": str(ROOT / "tests" / "drills" / "stories.py"),
           "LAST_RELEASE": last, "ITS_COMMIT": commit, "NEXT_RELEASE": following,
           "WHEELHOUSE": str(wheelhouse(Path("/tmp/dedupsite-drill-wheelhouse")))}
    done = subprocess.run(["unshare", "--mount", "--net", "--pid", "--fork", "--mount-proc",
                           str(SANDBOX / "outer.sh")], env=env, capture_output=True,
                          text=True, timeout=3000)
    log = done.stdout + done.stderr
    (tmp_path / "drill.log").write_text(log)
    steps = [line for line in log.splitlines()
             if line.startswith(("===", "ok:", "FAILED", "not run"))]
    print("\n".join(steps))
    print("blocks not run:", not_run or "none (every shell block of docs/operations.md ran)")
    assert done.returncode == 0, log[-6000:]
    ran = [line.split("the doc's ", 1)[1].split(" block")[0] for line in steps
           if line.startswith("===") and "the doc's " in line]
    assert sorted(set(ran)) == sorted(BLOCKS), ran
    assert "+ make install-prod" in log
    for check in CHECKS:
        assert any(line.startswith(f"ok: {check}") for line in steps), check
