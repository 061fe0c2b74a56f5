"""docs/operations.md's install steps agree with the files they install: the settings the
doc writes let the shipped Prometheus scrape and nginx proxy through, the database user
matches the address DATABASE_URL connects to, the secrets the doc makes can stand in a
URL and the settings file, the token file's mode is the one the scrape config names."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import yaml
from django.http.request import validate_host

from dedupsite.envfile import parse

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "operations.md"
# $(command 'argument'): the doc's command substitutions quote their one argument
SUBSTITUTION = re.compile(r"\$\(([^'()]*'[^']*')\)")


def shell_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def install_block() -> str:
    (block,) = [block for block in shell_blocks() if block.startswith("# 1. packages")]
    return block


def env_file_as_written() -> str:
    """The heredoc of step 4, with each $(command) and $VARIABLE as the shell leaves them:
    a placeholder of the same kind of characters (the secrets are checked below)."""
    heredoc = re.search(r"cat >> /etc/dedupsite/env <<EOF\n(.*?)\nEOF\n", install_block(),
                        flags=re.DOTALL)
    assert heredoc, "step 4 writes /etc/dedupsite/env with a heredoc"
    text = SUBSTITUTION.sub("Secret_made-by-python3", heredoc.group(1))
    return re.sub(r"\$[A-Z_]+", "Password_made-by-python3", text)


def env_file() -> dict[str, str]:
    return parse(env_file_as_written())


def test_the_settings_file_sets_what_production_needs():
    settings = env_file()
    assert settings["DEBUG"] == "false"
    assert {"SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "REDIS_URL", "TRUSTED_PROXIES",
            "METRICS_TOKEN"} <= set(settings)
    documented = (ROOT / "docs" / "configuration.md").read_text()
    for name in settings:
        assert f"| `{name}`" in documented or f", `{name}`" in documented, name


def test_allowed_hosts_admit_the_shipped_scrape_and_the_shipped_site():
    """Prometheus scrapes gunicorn at the address of deploy/prometheus/prometheus.yml (its
    Host header); nginx forwards the client's Host, the site's server_name."""
    allowed = env_file()["ALLOWED_HOSTS"].split(",")
    config = yaml.safe_load((ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text())
    (job,) = [job for job in config["scrape_configs"] if job["job_name"] == "dedupsite"]
    targets = [target for group in job["static_configs"] for target in group["targets"]]
    site = (ROOT / "deploy" / "nginx" / "dedupsite.conf").read_text()
    names = set(re.findall(r"^\s*server_name ([^;]+);", site, flags=re.M)[0].split())
    assert targets and names
    for host in [target.rsplit(":", 1)[0] for target in targets] + sorted(names):
        assert validate_host(host, allowed), f"{host} is not in ALLOWED_HOSTS={allowed}"


def test_the_database_user_is_created_for_the_address_database_url_connects_to():
    url = urlsplit(env_file()["DATABASE_URL"])
    block = install_block()
    created = re.findall(r"CREATE USER (\w+)@'([^']+)'", block)
    granted = re.findall(r"GRANT ALL ON \w+\.\* TO (\w+)@'([^']+)'", block)
    assert created == granted == [(url.username, url.hostname)]
    assert url.hostname == "127.0.0.1"


def test_the_secrets_the_doc_makes_need_no_quoting():
    """SECRET_KEY, METRICS_TOKEN and the database password are used unquoted in the
    settings file and inside DATABASE_URL (the admin's password on a command line): made
    of letters, digits, - and _ only."""
    commands = SUBSTITUTION.findall(install_block())
    assert len(commands) == 4
    for command in commands:
        made = subprocess.run(["sh", "-c", command], capture_output=True, text=True,
                              check=True).stdout.strip()
        assert re.fullmatch(r"[A-Za-z0-9_-]{32,}", made), (command, made)
    lengths = {len(subprocess.run(["sh", "-c", command], capture_output=True, text=True,
                                  check=True).stdout.strip()) for command in commands}
    assert max(lengths) >= 50  # SECRET_KEY: Django's check --deploy wants 50 characters


def test_the_token_file_mode_is_the_one_the_scrape_config_names():
    doc = re.search(r"install -m (\d{4}) -o (\w+) -g (\w+) /dev/stdin "
                    r"/etc/prometheus/dedupsite-metrics-token", install_block())
    assert doc, "step 7 installs the token file with its mode and owner"
    config = (ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text()
    said = re.search(r"owner\s+(\w+),\s+group\s+(\w+),\s+mode\s+(\d{4})",
                     config.replace("#", " "))
    assert said
    assert (doc.group(2), doc.group(3), doc.group(1)) == said.groups()


def test_the_doc_keeps_no_fragile_shell():
    text = DOC.read_text()
    assert "env $(cat" not in install_block()  # breaks on comments, quotes, spaces
    assert "cut -d= -f2 " not in text  # truncates a value containing '='
    assert "make install " not in text and "make install\n" not in text  # the dev install
