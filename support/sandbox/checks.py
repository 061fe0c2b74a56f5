"""Inside the sandbox, after each of docs/operations.md's blocks (inner.sh): what the block
left works. Standard library only: it runs on the machine's python3. Each check prints
"ok: ..." or exits with "FAILED: ...". `python3 checks.py STEP [ARG]`:

  install           health over HTTPS through nginx, an article gets its docId, /static/,
                    the admin the doc made signs in, Prometheus scrapes and has the rules
  certificate       the ACME challenge's webroot on port 80, the issued certificate
                    served, a renewal reloads nginx with a new one
  post originals    the stories posted through nginx (docIds kept in /drill/state)
  post reposts      a repost of each, and a new story, after the backup
  restored          the restored service keeps the docIds and answers the reposts alike
  last-release      the last release serves; the stories and reposts posted through it
  changelog         CHANGELOG.md's entries since it: --recompute run when one says so
  upgraded          every migration applied, docIds kept, reposts matched as before
  alerts            both workers killed: DedupsiteNoWorkers fires when the doc says and
                    reaches the webhook and the mail relay
"""

import http.server
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

sys.path.insert(0, "/drill")
import smtp_sink  # noqa: E402
import stories  # noqa: E402
from envfile import read  # noqa: E402

SITE = "https://dedup.example.com"
SELF_SIGNED = "/etc/ssl/certs/dedupsite.pem"
ACME_ROOT = Path("/drill/state/acme-root.pem")  # the ACME server's root, once certbot ran
STATE = Path("/drill/state")
CODE = Path("/srv/dedupsite")
BLOCK_LOGS = Path("/var/log/drill/blocks")


def fail(what):
    sys.exit(f"FAILED: {what}")


def tls(verify_with=None):
    """Checks the site's certificate for its name: the self-signed pair, then the ACME
    server's root."""
    return ssl.create_default_context(
        cafile=verify_with or (str(ACME_ROOT) if ACME_ROOT.exists() else SELF_SIGNED))


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def opener(*handlers, verify_with=None):
    return urllib.request.build_opener(urllib.request.HTTPSHandler(context=tls(verify_with)),
                                       *handlers)


def https(method, path, body=None, headers=None):
    """(status, body) of a request to the site through nginx."""
    request = urllib.request.Request(SITE + path, data=body, method=method,
                                     headers=headers or {})
    try:
        with opener().open(request, timeout=60) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def manage(*args):
    """manage.py as the units run it: deploy/dedupsite-manage where the checkout has it,
    else (an older release) the same by hand: the service user, the settings file."""
    helper = CODE / "deploy" / "dedupsite-manage"
    if helper.exists():
        argv, env = [str(helper), *args], None
    else:
        argv = [shutil.which("runuser"), "-u", "dedupsite", "--",
                str(CODE / ".venv" / "bin" / "python"), "manage.py", *args]
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(CODE),
               **read("/etc/dedupsite/env")}
    done = subprocess.run(argv, cwd=CODE, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"manage.py {' '.join(args)}: {done.stderr[-2000:]}")
    return done.stdout


def api_key(name):
    path = STATE / f"key-{name}"
    if not path.exists():
        path.write_text(manage("create_api_key", f"drill-{name}").strip().splitlines()[-1])
    return path.read_text()


def post(key, articles):
    status, body = https("POST", "/api/v1/articles?wait=10",
                         json.dumps({"articles": articles}).encode(),
                         {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    if status != 200:
        fail(f"POST /api/v1/articles: {status} {body[:300]!r}")
    given = {result["nid"]: result["docId"] for result in json.loads(body)["results"]}
    if not all(given.values()):
        fail(f"articles without a docId: {given}")
    return given


def doc_ids(key, nids):
    found = {}
    for nid in nids:
        status, body = https("GET", f"/api/v1/articles/{nid}",
                             headers={"Authorization": f"Bearer {key}"})
        found[nid] = json.loads(body)["docId"] if status == 200 else status
    return found


def save(name, value):
    (STATE / f"{name}.json").write_text(json.dumps(value))


def load(name):
    return json.loads((STATE / f"{name}.json").read_text())


def same(what, seen, expected):
    if seen != expected:
        fail(f"{what}: {seen} != {expected}")
    print(f"ok: {what} ({len(seen)})")


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
            fail(f"{what}: {seen!r}")
        time.sleep(1)


def health():
    status, body = https("GET", "/api/v1/health")
    if status != 200 or json.loads(body)["ok"] is not True:
        fail(f"health: {status} {body[:300]!r}")
    return body.decode()


def admin_signs_in():
    """The password step 5 printed; the admin's sign-in form through nginx, then /ops/."""
    printed = re.findall(r"^admin's password: (\S+)$",
                         (BLOCK_LOGS / "install.log").read_text(), flags=re.M)
    if not printed:
        fail("the install block printed no admin's password")
    browser = opener(urllib.request.HTTPCookieProcessor(CookieJar()))
    with browser.open(f"{SITE}/admin/login/", timeout=60) as page:
        form = page.read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
    if not token:
        fail("no sign-in form at /admin/login/")
    fields = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1), "username": "admin",
                                     "password": printed[-1], "next": "/admin/"}).encode()
    request = urllib.request.Request(f"{SITE}/admin/login/?next=/admin/", data=fields,
                                     headers={"Referer": f"{SITE}/admin/login/"})
    with browser.open(request, timeout=60) as page:
        landed, html = page.url, page.read().decode()
    if not landed.endswith("/admin/") or "logout" not in html:
        fail(f"the admin's sign-in went to {landed}")
    with browser.open(f"{SITE}/ops/", timeout=60) as page:
        if page.status != 200:
            fail(f"/ops/: {page.status}")
    print("ok: the admin the doc made signs in through nginx and sees /ops/")


def check_install():
    print("ok: health over HTTPS through nginx (the self-signed pair, for the site's name):",
          health()[:80])
    article = {"nid": "drill-1", "url": "https://news.example/1", "title": "滨江绿道全线贯通",
               "content": "滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园。"}
    given = post(api_key("install"), [article])
    print("ok: an article posted through nginx got docId", given["drill-1"])
    status, _ = https("GET", "/static/admin/css/base.css")
    if status != 200:
        fail(f"/static/: {status}")
    print("ok: nginx serves /static/ from /srv/dedupsite/var/static/")
    admin_signs_in()
    until("Prometheus scrapes the dedupsite job: up", lambda: [
        target for target in prometheus("targets")["activeTargets"]
        if target["labels"]["job"] == "dedupsite" and target["health"] == "up"])
    until("Prometheus sends alerts to the Alertmanager",
          lambda: prometheus("alertmanagers")["activeAlertmanagers"])
    until("Prometheus loaded the dedupsite rules", lambda: [
        rule for group in prometheus("rules")["groups"] for rule in group["rules"]
        if rule["name"] == "DedupsiteNoWorkers"])


def served_certificate():
    import socket

    with socket.create_connection(("dedup.example.com", 443), timeout=30) as raw, \
            tls().wrap_socket(raw, server_hostname="dedup.example.com") as conn:
        return conn.getpeercert()


def check_certificate():
    challenge = Path("/var/www/letsencrypt/.well-known/acme-challenge")
    challenge.mkdir(parents=True, exist_ok=True)
    (challenge / "drill-probe").write_text("drill-probe.thumbprint")
    plain = urllib.request.build_opener(NoRedirect)
    with plain.open("http://dedup.example.com/.well-known/acme-challenge/drill-probe",
                    timeout=30) as answer:
        served = answer.read().decode()
    try:
        plain.open("http://dedup.example.com/api/v1/health", timeout=30)
        moved = None
    except urllib.error.HTTPError as error:
        moved = (error.code, error.headers["Location"])
    (challenge / "drill-probe").unlink()
    if served != "drill-probe.thumbprint" or moved != (
            301, "https://dedup.example.com/api/v1/health"):
        fail(f"port 80: the challenge answered {served!r}, the rest {moved}")
    print("ok: port 80 serves /.well-known/acme-challenge/ from /var/www/letsencrypt "
          "(certbot --webroot's HTTP-01 passed through it), everything else moves to HTTPS")

    with opener(verify_with="/drill/acme/cert.pem").open(
            "https://127.0.0.1:15000/roots/0", timeout=30) as answer:
        ACME_ROOT.write_bytes(answer.read())
    # nginx's reload (the block's last step) is asynchronous: its workers start anew
    first = until("nginx serves the certificate certbot got, valid for dedup.example.com",
                  served_certificate, timeout=30)
    issuer = dict(pair[0] for pair in first["issuer"])["commonName"]
    print(f"ok: issued by {issuer} (the ACME server), serial {first['serialNumber']};"
          f" health over HTTPS with it: {health()[:40]}")

    # what certbot.timer runs (certbot.service), forced: a new certificate is not due
    subprocess.run(["certbot", "-q", "renew", "--no-random-sleep-on-renew", "--force-renewal"],
                   check=True)
    until("a renewal reloads nginx (the --deploy-hook): a new certificate is served",
          lambda: served_certificate()["serialNumber"] != first["serialNumber"], timeout=30)


def check_post(what):
    key = api_key("install")
    if what == "originals":
        articles = stories.originals()
        given = post(key, articles)
        if len(set(given.values())) != len(stories.STORIES):
            fail(f"two copies of a story, one docId: {given}")
        print(f"ok: the stories posted through nginx: {len(given)} articles, "
              f"{len(set(given.values()))} docIds")
        save("originals", given)
    else:
        articles = stories.reposts()
        articles.append({"nid": "r-new", "url": "https://elsewhere.example/new",
                         "title": "新的新闻", "content": "今天新开的图书馆藏书一百二十万册，"
                         "设有少儿阅览区和数字阅读区，周一至周日全天开放。"})
        given = post(key, articles)
        print(f"ok: reposts after the backup got docIds: {given}")
        save("reposts", given)
        save("repost-articles", articles)


def check_restored():
    key = api_key("install")
    given, before = load("originals"), load("reposts")
    health()
    # the backup held the install check's article and the stories' originals; the
    # representative store was lost (inner.sh): the restore's sync refilled it
    said = (BLOCK_LOGS / "restore.log").read_text()
    indexed = re.findall(r"^Indexed (\d+) articles\.$", said, flags=re.M)
    if indexed != [str(len(given) + 1)]:
        fail(f"rebuild_index after the restore: Indexed {indexed} articles")
    docs = len(set(given.values())) + 1
    refilled = f"Checked {docs} docIds: {docs} missing, 0 stale, 0 orphaned"
    if refilled not in said:
        fail(f"sync_representatives after the restore did not say {refilled!r}")
    print(f"ok: the restore's steps rebuilt the index ({indexed[0]} articles) and refilled "
          f"the representative store ({docs} docIds)")
    same("the restored service keeps every docId", doc_ids(key, given), given)
    again = post(key, load("repost-articles"))
    expected = {nid: doc for nid, doc in before.items() if nid != "r-new"}
    same("the restored service gives the reposts their docIds",
         {nid: doc for nid, doc in again.items() if nid != "r-new"}, expected)
    if again["r-new"] in given.values():
        fail("the new story joined an old docId")
    until("the reposts' representative changes pushed (the outbox empty)", outbox_empty,
          timeout=120)
    synced = manage("sync_representatives").strip().splitlines()[-1]
    if ": 0 missing, 0 stale, 0 orphaned" not in synced:
        fail(f"sync_representatives again: {synced}")
    print(f"ok: the representative store equals the restored database ({synced})")


def outbox_empty():
    """/metrics as Prometheus scrapes it (gunicorn on loopback, the token): no
    representative change waits for its push."""
    token = read("/etc/dedupsite/env")["METRICS_TOKEN"]
    request = urllib.request.Request("http://127.0.0.1:8000/metrics",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        pending = re.search(r"^dedupsite_outbox_pending (\S+)$", answer.read().decode(),
                            flags=re.M)
    return pending is not None and float(pending.group(1)) == 0


def check_last_release():
    described = subprocess.run(["git", "describe", "--tags"], cwd=CODE, capture_output=True,
                               text=True, check=True).stdout.strip()
    if described != os.environ["LAST_RELEASE"]:
        fail(f"the checkout is {described}")
    health()
    key = api_key("last-release")
    given = post(key, stories.originals())
    reposted = post(key, stories.reposts())
    save("last-given", given)
    save("last-reposted", reposted)
    save("last-migrations", applied_migrations())
    status, _ = https("GET", "/api/v1/changes", headers={"Authorization": f"Bearer {key}"})
    print(f"ok: {described} serves through nginx (GET /api/v1/changes: {status}); "
          f"{len(given)} stories' articles and {len(reposted)} reposts got docIds")


def applied_migrations():
    return sorted(line.split()[-1] for line in manage("showmigrations", "articles").splitlines()
                  if line.strip().startswith("[X]"))


def entries_since(release):
    """CHANGELOG.md's entries newer than the release, as {title: {field: value}}."""
    text = (CODE / "CHANGELOG.md").read_text()
    newer = text.split(f"\n## {release}\n", 1)[0]
    parts = re.split(r"^## (.+)$", newer, flags=re.M)[1:]
    return {title: dict(re.findall(r"^- (recompute|decisions|migrations|rollback): (.+)$",
                                    body, flags=re.M))
            for title, body in zip(parts[::2], parts[1::2], strict=True)}


def check_changelog():
    entries = entries_since(os.environ["LAST_RELEASE"])
    for title, fields in entries.items():
        said = {name: re.match(r"yes|no|none|[\d, ]*\d|without a restore|restore the backup",
                               value) for name, value in fields.items()}
        print(f"ok: CHANGELOG.md {title}: " + "; ".join(
            f"{name}: {found.group(0) if found else fields[name]}" for name, found in said.items()))
    if any(fields["recompute"].startswith("yes") for fields in entries.values()):
        print("(recompute: yes) deploy/dedupsite-manage rebuild_index --recompute")
        print(manage("rebuild_index", "--recompute").strip())
    else:
        print("ok: no entry says recompute: yes, so rebuild_index --recompute is not run")


def check_upgraded():
    described = subprocess.run(["git", "describe", "--tags"], cwd=CODE, capture_output=True,
                               text=True, check=True).stdout.strip()
    if described != os.environ["NEXT_RELEASE"]:
        fail(f"the upgrade checked out {described}")
    health()
    unapplied = [line for line in manage("showmigrations", "--plan").splitlines()
                 if line.startswith("[ ]")]
    if unapplied:
        fail(f"unapplied migrations: {unapplied}")
    new = sorted(set(applied_migrations()) - set(load("last-migrations")))
    named = set()
    for fields in entries_since(os.environ["LAST_RELEASE"]).values():
        named |= set(re.findall(r"\b(\d{4})\b", fields["migrations"]))
    if sorted(name[:4] for name in new) != sorted(named):
        fail(f"the upgrade applied {new}; CHANGELOG.md names {sorted(named)}")
    print(f"ok: the upgrade applied every migration ({len(new)} new, as CHANGELOG.md says:"
          f" {', '.join(name[:4] for name in new)})")
    key = api_key("last-release")
    given, reposted = load("last-given"), load("last-reposted")
    same("the upgraded service keeps every docId", doc_ids(key, given), given)
    same("the upgraded service keeps the reposts' docIds", doc_ids(key, reposted), reposted)
    again = post(key, [{**item, "nid": f"again-{item['nid']}"} for item in stories.reposts()])
    same("the upgraded service gives the reposts v0.1's docIds",
         {nid.removeprefix("again-"): doc for nid, doc in again.items()}, reposted)
    status, _ = https("GET", "/api/v1/changes", headers={"Authorization": f"Bearer {key}"})
    if status != 200:
        fail(f"GET /api/v1/changes (new in this release): {status}")
    print(f"ok: {described} serves (GET /api/v1/changes: 200)")


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


def check_alerts():
    """The workers killed (no systemd here to restart them): DedupsiteNoWorkers fires when
    the doc's table says (~4 min after a kill) and reaches the webhook receiver and, through
    the mail relay alertmanager.yml names (127.0.0.1:25), ops@example.com."""
    config = Path("/etc/prometheus/alertmanager.yml")
    text = config.read_text()
    # the operator's edit the doc asks for: the webhook's URL (the relay and the addresses
    # stay: the drill's relay listens where the shipped file says)
    text = text.replace("https://hooks.example.com/dedupsite-alerts",
                        "http://127.0.0.1:9095/dedupsite-alerts")
    config.write_text(text)
    smtp_sink.start(25)
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

    def hooked():
        return [at for at, body in Webhook.received
                if any(a["labels"]["alertname"] == "DedupsiteNoWorkers"
                       for a in body["alerts"])]

    def mailed():
        return [at for at, recipients, message in smtp_sink.RECEIVED
                if "ops@example.com" in recipients
                and "DedupsiteNoWorkers" in str(message["Subject"])]

    until("the webhook receiver gets DedupsiteNoWorkers", hooked, timeout=120)
    until("the mail relay gets DedupsiteNoWorkers for ops@example.com", mailed, timeout=120)
    print(f"ok: fired {fired / 60:.1f} min after the kill, posted {(hooked()[0] - killed) / 60:.1f}"
          f" min after, mailed {(mailed()[0] - killed) / 60:.1f} min after "
          "(docs/operations.md: ~4 min after it was killed)")
    if not 3 <= fired / 60 <= 5:
        fail(f"DedupsiteNoWorkers fired {fired / 60:.1f} min after the kill")


def main(step, *args):
    {"install": check_install, "certificate": check_certificate, "post": check_post,
     "restored": check_restored, "last-release": check_last_release,
     "changelog": check_changelog, "upgraded": check_upgraded,
     "alerts": check_alerts}[step](*args)


if __name__ == "__main__":
    main(*sys.argv[1:])
