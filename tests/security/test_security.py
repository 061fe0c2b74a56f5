"""Nothing is reachable without the right login or key; headers; lockout; deploy checks."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.urls import URLPattern, URLResolver, get_resolver

ROOT = Path(__file__).resolve().parents[2]

# Reachable without a login or key, on purpose.
PUBLIC = {"accounts/login/", "i18n/setlang/",
          "api/v1/health", "api/openapi.json", "api/docs", "admin/login/",
          "accounts/logout/", "", "admin/logout/",
          "favicon.ico"}  # a redirect to the static icon


def walk(patterns, prefix=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern)


def concrete(route: str) -> str:
    route = route.lstrip("^").rstrip("$").replace("\\Z", "")
    route = re.sub(r"<(?:\w+:)?(\w+)>", "x1", route)
    route = re.sub(r"\(\?P<\w+>[^)]*\)", "x1", route)
    return "/" + route.replace("\\", "")


@pytest.mark.django_db
def test_every_route_refuses_an_anonymous_visitor(client, redis_client):
    routes = sorted(set(walk(get_resolver().url_patterns)))
    assert len(routes) > 20
    client.defaults["REMOTE_ADDR"] = "203.0.113.5"  # /metrics answers loopback callers
    checked = 0
    for route in routes:
        if route in PUBLIC or "(?P<path>" in route or route.startswith("static/"):
            continue
        path = concrete(route)
        for method in ("get", "post"):
            response = getattr(client, method)(path)
            assert response.status_code in (301, 302, 400, 401, 403, 404, 405), (
                f"{method.upper()} {path} answered {response.status_code} to a stranger")
            if response.status_code in (301, 302):
                assert "login" in response["Location"], (path, response["Location"])
            checked += 1
    assert checked > 30


@pytest.mark.django_db
def test_pages_send_a_strict_content_security_policy(client, redis_client):
    response = client.get("/accounts/login/")
    csp = response["Content-Security-Policy"]
    script_src = csp.split("script-src")[1].split(";")[0]
    assert script_src.strip() == "'self'"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert "<script>" not in response.content.decode()


@pytest.mark.django_db
def test_repeated_failed_logins_lock_the_account_out(client, redis_client):
    User.objects.create_user("editor", password="right-password-123")
    for _ in range(5):
        client.post("/accounts/login/", {"username": "editor", "password": "wrong"})
    response = client.post("/accounts/login/", {"username": "editor",
                                                "password": "right-password-123"})
    assert response.status_code == 200  # the form again, not a redirect
    assert "_auth_user_id" not in client.session
    redis_client.flushdb()  # the lockout expires
    response = client.post("/accounts/login/", {"username": "editor",
                                                "password": "right-password-123"})
    assert response.status_code == 302


@pytest.mark.django_db
def test_csrf_is_enforced_on_forms(redis_client):
    from django.test import Client

    User.objects.create_user("editor", password="right-password-123")
    strict = Client(enforce_csrf_checks=True)
    response = strict.post("/accounts/login/", {"username": "editor",
                                                "password": "right-password-123"})
    assert response.status_code == 403


def test_check_deploy_is_clean_with_production_settings():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {**env, "DEBUG": "false", "SECRET_KEY": "k" * 30 + "-production-secret-key-xyz",
           "ALLOWED_HOSTS": "dedup.example.com"}
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level",
                             "WARNING"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


RESET_PAGES = ["/accounts/password_reset/", "/accounts/password_reset/done/",
               "/accounts/reset/MQ/set-password/", "/accounts/reset/done/"]


@pytest.mark.django_db
def test_the_password_reset_pages_exist_only_with_mail_and_are_limited(client, redis_client,
                                                                       settings):
    settings.EMAIL_HOST = ""
    for page in RESET_PAGES:
        assert client.get(page).status_code == 404, page
    settings.EMAIL_HOST = "mail.example"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.PASSWORD_RESET_LIMIT = 2
    assert client.get(RESET_PAGES[0]).status_code == 200
    asked = [client.post(RESET_PAGES[0], {"email": "nobody@example.org"},
                         REMOTE_ADDR="10.0.0.7").status_code for _ in range(3)]
    assert asked == [302, 302, 429]
    assert client.post(RESET_PAGES[0], {"email": "nobody@example.org"},
                       REMOTE_ADDR="10.0.0.8").status_code == 302
    # a known address gets its mail, from DEFAULT_FROM_EMAIL
    from django.core import mail

    settings.DEFAULT_FROM_EMAIL = "desk@example.org"
    User.objects.create_user("editor", email="editor@example.org", password="x" * 20)
    client.post(RESET_PAGES[0], {"email": "editor@example.org"}, REMOTE_ADDR="10.0.0.9")
    assert [(m.to, m.from_email) for m in mail.outbox] == [(["editor@example.org"],
                                                            "desk@example.org")]


@pytest.mark.django_db
def test_the_admin_warns_when_a_proxy_stands_in_front_unconfigured(admin_client, settings):
    settings.TRUSTED_PROXIES = 0
    assert b"proxy-warning" not in admin_client.get("/admin/").content
    behind = admin_client.get("/admin/", HTTP_X_FORWARDED_FOR="198.51.100.7")
    assert b"proxy-warning" in behind.content and b"TRUSTED_PROXIES is 0" in behind.content
    admin_client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/admin/"})
    chinese = admin_client.get("/admin/", HTTP_X_FORWARDED_FOR="198.51.100.7")
    assert "TRUSTED_PROXIES 为 0" in chinese.content.decode()
    settings.TRUSTED_PROXIES = 1
    assert b"proxy-warning" not in admin_client.get(
        "/admin/", HTTP_X_FORWARDED_FOR="198.51.100.7").content
