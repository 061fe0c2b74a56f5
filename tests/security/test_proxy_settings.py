"""Settings a deployment gives through the environment, read in a fresh process:
X-Forwarded-Proto believed only behind a trusted proxy, the proxies' addresses
(TRUSTED_PROXY_IPS: a bad one stops the start), the mail settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def started(tmp_path: Path, code: str, **environ: str) -> subprocess.CompletedProcess[str]:
    """``code`` run after ``django.setup()`` in a process with ``environ`` added."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
           "DJANGO_SETTINGS_MODULE": "dedupsite.settings", **environ}
    return subprocess.run([sys.executable, "-c", f"import django; django.setup(); {code}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def printed(tmp_path: Path, expression: str, **environ: str) -> str:
    done = started(tmp_path, f"from django.conf import settings as s; print({expression})",
                   **environ)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize(("proxies", "expected"), [
    ("0", "None"), ("1", "('HTTP_X_FORWARDED_PROTO', 'https')")])
def test_the_forwarded_proto_header_needs_a_trusted_proxy(proxies, expected, tmp_path):
    assert printed(tmp_path, "getattr(s, 'SECURE_PROXY_SSL_HEADER', None)", DEBUG="false",
                   SECRET_KEY="k" * 60, TRUSTED_PROXIES=proxies,
                   ALLOWED_HOSTS="example.org") == expected


@pytest.mark.parametrize(("value", "expected"), [
    ("", "[IPv4Network('127.0.0.1/32'), IPv6Network('::1/128')]"),
    ("10.0.0.5, 10.1.0.0/16", "[IPv4Network('10.0.0.5/32'), IPv4Network('10.1.0.0/16')]")])
def test_the_proxy_addresses_come_from_the_environment(value, expected, tmp_path):
    assert printed(tmp_path, "s.TRUSTED_PROXY_IPS", TRUSTED_PROXY_IPS=value) == expected


def test_a_bad_proxy_address_stops_the_start(tmp_path):
    done = started(tmp_path, "pass", TRUSTED_PROXY_IPS="nginx.local")
    assert done.returncode != 0 and "TRUSTED_PROXY_IPS: 'nginx.local'" in done.stderr


def test_the_mail_settings_come_from_the_environment(tmp_path):
    assert printed(tmp_path, "s.EMAIL_HOST, s.EMAIL_PORT, s.DEFAULT_FROM_EMAIL, "
                   "s.PASSWORD_RESET_LIMIT", EMAIL_HOST="smtp.example.org", EMAIL_PORT="587",
                   DEFAULT_FROM_EMAIL="desk@example.org",
                   PASSWORD_RESET_LIMIT="3") == "smtp.example.org 587 desk@example.org 3"
