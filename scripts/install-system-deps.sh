#!/usr/bin/env bash
# Install the Debian packages the test suite needs (idempotent).
#
#   scripts/install-system-deps.sh
#
# Only packages that are not installed yet are installed; `apt-get update` runs once,
# and only if something is missing. Services shipped by the packages (mariadb, redis)
# are NOT started: scripts/testenv.py runs throwaway servers of its own.
# Re-runs itself through sudo when not root. Exit status: 0 when everything is
# installed, 1 when it cannot be (not root and no sudo, not Debian, apt failure).
set -euo pipefail

PACKAGES=(
    mariadb-server
    mariadb-client
    redis-server
    default-libmysqlclient-dev
    pkg-config
    gcc  # builds mysqlclient and the engine kernel (fingerprints/rule/_kernel.c)
    chromium
    fonts-wqy-microhei
    openjdk-17-jre-headless  # Java for PySpark (spark_dedup, tests/batch)
    nginx-light  # the shipped proxy (deploy/nginx), run by tests/ops's slow-client drill
    prometheus  # scrapes /metrics in tests/ops; promtool tests deploy/prometheus/alerts.yml
    prometheus-alertmanager  # amtool checks deploy/alertmanager; tests/ops routes an alert to a receiver
    certbot  # docs/operations.md's certificate step, run by tests/drills/test_operations_doc.py
    pebble  # a local ACME server: Let's Encrypt's stand-in in that drill (no network there)
)

log() { printf 'install-system-deps: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

is_installed() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = "installed" ]
}

command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 \
    || die "dpkg/apt-get not found: this script supports Debian-like systems only"

missing=()
for pkg in "${PACKAGES[@]}"; do
    is_installed "$pkg" || missing+=("$pkg")
done

if [ "${#missing[@]}" -eq 0 ]; then
    log "all ${#PACKAGES[@]} packages already installed"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 \
        || die "not root and sudo is not available; as root run: apt-get install ${missing[*]}"
    sudo_flags=()
    [ -t 0 ] || sudo_flags=(-n)  # no terminal: fail instead of waiting for a password
    log "not root; re-running with sudo to install: ${missing[*]}"
    exec sudo "${sudo_flags[@]}" env DEBIAN_FRONTEND=noninteractive bash "$0" "$@"
fi

export DEBIAN_FRONTEND=noninteractive
log "installing: ${missing[*]}"

# Keep maintainer scripts from starting mariadb/redis: invoke-rc.d and deb-systemd-invoke
# consult /usr/sbin/policy-rc.d; exit code 101 means "action forbidden".
POLICY=/usr/sbin/policy-rc.d
policy_backup=""
if [ -e "$POLICY" ] || [ -L "$POLICY" ]; then
    policy_backup="$(mktemp)"
    cp -a "$POLICY" "$policy_backup"
fi
restore_policy() {
    if [ -n "$policy_backup" ]; then
        cp -a "$policy_backup" "$POLICY" && rm -f "$policy_backup"
    else
        rm -f "$POLICY"
    fi
}
trap restore_policy EXIT
printf '#!/bin/sh\n# temporary, from install-system-deps.sh: start no services\nexit 101\n' >"$POLICY"
chmod 755 "$POLICY"

aptlog="$(mktemp)"
apt_opts=(-y -q -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=300
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

if ! apt-get -q -o DPkg::Lock::Timeout=300 update >"$aptlog" 2>&1; then
    tail -n 30 "$aptlog" >&2
    die "apt-get update failed (full log: $aptlog)"
fi
if ! apt-get install "${apt_opts[@]}" --no-install-recommends "${missing[@]}" >"$aptlog" 2>&1; then
    tail -n 30 "$aptlog" >&2
    die "apt-get install ${missing[*]} failed (full log: $aptlog)"
fi

still=()
for pkg in "${missing[@]}"; do
    is_installed "$pkg" || still+=("$pkg")
done
[ "${#still[@]}" -eq 0 ] || die "still not installed after apt-get: ${still[*]} (log: $aptlog)"
rm -f "$aptlog"
log "installed ${#missing[@]} package(s): ${missing[*]}"
