"""The shipped nginx site (deploy/nginx/dedupsite.conf) run by an unprivileged nginx on
loopback, for the tests and the slow-client drill: the file itself, with only what a
deployment changes substituted (ports, certificate, static directory, upstream).

    proxy = Proxy(workdir, upstream_port=8000).start()   # https://127.0.0.1:{proxy.port}
    proxy.stop()
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from support.stack import free_port

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "deploy" / "nginx" / "dedupsite.conf"


def terminate(proc: subprocess.Popen[bytes] | None, sig: int, grace: float = 10) -> None:
    """Send ``sig``; SIGKILL when the process has not exited after ``grace`` seconds."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def find_nginx() -> str:
    for candidate in (shutil.which("nginx"), "/usr/sbin/nginx"):
        if candidate and Path(candidate).exists():
            return candidate
    raise RuntimeError("nginx not found: scripts/install-system-deps.sh installs nginx-light")


def site_for(port: int, http_port: int, upstream_port: int, cert: Path, key: Path,
             static_dir: Path, acme_dir: Path) -> str:
    """The shipped site with this machine's ports and paths; everything else verbatim."""
    text = SITE.read_text()
    swaps = [
        (r"listen 443 ssl http2;", f"listen 127.0.0.1:{port} ssl http2;"),
        (r"listen \[::\]:443 ssl http2;\n", ""),
        (r"listen 80;", f"listen 127.0.0.1:{http_port};"),
        (r"listen \[::\]:80;\n", ""),
        (r"server 127\.0\.0\.1:8000;", f"server 127.0.0.1:{upstream_port};"),
        (r"ssl_certificate /etc/ssl/certs/dedupsite\.pem;", f"ssl_certificate {cert};"),
        (r"ssl_certificate_key /etc/ssl/private/dedupsite\.key;", f"ssl_certificate_key {key};"),
        (r"alias /srv/dedupsite/var/static/;", f"alias {static_dir}/;"),
        (r"root /var/www/letsencrypt;", f"root {acme_dir};"),
    ]
    for pattern, replacement in swaps:
        text, n = re.subn(pattern, replacement, text)
        if n == 0:
            raise ValueError(f"deploy/nginx/dedupsite.conf no longer has {pattern!r}")
    return text


def main_config(workdir: Path, site: Path) -> str:
    """What Debian's /etc/nginx/nginx.conf gives the site, in a directory of our own."""
    user = "user root;" if os.geteuid() == 0 else ""  # workers read our private files
    return f"""
{user}
worker_processes 1;
pid {workdir}/nginx.pid;
error_log {workdir}/error.log warn;
events {{ worker_connections 2048; }}
http {{
    include /etc/nginx/mime.types;
    access_log {workdir}/access.log;
    client_body_temp_path {workdir}/body;
    proxy_temp_path {workdir}/proxy;
    fastcgi_temp_path {workdir}/fastcgi;
    uwsgi_temp_path {workdir}/uwsgi;
    scgi_temp_path {workdir}/scgi;
    include {site};
}}
"""


def self_signed(workdir: Path) -> tuple[Path, Path]:
    cert, key = workdir / "cert.pem", workdir / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key


@dataclass
class Proxy:
    workdir: Path
    upstream_port: int
    static_dir: Path | None = None
    port: int = 0
    # the ACME challenge's webroot (certbot --webroot -w): files under
    # .well-known/acme-challenge/ are served on http_port
    acme_dir: Path | None = None
    http_port: int = 0
    proc: subprocess.Popen[bytes] | None = None

    @property
    def conf(self) -> Path:
        return self.workdir / "nginx.conf"

    def write(self) -> Path:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port, self.http_port = free_port(), free_port()
        cert, key = self_signed(self.workdir)
        static = self.static_dir or self.workdir / "static"
        static.mkdir(parents=True, exist_ok=True)
        site = self.workdir / "dedupsite.conf"
        self.acme_dir = self.acme_dir or self.workdir / "acme"
        self.acme_dir.mkdir(parents=True, exist_ok=True)
        site.write_text(site_for(self.port, self.http_port, self.upstream_port, cert, key,
                                 static, self.acme_dir))
        self.conf.write_text(main_config(self.workdir, site))
        return self.conf

    def check(self) -> subprocess.CompletedProcess[str]:
        """``nginx -t`` on the configuration (written first when needed)."""
        if not self.conf.exists():
            self.write()
        return subprocess.run([find_nginx(), "-t", "-c", str(self.conf), "-p",
                               str(self.workdir), "-g", "daemon off;"],
                              capture_output=True, text=True)

    def start(self) -> Proxy:
        self.write()
        self.proc = subprocess.Popen(
            [find_nginx(), "-c", str(self.conf), "-p", str(self.workdir), "-g", "daemon off;"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(
                        f"nginx exited; see {self.workdir / 'error.log'}") from None
                time.sleep(0.1)
        raise RuntimeError("nginx did not listen within 20 s")

    def stop(self) -> None:
        terminate(self.proc, signal.SIGQUIT)  # graceful: finish the requests in flight
        self.proc = None
