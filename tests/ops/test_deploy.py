"""The files under deploy/ are what an operator installs: each is checked by the tool
that will read it (promtool, nginx -t), or against what the project really has (the
metrics the dashboard graphs, the commands the units run)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command, get_commands

from dedupsite import metrics
from support.prometheus import DEPLOY, config_for, find
from support.proxy import Proxy

ROOT = Path(__file__).resolve().parents[2]


def test_the_alert_rules_pass_promtools_checks_and_unit_tests():
    checked = subprocess.run([find("promtool"), "check", "rules", "alerts.yml"], cwd=DEPLOY,
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = subprocess.run([find("promtool"), "test", "rules", "alerts.test.yml"],
                            cwd=DEPLOY, capture_output=True, text=True)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_promtool_fails_a_wrong_expectation(tmp_path):
    """The unit tests can fail: one expected annotation changed, promtool says so."""
    (tmp_path / "alerts.yml").write_text((DEPLOY / "alerts.yml").read_text())
    wrong = (DEPLOY / "alerts.test.yml").read_text().replace("holds 600 jobs", "holds 601 jobs")
    (tmp_path / "alerts.test.yml").write_text(wrong)
    tested = subprocess.run([find("promtool"), "test", "rules", "alerts.test.yml"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert tested.returncode != 0


def test_the_prometheus_config_is_valid(tmp_path):
    path = config_for(tmp_path, "127.0.0.1:8000", "token")
    checked = subprocess.run([find("promtool"), "check", "config", str(path)],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def exported_names() -> set[str]:
    from articles.ops import exporter

    names = set(metrics.METRICS) | {"up"}
    source = Path(exporter.__file__).read_text()
    names |= set(re.findall(r'"(dedupsite_[a-z_]+)"', source))
    return names


def test_every_alert_names_an_exported_metric():
    text = (DEPLOY / "alerts.yml").read_text()
    used = set(re.findall(r"\b(dedupsite_[a-z_]+|up)\b(?=[{\s)=<>])", text))
    assert used and used <= exported_names(), used - exported_names()


def test_the_grafana_dashboard_loads_and_graphs_only_exported_metrics():
    dashboard = json.loads((ROOT / "deploy" / "grafana" / "dedupsite.json").read_text())
    for key in ("uid", "title", "schemaVersion", "panels", "templating", "time"):
        assert key in dashboard, key
    assert isinstance(dashboard["schemaVersion"], int) and dashboard["schemaVersion"] >= 36
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    used: set[str] = set()
    for panel in dashboard["panels"]:
        assert panel["type"] in {"timeseries", "stat", "gauge", "table", "bargauge"}
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["x"] + grid["w"] <= 24 and grid["h"] > 0
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["refId"] and target["expr"]
            names = re.findall(r"\b(dedupsite_[a-z_]+)", target["expr"])
            assert names, target["expr"]
            used |= {re.sub(r"_(bucket|sum|count)$", "", n) for n in names}
    assert used <= exported_names(), used - exported_names()
    # the metrics an operator watches: every one of them is on the dashboard
    assert {"dedupsite_articles_received_total", "dedupsite_articles_processed_total",
            "dedupsite_article_failures_total", "dedupsite_processing_seconds",
            "dedupsite_queue_depth", "dedupsite_articles_oldest_queued_age_seconds",
            "dedupsite_job_wait_seconds", "dedupsite_job_run_seconds",
            "dedupsite_outbox_pending", "dedupsite_outbox_oldest_age_seconds",
            "dedupsite_index_articles", "dedupsite_index_redis_memory_bytes",
            "dedupsite_review_queue_size", "dedupsite_editor_decisions_total"} <= used


def units() -> dict[str, dict[str, list[str]]]:
    """Every unit file: section -> key -> values (a key may repeat, as ExecStart does)."""
    parsed: dict[str, dict[str, list[str]]] = {}
    for path in sorted((ROOT / "deploy" / "systemd").iterdir()):
        section = ""
        entries: dict[str, list[str]] = {}
        for line in path.read_text().splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("["):
                section = line.strip("[]")
                continue
            key, _sep, val = line.partition("=")
            entries.setdefault(f"{section}.{key}", []).append(val)
        parsed[path.name] = entries
    return parsed


def test_the_systemd_units_run_real_commands_and_restart_what_must_run():
    found = units()
    commands = get_commands()
    for name, entries in found.items():
        for exec_line in entries.get("Service.ExecStart", []):
            argv = exec_line.split()
            assert argv[0].startswith("/srv/dedupsite/.venv/bin/"), (name, argv)
            if argv[1:2] == ["manage.py"]:
                assert argv[2] in commands, (name, argv[2])
            else:
                assert argv[1:] == ["dedupsite.wsgi", "-c", "dedupsite/gunicorn.conf.py"]
        if name.endswith(".timer"):
            assert name.replace(".timer", ".service") in found
        if entries.get("Service.Type") == ["oneshot"]:
            continue
        if name.endswith(".service"):
            assert entries["Service.Restart"] == ["always"], name
            assert entries["Service.EnvironmentFile"] == ["/etc/dedupsite/env"], name
    assert "dedupsite-worker@.service" in found
    wanted = found["dedupsite.target"]["Unit.Wants"][0].split()
    assert all(unit.replace("@1", "@").replace("@2", "@") in found for unit in wanted)


def test_the_shipped_nginx_site_passes_nginx_t(tmp_path):
    checked = Proxy(tmp_path, upstream_port=8000).check()
    assert checked.returncode == 0, checked.stderr
    site = (ROOT / "deploy" / "nginx" / "dedupsite.conf").read_text()
    for directive in ("proxy_request_buffering on;", "proxy_buffering on;",
                      "client_max_body_size", "limit_conn dedupsite_conn", "ssl_certificate",
                      "server 127.0.0.1:8000;", "X-Forwarded-For $remote_addr"):
        assert directive in site, directive


@pytest.mark.django_db(transaction=True)
def test_rebuild_index_if_missing_rebuilds_once(redis_client, capsys):
    from articles.index import reindex

    call_command("rebuild_index", "--if-missing")
    assert "missing: rebuilt" in capsys.readouterr().out
    assert reindex.active_generation() is not None
    call_command("rebuild_index", "--if-missing")
    assert "present; nothing rebuilt" in capsys.readouterr().out


def test_dedup_worker_serves_the_queues_it_is_given_and_refuses_others():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="unknown: nope"):
        call_command("dedup_worker", "--queues", "images,nope")
    with pytest.raises(CommandError, match="none given"):
        call_command("dedup_worker", "--queues", ",")


def test_port_80_answers_the_acme_challenge_and_redirects_everything_else(tmp_path):
    """certbot --webroot (HTTP-01) needs the challenge file served over plain HTTP; every
    other request on port 80 goes to HTTPS."""
    import requests

    proxy = Proxy(tmp_path, upstream_port=8000).start()
    try:
        assert proxy.acme_dir is not None
        challenge = proxy.acme_dir / ".well-known" / "acme-challenge"
        challenge.mkdir(parents=True)
        (challenge / "token-123").write_text("token-123.thumbprint")
        base = f"http://127.0.0.1:{proxy.http_port}"
        served = requests.get(f"{base}/.well-known/acme-challenge/token-123",
                              allow_redirects=False, timeout=10)
        assert (served.status_code, served.text) == (200, "token-123.thumbprint")
        moved = requests.get(f"{base}/api/v1/health?x=1", allow_redirects=False, timeout=10)
        assert moved.status_code == 301
        assert moved.headers["Location"] == "https://127.0.0.1/api/v1/health?x=1"
    finally:
        proxy.stop()


def test_the_doc_puts_a_certificate_where_the_site_reads_it_before_nginx_t():
    doc = (ROOT / "docs" / "operations.md").read_text()
    site = (ROOT / "deploy" / "nginx" / "dedupsite.conf").read_text()
    cert = re.search(r"^\s*ssl_certificate (\S+);", site, flags=re.M).group(1)
    key = re.search(r"^\s*ssl_certificate_key (\S+);", site, flags=re.M).group(1)
    webroot = re.search(r"^\s*root (\S+);", site, flags=re.M).group(1)
    made = re.search(r"openssl req -x509 .*?-keyout (\S+) -out (\S+)\n", doc, flags=re.S)
    assert made and made.groups() == (key, cert)
    assert doc.index(made.group(0)) < doc.index("nginx -t")
    assert f"mkdir -p {webroot}" in doc and f"certbot certonly --webroot -w {webroot}" in doc
    assert re.search(rf"ln -sf /etc/letsencrypt/live/\S+/fullchain.pem {cert}\n", doc)
    assert re.search(rf"ln -sf /etc/letsencrypt/live/\S+/privkey.pem {key}\n", doc)
    alias = re.search(r"alias (\S+)/var/static/;", site).group(1)
    assert f"git clone https://git.example.com/dedupsite.git {alias}\n" in doc
