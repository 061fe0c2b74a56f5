#!/bin/bash
# Inside the sandbox (outer.sh): start what Debian's packages start when installed, run
# the doc's install block as written (systemctl and apt-get are the stand-ins of
# /drill/bin: no systemd here, no network), then check the service (checks.py).
set -euo pipefail
export PATH=/drill/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
export PIP_NO_INDEX=1 PIP_FIND_LINKS=/drill/wheelhouse PIP_DISABLE_PIP_VERSION_CHECK=1
t0=$(date +%s)
step() { echo "=== $(( $(date +%s) - t0 ))s $*"; }
step "packages' services: mariadb, redis, nginx, prometheus, alertmanager"
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
mariadbd --user=mysql > /var/log/drill-mariadb.log 2>&1 &
mkdir -p /run/redis && chown redis:redis /run/redis
redis-server /etc/redis/redis.conf --daemonize yes
for i in $(seq 60); do [ -S /run/mysqld/mysqld.sock ] && break; sleep 0.5; done
systemctl start nginx prometheus
systemctl start prometheus-alertmanager || echo "(as on a machine without a private address: the doc configures it)"
step "the doc's install block"
cd /root
PS4='+ $(date +%T) ' bash -euo pipefail -x /drill/doc.sh
step "checks"
python3 /drill/checks.py
step "done"
