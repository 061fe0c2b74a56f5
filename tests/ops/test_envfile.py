"""/etc/dedupsite/env is read as systemd's EnvironmentFile= reads it (dedupsite/envfile.py),
and deploy/dedupsite-manage runs a command with exactly those settings, as the service
user: what `env $(cat /etc/dedupsite/env)` got wrong (a comment line, a quoted value, a
value with spaces) comes out as the units see it. Becoming the service user is tried
on a production install (tests/drills/test_install_prod.py)."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from dedupsite.envfile import EnvFileError, parse

ROOT = Path(__file__).resolve().parents[2]
MANAGE = ROOT / "deploy" / "dedupsite-manage"


def test_it_skips_comments_and_blank_lines():
    assert parse("# settings\n\n; also a comment\n  # indented\nA=1\n") == {"A": "1"}


def test_a_hash_after_the_value_is_part_of_it():
    assert parse("A=x # not a comment\n") == {"A": "x # not a comment"}


def test_it_keeps_every_equals_sign_of_a_value():
    assert parse("METRICS_TOKEN=ab=c==\n") == {"METRICS_TOKEN": "ab=c=="}


def test_it_trims_around_the_name_and_an_unquoted_value():
    assert parse("  NAME  =   two words   \n") == {"NAME": "two words"}


def test_single_quotes_keep_everything_literally():
    assert parse("A='x $y \\ # z'\nB='two\nlines'\n") == {"A": "x $y \\ # z",
                                                          "B": "two\nlines"}


def test_double_quotes_take_the_shells_escapes():
    assert parse('A="q \\"x\\" \\$HOME \\\\ \\n"\n') == {"A": 'q "x" $HOME \\ \\n'}


def test_quotes_open_only_where_a_value_starts():
    assert parse("A=foo\"bar\"\nB=\"a\" 'b'\n") == {"A": 'foo"bar"', "B": "ab"}


def test_a_backslash_escapes_and_continues_lines():
    assert parse("A=a\\\nb\nB=keep\\ \nC=x\n") == {"A": "ab", "B": "keep ", "C": "x"}


def test_a_later_line_wins():
    assert parse("A=1\nA=2\n") == {"A": "2"}


def test_it_names_the_line_of_an_unclosed_quote_or_a_line_without_a_name():
    with pytest.raises(EnvFileError, match="line 2: a quote"):
        parse("A=1\nB='open\n")
    with pytest.raises(EnvFileError, match="line 3: expected NAME=value"):
        parse("A=1\n\nexport B\n")
    with pytest.raises(EnvFileError, match="line 1: expected NAME=value"):
        parse("B-C=1\n")


ENV_FILE = """# dedupsite's settings
DEBUG=true
SECRET_KEY='a key with spaces # and a hash'
TIME_ZONE="Asia/Shanghai"
"""
SHOW = ("shell", "-c", "import os, json; print(json.dumps({k: os.environ.get(k) for k in "
        "('SECRET_KEY', 'TIME_ZONE', 'LEAKED', 'HOME', 'USER', 'DJANGO_SUPERUSER_PASSWORD')}"
        " | {'uid': os.getuid(), 'cwd': os.getcwd()}))")


def manage(env_file: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(MANAGE), "--env-file", str(env_file), *argv],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "LEAKED": "from the caller",
                               "DJANGO_SUPERUSER_PASSWORD": "for createsuperuser --noinput"})


def test_dedupsite_manage_prints_one_setting_as_read(tmp_path):
    env_file = tmp_path / "env"
    env_file.write_text(ENV_FILE + "METRICS_TOKEN=ab=c==\n")
    assert manage(env_file, "--get", "METRICS_TOKEN").stdout == "ab=c==\n"
    missing = manage(env_file, "--get", "NOPE")
    assert missing.returncode != 0 and "NOPE is not set" in missing.stderr


def test_dedupsite_manage_runs_manage_py_with_the_files_settings_only(tmp_path):
    import json

    env_file = tmp_path / "env"
    env_file.write_text(ENV_FILE + f"DEDUPSITE_VAR_DIR={tmp_path}\nDEDUPSITE_WARMUP=0\n"
                        f"DATABASE_URL={os.environ.get('DATABASE_URL', '')}\n")
    me = pwd.getpwuid(os.getuid()).pw_name
    ran = manage(env_file, "--user", me, *SHOW)
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout.strip().splitlines()[-1])
    assert seen["SECRET_KEY"] == "a key with spaces # and a hash"
    assert seen["TIME_ZONE"] == "Asia/Shanghai"
    assert seen["LEAKED"] is None
    # Django's createsuperuser --noinput reads its password from the caller's environment
    assert seen["DJANGO_SUPERUSER_PASSWORD"] == "for createsuperuser --noinput"
    assert seen["USER"] == me and seen["cwd"] == str(ROOT)
