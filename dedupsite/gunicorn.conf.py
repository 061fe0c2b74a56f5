"""gunicorn settings of `make web` (override any of them on the command line or with
GUNICORN_CMD_ARGS). docs/reliability.md explains the choices."""

import os

# Loopback only: clients reach gunicorn through nginx (deploy/nginx/dedupsite.conf), which
# buffers slow clients; to listen elsewhere, say so: GUNICORN_CMD_ARGS="--bind 0.0.0.0:8000".
bind = f"127.0.0.1:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
# Threads: a client that sends its request slowly holds one thread, not a whole worker
# (with sync workers two such clients stopped the site). A buffering proxy in front
# (nginx: docs/reliability.md) is still what protects against many of them.
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", "8"))
timeout = 30  # a worker silent this long is restarted
graceful_timeout = 30
keepalive = 5
# Requests whose line or headers are too long are refused by gunicorn itself.
limit_request_line = 8190
limit_request_fields = 100
accesslog = "-"
logger_class = "dedupsite.gunicorn_logging.RedactingLogger"
# No control socket (gunicornc): systemd's signals do its work, and under the service
# user, with no runtime directory and a read-only home, creating it fails at every start.
control_socket_disable = True
