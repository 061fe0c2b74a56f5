"""A real Prometheus server (Debian's package) scraping a running dedupsite, with the
shipped deploy/prometheus/prometheus.yml and alerts.yml: only the target, the token
file, the rule file's path and the intervals are this machine's.

    server = PrometheusServer(workdir, target="127.0.0.1:8000", token="...").start()
    server.query("sum(dedupsite_articles_processed_total)")   # -> float or None
    server.stop()
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import requests
import yaml

from support.proxy import terminate
from support.stack import free_port

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy" / "prometheus"


def find(program: str) -> str:
    found = shutil.which(program) or (f"/usr/bin/{program}"
                                      if Path(f"/usr/bin/{program}").exists() else None)
    if found is None:
        raise RuntimeError(f"{program} not found: scripts/install-system-deps.sh installs "
                           "Debian's prometheus package")
    return found


def config_for(workdir: Path, target: str, token: str, interval: str = "1s",
               alertmanager: str | None = None) -> Path:
    """deploy/prometheus/prometheus.yml with this machine's target, token file, rules and
    Alertmanager (none unless given: the shipped one's port may be anybody's here)."""
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    config["global"]["scrape_interval"] = interval
    config["global"]["evaluation_interval"] = interval
    config["rule_files"] = [str(DEPLOY / "alerts.yml")]
    if alertmanager is None:
        del config["alerting"]
    else:
        config["alerting"]["alertmanagers"][0]["static_configs"] = [{"targets": [alertmanager]}]
    (job,) = config["scrape_configs"]
    job["static_configs"] = [{"targets": [target]}]
    token_file = workdir / "token"
    token_file.write_text(token)
    job["authorization"]["credentials_file"] = str(token_file)
    path = workdir / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    return path


@dataclass
class PrometheusServer:
    workdir: Path
    target: str
    token: str
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> PrometheusServer:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        config = config_for(self.workdir, self.target, self.token)
        log = open(self.workdir / "prometheus.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [find("prometheus"), f"--config.file={config}",
             f"--storage.tsdb.path={self.workdir / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{self.url}/-/ready", timeout=2).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited; see {self.workdir / 'prometheus.log'}")
            time.sleep(0.2)
        raise RuntimeError("prometheus was not ready within 60 s")

    def query(self, expr: str) -> float | None:
        answer = requests.get(f"{self.url}/api/v1/query", params={"query": expr}, timeout=10)
        answer.raise_for_status()
        result = answer.json()["data"]["result"]
        return float(result[0]["value"][1]) if result else None

    def targets(self) -> list[dict]:
        answer = requests.get(f"{self.url}/api/v1/targets", timeout=10)
        return list(answer.json()["data"]["activeTargets"])

    def stop(self) -> None:
        terminate(self.proc, signal.SIGTERM, grace=20)
        self.proc = None
