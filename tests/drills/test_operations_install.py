"""docs/operations.md's install block, run as written on a fresh machine made of this one
(support/sandbox: an overlay of /, a network and process namespace of its own, so that
nothing of this machine changes and no port of it is taken). systemd is absent there and
the network too: `systemctl` runs each unit's ExecStart with its User, WorkingDirectory
and EnvironmentFile, `apt-get install` checks that the packages are installed, and
`make install-prod` installs from a wheelhouse of constraints.txt's pins. Then the
service answers health over HTTPS through nginx, an article posted through nginx gets its
docId, nginx serves the static files, Prometheus scrapes the job (up) with the rules
loaded and knows the Alertmanager; with the webhook's URL set (the operator's edit the doc
asks for) to a receiver of the drill's and both workers killed, DedupsiteNoWorkers fires
when the doc's table says (~4 min after a kill: there is no systemd to restart them) and
the receiver gets it."""

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


def install_block() -> str:
    text = (ROOT / "docs" / "operations.md").read_text()
    (block,) = [block for block in re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)
                if block.startswith("# 1. packages")]
    return block


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


def test_the_install_block_runs_as_written_and_the_service_works(tmp_path):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare (namespaces, an overlay mount, chroot)")
    run = tmp_path / "run"
    for part in ("upper", "work", "root"):
        (run / part).mkdir(parents=True)
    block = tmp_path / "doc.sh"
    block.write_text(install_block())
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "SANDBOX": str(SANDBOX), "RUN": str(run),
           "SOURCE": str(ROOT), "DOC_BLOCK": str(block),
           "WHEELHOUSE": str(wheelhouse(Path("/tmp/dedupsite-drill-wheelhouse"))),
           "ALERT_DRILL": "1"}
    done = subprocess.run(["unshare", "--mount", "--net", "--pid", "--fork", "--mount-proc",
                           str(SANDBOX / "outer.sh")], env=env, capture_output=True,
                          text=True, timeout=1800)
    log = done.stdout + done.stderr
    (tmp_path / "drill.log").write_text(log)
    steps = [line for line in log.splitlines() if line.startswith(("===", "ok:", "FAILED"))]
    print("\n".join(steps))
    assert done.returncode == 0, log[-4000:]
    assert "+ make install-prod" in log and "Error" not in log.split("=== ")[-2], log[-4000:]
    for check in ("health over HTTPS through nginx", "an article posted through nginx got docId",
                  "nginx serves /static/", "Prometheus scrapes the dedupsite job: up",
                  "Prometheus sends alerts to the Alertmanager",
                  "Prometheus loaded the dedupsite rules", "DedupsiteNoWorkers fires",
                  "the webhook receiver gets DedupsiteNoWorkers"):
        assert any(line.startswith(f"ok: {check}") for line in steps), check
