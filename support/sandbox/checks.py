"""Inside the sandbox, after docs/operations.md's install block (standard library only:
it runs on the machine's python3): the service answers over HTTPS through nginx, takes an
article and gives its docId, nginx serves the static files, Prometheus scrapes the job
with its rules loaded and knows the Alertmanager. Each check prints "ok: ..." or exits
with "FAILED: ...". With ALERT_DRILL=1, then: the workers killed, DedupsiteNoWorkers
fires when the doc says and reaches a webhook receiver."""

import http.client
import http.server
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

CERT = "/etc/ssl/certs/dedupsite.pem"
HOST = "dedup.example.com"


def https(method, path, body=None, headers=None):
    context = ssl.create_default_context(cafile=CERT)
    context.check_hostname = False  # the self-signed pair names dedup.example.com
    conn = http.client.HTTPSConnection("127.0.0.1", 443, context=context, timeout=30)
    conn.request(method, path, body=body, headers={"Host": HOST, **(headers or {})})
    answer = conn.getresponse()
    return answer.status, answer.read()


def prometheus(what):
    """The `data` of the sandbox's Prometheus API answer /api/v1/<what>."""
    with urllib.request.urlopen(f"http://127.0.0.1:9090/api/v1/{what}") as answer:
        return json.load(answer)["data"]


def until(what, probe, timeout=90):
    deadline = time.monotonic() + timeout
    while True:
        try:
            seen = probe()
            if seen:
                print(f"ok: {what}")
                return seen
        except (OSError, ValueError, KeyError) as exc:
            seen = exc
        if time.monotonic() > deadline:
            sys.exit(f"FAILED: {what}: {seen!r}")
        time.sleep(1)


def main():
    status, body = https("GET", "/api/v1/health")
    assert status == 200 and json.loads(body)["ok"] is True, (status, body)
    print("ok: health over HTTPS through nginx:", body.decode()[:80])
    key = subprocess.run(["/srv/dedupsite/deploy/dedupsite-manage", "create_api_key",
                          "drill-check"], cwd="/srv/dedupsite", capture_output=True,
                         text=True, check=True).stdout.strip().splitlines()[-1]
    article = {"nid": "drill-1", "url": "https://news.example/1", "title": "滨江绿道全线贯通",
               "content": "滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园。"}
    status, body = https("POST", "/api/v1/articles?wait=10",
                         json.dumps({"articles": [article]}),
                         {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    assert status == 200, (status, body)
    (result,) = json.loads(body)["results"]
    assert result["docId"], result
    print("ok: an article posted through nginx got docId", result["docId"])
    status, _ = https("GET", "/static/admin/css/base.css")
    assert status == 200, status
    print("ok: nginx serves /static/ from /srv/dedupsite/var/static/")

    until("Prometheus scrapes the dedupsite job: up", lambda: [
        target for target in prometheus("targets")["activeTargets"]
        if target["labels"]["job"] == "dedupsite" and target["health"] == "up"])
    until("Prometheus sends alerts to the Alertmanager",
          lambda: prometheus("alertmanagers")["activeAlertmanagers"])
    until("Prometheus loaded the dedupsite rules", lambda: [
        rule for group in prometheus("rules")["groups"] for rule in group["rules"]
        if rule["name"] == "DedupsiteNoWorkers"])


class Webhook(http.server.BaseHTTPRequestHandler):
    """The test receiver: the operator's webhook URL points here."""

    received: list = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Webhook.received.append((time.monotonic(), json.loads(body)))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def alert_drill():
    """The workers killed (no systemd here to restart them): DedupsiteNoWorkers fires when
    the doc's table says (~4 min after a kill) and reaches the webhook receiver."""
    config = Path("/etc/prometheus/alertmanager.yml")
    text = config.read_text()
    # the operator's edit the doc asks for: the webhook's URL
    text = text.replace("https://hooks.example.com/dedupsite-alerts",
                        "http://127.0.0.1:9095/dedupsite-alerts")
    config.write_text(text)
    subprocess.run(["systemctl", "restart", "prometheus-alertmanager"], check=True)
    server = http.server.HTTPServer(("127.0.0.1", 9095), Webhook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    time.sleep(20)  # Prometheus has seen the live workers
    for unit in ("dedupsite-worker@1.service", "dedupsite-worker@2.service"):
        pid = int(Path(f"/run/drill/{unit}.pid").read_text())
        os.killpg(pid, signal.SIGKILL)
    killed = time.monotonic()
    print("ok: both workers killed (SIGKILL)")

    until("DedupsiteNoWorkers fires", lambda: [
        alert for alert in prometheus("alerts")["alerts"]
        if alert["labels"]["alertname"] == "DedupsiteNoWorkers"
        and alert["state"] == "firing"], timeout=420)
    fired = time.monotonic() - killed

    def delivered():
        return [body for _at, body in Webhook.received
                if any(a["labels"]["alertname"] == "DedupsiteNoWorkers"
                       for a in body["alerts"])]
    until("the webhook receiver gets DedupsiteNoWorkers", delivered, timeout=120)
    received = Webhook.received[0][0] - killed
    print(f"ok: fired {fired / 60:.1f} min after the kill, received {received / 60:.1f} min "
          "after (docs/operations.md: ~4 min after it was killed)")
    if not 3 <= fired / 60 <= 5:
        sys.exit(f"FAILED: DedupsiteNoWorkers fired {fired / 60:.1f} min after the kill")


main()
if os.environ.get("ALERT_DRILL") == "1":
    alert_drill()
