#!/bin/bash
# Inside the sandbox (outer.sh): start what Debian's packages start when installed, then
# run docs/operations.md's shell blocks as written (/drill/blocks/NAME.sh; systemctl and
# apt-get are the stand-ins of /drill/bin: no systemd here, no network), each followed by
# the checks of what it left (checks.py). Each block runs in a shell of its own from
# root's home (it may rely on nothing an earlier block's shell kept), traced (bash -x),
# its output in /var/log/drill/blocks/NAME.log too. LAST_RELEASE, NEXT_RELEASE: outer.sh.
set -euo pipefail
export PATH=/drill/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
export PIP_NO_INDEX=1 PIP_FIND_LINKS=/drill/wheelhouse PIP_DISABLE_PIP_VERSION_CHECK=1
t0=$(date +%s)
step() { echo "=== $(( $(date +%s) - t0 ))s $*"; }
mkdir -p /var/log/drill/blocks /drill/state
doc() {  # the doc's block $1, as written
    step "the doc's $1 block"
    ( cd /root && PS4='+ $(date +%T) ' bash -euo pipefail -x /drill/blocks/$1.sh ) 2>&1 |
        tee /var/log/drill/blocks/$1.log
}
check() { python3 /drill/checks.py "$@"; }

step "packages' services: mariadb, redis, nginx, prometheus, alertmanager"
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
mariadbd --user=mysql > /var/log/drill-mariadb.log 2>&1 &
mkdir -p /run/redis && chown redis:redis /run/redis
redis-server /etc/redis/redis.conf --daemonize yes
for i in $(seq 60); do [ -S /run/mysqld/mysqld.sock ] && break; sleep 0.5; done
systemctl start nginx prometheus
systemctl start prometheus-alertmanager || echo "(as on a machine without a private address: the doc configures it)"
# the site's name resolves to this machine, as the doc's certificate step assumes
echo "127.0.0.1 dedup.example.com" >> /etc/hosts

doc install
step "checks of the install"
check install

step "Let's Encrypt's stand-in: pebble, a local ACME server (certbot's server in cli.ini)"
mkdir -p /drill/acme
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout /drill/acme/key.pem -out /drill/acme/cert.pem 2> /dev/null
cat > /drill/acme/pebble.json <<'EOF'
{"pebble": {"listenAddress": "127.0.0.1:14000", "managementListenAddress": "127.0.0.1:15000",
            "certificate": "/drill/acme/cert.pem", "privateKey": "/drill/acme/key.pem",
            "httpPort": 80, "tlsPort": 5001, "ocspResponderURL": "",
            "externalAccountBindingRequired": false}}
EOF
PEBBLE_VA_NOSLEEP=1 PEBBLE_WFE_NONCEREJECT=0 pebble -config /drill/acme/pebble.json \
    > /var/log/drill/pebble.log 2>&1 &
for i in $(seq 60); do
    python3 -c 'import socket; socket.create_connection(("127.0.0.1", 14000), 1)' 2> /dev/null && break
    sleep 0.5
done
echo "server = https://127.0.0.1:14000/dir" >> /etc/letsencrypt/cli.ini
export REQUESTS_CA_BUNDLE=/drill/acme/cert.pem  # certbot trusts the stand-in's HTTPS
doc certificate
step "checks of the certificate"
check certificate

step "the stories posted through nginx"
check post originals
doc backup
step "reposts after the backup"
check post reposts
step "the service stopped, its representative store lost with the database"
systemctl stop dedupsite.target
rm -f /srv/dedupsite/var/representatives.sqlite3*   # the local store (HBase's rows alike)
doc restore
step "checks of the restored service"
check restored

step "back to the last release: its tag checked out and installed, its release steps on a fresh database"
systemctl stop dedupsite.target
cd /srv/dedupsite
git checkout -q "$LAST_RELEASE"
.venv/bin/pip install --quiet -e .     # the release's runtime dependencies, offline
cp deploy/systemd/* /etc/systemd/system/
mariadb -e "DROP DATABASE dedupsite_restored; DROP DATABASE dedupsite;
            CREATE DATABASE dedupsite CHARACTER SET utf8mb4;"
sed -i 's|@127.0.0.1:3306/dedupsite_restored$|@127.0.0.1:3306/dedupsite|' /etc/dedupsite/env
redis-cli -n 0 flushdb > /dev/null
find var -mindepth 1 -delete
systemctl start dedupsite-release
systemctl start dedupsite.target
cd /root
step "the last release's service: the stories posted through nginx"
check last-release

doc backup
doc upgrade
step "CHANGELOG.md since the last release"
check changelog
step "checks of the upgraded service"
check upgraded

step "the alerts: both workers killed"
check alerts
step "done"
