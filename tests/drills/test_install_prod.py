"""`make install-prod` on a clone: a venv on Debian's Python with the pinned runtime
dependencies only, the C extensions built, gunicorn serving without a control socket
error as a user whose home is not writable, and deploy/dedupsite-manage running a
command as that user with the settings file's values."""

from __future__ import annotations

import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import requests

from support.stack import free_port

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.drill(slow=True)


def run(*argv: str, cwd: Path) -> str:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture
def shared_dir():
    """A directory the service user may read (pytest's own are the caller's only)."""
    path = Path(tempfile.mkdtemp(prefix="dedupsite-install-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_install_prod_on_a_clean_clone(shared_dir):
    tmp_path = shared_dir
    checkout = tmp_path / "dedupsite"
    run("git", "clone", "--quiet", str(ROOT), str(checkout), cwd=tmp_path)
    # the working tree's changed and new files, so that an uncommitted change is tried
    changed = (run("git", "diff", "--name-only", "HEAD", cwd=ROOT)
               + run("git", "ls-files", "--others", "--exclude-standard", cwd=ROOT))
    for name in changed.splitlines():
        if (ROOT / name).is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, checkout / name)
    run("make", "install-prod", cwd=checkout)
    python = checkout / ".venv" / "bin" / "python"
    assert python.resolve() == Path("/usr/bin/python3").resolve()
    installed = dict(line.split("==") for line in
                     run(str(python), "-m", "pip", "freeze", "--exclude-editable",
                         cwd=checkout).splitlines() if "==" in line)
    pinned = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text()
                  .splitlines() if "==" in line and not line.startswith("#"))
    normalized = {name.lower().replace("_", "-"): version for name, version in installed.items()}
    assert {name: normalized.get(name) for name in pinned} == pinned
    assert "pytest" not in normalized and "playwright" not in normalized
    run(str(python), "-c", "import fingerprints.rule._kernel, fingerprints.rule._segment",
        cwd=checkout)

    port = free_port()
    var = tmp_path / "var"
    var.mkdir()
    var.chmod(0o777)
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "DEDUPSITE_VAR_DIR": str(var),
           "DEDUPSITE_WARMUP": "0", "PORT": str(port)}
    log = tmp_path / "gunicorn.log"
    runuser = shutil.which("runuser") or "/usr/sbin/runuser"
    gunicorn = str(checkout / ".venv" / "bin" / "gunicorn")
    with log.open("wb") as out:
        server = subprocess.Popen(
            [runuser, "-u", "nobody", "--", gunicorn,
             "dedupsite.wsgi", "-c", "dedupsite/gunicorn.conf.py"],
            cwd=checkout, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        answered = None
        while time.monotonic() < deadline and answered is None:
            try:
                answered = requests.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=5)
            except requests.ConnectionError:
                time.sleep(0.5)
        assert answered is not None, log.read_text()
    finally:
        server.terminate()
        server.wait(timeout=60)
    assert "Control server error" not in log.read_text()

    # a command by hand, as the units run theirs: root reads the settings, then becomes
    # the service user in the checkout
    env_file = tmp_path / "env"
    env_file.write_text(f"# as in /etc/dedupsite/env\nDEDUPSITE_VAR_DIR='{var}'\n"
                        "DEDUPSITE_WARMUP=0\nTIME_ZONE=\"Asia/Shanghai\"\n")
    env_file.chmod(0o600)
    shown = run(str(checkout / "deploy" / "dedupsite-manage"), "--env-file", str(env_file),
                "--user", "nobody", "shell", "-c",
                "import os; from django.conf import settings; "
                "print(os.getuid(), os.getcwd(), settings.TIME_ZONE)", cwd=tmp_path)
    assert shown.splitlines()[-1].split() == [str(pwd.getpwnam("nobody").pw_uid), str(checkout),
                             "Asia/Shanghai"]
