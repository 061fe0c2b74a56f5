"""X-Forwarded-Proto is believed only behind a trusted proxy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READ = ("import django; django.setup(); from django.conf import settings; "
        "print(getattr(settings, 'SECURE_PROXY_SSL_HEADER', None))")


@pytest.mark.parametrize(("proxies", "expected"), [
    ("0", "None"), ("1", "('HTTP_X_FORWARDED_PROTO', 'https')")])
def test_the_forwarded_proto_header_needs_a_trusted_proxy(proxies, expected, tmp_path):
    env = {**os.environ, "DEBUG": "false", "SECRET_KEY": "k" * 60, "TRUSTED_PROXIES": proxies,
           "ALLOWED_HOSTS": "example.org", "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
           "DJANGO_SETTINGS_MODULE": "dedupsite.settings"}
    done = subprocess.run([sys.executable, "-c", READ], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == expected


def test_the_mail_settings_come_from_the_environment(tmp_path):
    read = ("import django; django.setup(); from django.conf import settings as s; "
            "print(s.EMAIL_HOST, s.EMAIL_PORT, s.DEFAULT_FROM_EMAIL, s.PASSWORD_RESET_LIMIT)")
    env = {**os.environ, "EMAIL_HOST": "smtp.example.org", "EMAIL_PORT": "587",
           "DEFAULT_FROM_EMAIL": "desk@example.org", "PASSWORD_RESET_LIMIT": "3",
           "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
           "DJANGO_SETTINGS_MODULE": "dedupsite.settings"}
    done = subprocess.run([sys.executable, "-c", read], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "smtp.example.org 587 desk@example.org 3"
