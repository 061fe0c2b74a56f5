"""Alerts reach someone, when the doc says: docs/operations.md's alert table names every
rule of deploy/prometheus/alerts.yml with its `for`, and the time after the failure it
gives is what promtool's timing tests (alerts.test.yml) assert; Debian's Alertmanager
with deploy/alertmanager/alertmanager.yml mails every alert and posts a page to the
webhook."""

from __future__ import annotations

import json
import re
import socketserver
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import requests
import yaml

from support.prometheus import DEPLOY, config_for, find
from support.proxy import terminate
from support.stack import free_port

ROOT = Path(__file__).resolve().parents[2]
ALERTMANAGER = ROOT / "deploy" / "alertmanager" / "alertmanager.yml"
# alerts.test.yml's timing groups: healthy until 5m, failing from 5m
FAILURE_AT = 5.0


def rules() -> dict[str, dict]:
    groups = yaml.safe_load((DEPLOY / "alerts.yml").read_text())["groups"]
    return {rule["alert"]: rule for group in groups for rule in group["rules"]}


def doc_table() -> dict[str, list[str]]:
    text = (ROOT / "docs" / "operations.md").read_text()
    section = text[text.index("## Alerts"):text.index("## The dashboard")]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| Dedupsite"):
            cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
            rows[cells[0]] = cells[1:]
    return rows


def minutes(duration: str) -> float:
    value, unit = re.fullmatch(r"(\d+)([ms])", duration).groups()
    return int(value) / (60 if unit == "s" else 1)


def timing_tests(group_name: str) -> dict[str, tuple[float, float]]:
    """alertname -> (quiet at, firing at), in minutes, for one group of alerts.test.yml."""
    tests = yaml.safe_load((DEPLOY / "alerts.test.yml").read_text())["tests"]
    (group,) = [group for group in tests if group["name"] == group_name]
    found: dict[str, dict[str, float]] = {}
    for check in group["alert_rule_test"]:
        state = "firing" if check.get("exp_alerts") else "quiet"
        found.setdefault(check["alertname"], {})[state] = minutes(check["eval_time"])
    return {name: (times["quiet"], times["firing"]) for name, times in found.items()}


def test_the_doc_names_every_rule_with_its_for():
    table, shipped = doc_table(), rules()
    assert set(table) == set(shipped)
    for name, rule in shipped.items():
        fires_when = table[name][0]
        if "for" in rule:
            assert f"for {minutes(rule['for']):g} min" in fires_when, (name, fires_when)
        else:
            assert ", for " not in fires_when, name


def test_the_doc_says_how_long_after_its_failure_each_alert_fires_as_promtool_shows():
    table = doc_table()
    timed = timing_tests("each alert fires as long after its failure as the doc says")
    assert len(timed) >= 7
    for name, (quiet, firing) in timed.items():
        assert firing - quiet == 2, name  # quiet a minute before, firing a minute after
        said = re.match(r"~(\d+) min", table[name][1])
        assert said, (name, table[name][1])
        assert int(said.group(1)) == (quiet + firing) / 2 - FAILURE_AT, name


def test_a_killed_worker_fires_when_the_doc_says():
    (quiet, firing), = timing_tests(
        "a killed last worker fires DedupsiteNoWorkers four minutes later").values()
    after = (quiet + firing) / 2 - FAILURE_AT
    assert f"~{after:g} min after it was killed" in doc_table()["DedupsiteNoWorkers"][1]


def test_the_shipped_alertmanager_config_passes_amtool():
    checked = subprocess.run([find("amtool"), "check-config", str(ALERTMANAGER)],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "2 receivers" in checked.stdout


def test_the_shipped_prometheus_config_sends_alerts_to_the_alertmanager(tmp_path):
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    (target,) = config["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"]
    assert target == "127.0.0.1:9093"  # Debian's prometheus-alertmanager listens there
    path = config_for(tmp_path, "127.0.0.1:8000", "token", alertmanager=target)
    checked = subprocess.run([find("promtool"), "check", "config", str(path)],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


class Webhook(BaseHTTPRequestHandler):
    received: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Webhook.received.append(json.loads(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


class MailSink(socketserver.StreamRequestHandler):
    """Just enough SMTP for Alertmanager's client: every message is kept."""

    messages: list[str] = []

    def reply(self, line: str) -> None:
        self.wfile.write(f"{line}\r\n".encode())

    def handle(self) -> None:
        self.reply("220 sink")
        while line := self.rfile.readline().decode():
            verb = line[:4].upper()
            if verb == "EHLO":
                self.reply("250 sink")
            elif verb == "DATA":
                self.reply("354 go on")
                data = []
                while (part := self.rfile.readline().decode()) != ".\r\n":
                    data.append(part)
                MailSink.messages.append("".join(data))
                self.reply("250 kept")
            elif verb == "QUIT":
                self.reply("221 bye")
                return
            else:
                self.reply("250 ok")


def serve(server: socketserver.BaseServer) -> socketserver.BaseServer:
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def alertmanager_config(workdir: Path, smtp_port: int, webhook_port: int) -> Path:
    """The shipped routes and receivers with this machine's mail relay and webhook, and no
    30 s wait before the first notification."""
    config = yaml.safe_load(ALERTMANAGER.read_text())
    config["global"]["smtp_smarthost"] = f"127.0.0.1:{smtp_port}"
    config["route"]["group_wait"] = "1s"
    for receiver in config["receivers"]:
        for hook in receiver.get("webhook_configs", []):
            hook["url"] = f"http://127.0.0.1:{webhook_port}/alerts"
    path = workdir / "alertmanager.yml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.drill
def test_a_page_is_mailed_and_posted_and_a_warning_is_mailed(tmp_path):
    Webhook.received, MailSink.messages = [], []
    webhook = serve(HTTPServer(("127.0.0.1", 0), Webhook))
    mail = serve(socketserver.ThreadingTCPServer(("127.0.0.1", 0), MailSink))
    port = free_port()
    config = alertmanager_config(tmp_path, mail.server_address[1], webhook.server_address[1])
    with (tmp_path / "alertmanager.log").open("wb") as log:
        proc = subprocess.Popen(
            [find("prometheus-alertmanager"), f"--config.file={config}",
             f"--storage.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
             "--cluster.listen-address="],  # no gossip port: one Alertmanager
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(f"{url}/-/ready", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "alertmanager.log").read_text()
            time.sleep(0.2)
        alerts = [{"labels": {"alertname": "DedupsiteNoWorkers", "severity": "page"},
                   "annotations": {"summary": "no RQ worker listens on the ingest queue"}},
                  {"labels": {"alertname": "DedupsiteOutboxLag", "severity": "warn"},
                   "annotations": {"summary": "representative changes wait"}}]
        assert requests.post(f"{url}/api/v2/alerts", json=alerts, timeout=10).ok
        deadline = time.monotonic() + 30
        while len(MailSink.messages) < 2 or not Webhook.received:
            assert time.monotonic() < deadline, (tmp_path / "alertmanager.log").read_text()
            time.sleep(0.2)
        time.sleep(1)  # a warning posted to the webhook would arrive meanwhile
    finally:
        terminate(proc, 15)
        webhook.shutdown()
        mail.shutdown()
    posted = [alert["labels"]["alertname"] for body in Webhook.received
              for alert in body["alerts"]]
    assert posted == ["DedupsiteNoWorkers"]
    assert Webhook.received[0]["status"] == "firing"
    mailed = "\n".join(MailSink.messages)
    assert "DedupsiteNoWorkers" in mailed and "DedupsiteOutboxLag" in mailed
    assert "To: ops@example.com" in mailed
