"""Inside the sandbox, after docs/operations.md's install block (standard library only:
it runs on the machine's python3): the service answers over HTTPS through nginx, takes an
article and gives its docId, nginx serves the static files, Prometheus scrapes the job
with its rules loaded and knows the Alertmanager. Each check prints "ok: ..." or exits
with "FAILED: ..."."""

import http.client
import json
import ssl
import subprocess
import sys
import time
import urllib.request

CERT = "/etc/ssl/certs/dedupsite.pem"
HOST = "dedup.example.com"


def https(method, path, body=None, headers=None):
    context = ssl.create_default_context(cafile=CERT)
    context.check_hostname = False  # the self-signed pair names dedup.example.com
    conn = http.client.HTTPSConnection("127.0.0.1", 443, context=context, timeout=30)
    conn.request(method, path, body=body, headers={"Host": HOST, **(headers or {})})
    answer = conn.getresponse()
    return answer.status, answer.read()


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

    def target_up():
        with urllib.request.urlopen("http://127.0.0.1:9090/api/v1/targets") as answer:
            targets = json.load(answer)["data"]["activeTargets"]
        return [t for t in targets if t["labels"]["job"] == "dedupsite"
                and t["health"] == "up"]
    until("Prometheus scrapes the dedupsite job: up", target_up)

    def alertmanager_known():
        with urllib.request.urlopen("http://127.0.0.1:9090/api/v1/alertmanagers") as answer:
            return json.load(answer)["data"]["activeAlertmanagers"]
    until("Prometheus sends alerts to the Alertmanager", alertmanager_known)

    def rules_loaded():
        with urllib.request.urlopen("http://127.0.0.1:9090/api/v1/rules") as answer:
            groups = json.load(answer)["data"]["groups"]
        return [r for g in groups for r in g["rules"] if r["name"] == "DedupsiteNoWorkers"]
    until("Prometheus loaded the dedupsite rules", rules_loaded)


main()
