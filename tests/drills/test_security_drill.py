"""Drill: nobody is let in (what tests/security/test_security.py does not cover yet).

- every POST route refuses a logged-in editor's request without the CSRF token
  (forms and htmx actions alike; the token-authenticated API is exempt);
- a logged-in account without viewer or editor rights reaches no page;
- repeated failed logins lock the admin login out too, not only /accounts/login/;
- a revoked or altered API key is refused on every API call.
The anonymous URL-conf walk, CSP and headers, and `check --deploy` are in
tests/security/test_security.py.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import get_resolver

from articles.editor.actions import EDITORS_GROUP
from articles.models import ApiKey
from support.drill_records import write_record
from tests.security.test_security import PUBLIC, concrete, walk

pytestmark = [pytest.mark.drill, pytest.mark.django_db]

TOKEN_AUTH = ("api/", "docId/")  # API key, not a session: CSRF does not apply


def concrete_path(route: str) -> str:
    """A path that resolves: integers where the route wants an int, regex routes without
    their optional groups."""
    route = re.sub(r"\(\?P<\w+>[^)]*\)\?", "", route).replace("/?", "/")
    route = route.replace("^", "").replace("$", "")
    return concrete(re.sub(r"<int:(\w+)>", "1", route)).replace("//", "/")


def routes() -> list[str]:
    return sorted({r for r in walk(get_resolver().url_patterns)
                   if "(?P<path>" not in r and not r.startswith("static/")})


def test_nobody_is_let_in(redis_client):
    editor = User.objects.create_user("editor", password="right-password-123")
    editor.groups.add(Group.objects.get_or_create(name=EDITORS_GROUP)[0])
    nobody = User.objects.create_user("nobody", password="right-password-123")
    admin_user = User.objects.create_superuser("root", password="right-password-123")

    # 1. CSRF: every POST route, as a logged-in editor, without the token.
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(editor)
    csrf_checked, csrf_open = 0, []
    for route in routes():
        if route.startswith(TOKEN_AUTH):
            continue
        for extra in ({}, {"HTTP_HX_REQUEST": "true"}):  # a form post and an htmx post
            response = strict.post(concrete_path(route), {"note": "x"}, **extra)
            csrf_checked += 1
            if response.status_code != 403:
                csrf_open.append(f"POST {concrete_path(route)} {extra and 'htmx'}: "
                                 f"{response.status_code}")

    # 2. A logged-in account without rights reaches no page.
    # From another machine: /metrics answers loopback callers (no METRICS_TOKEN here).
    plain = Client(REMOTE_ADDR="203.0.113.5")
    plain.force_login(nobody)
    let_in = []
    for route in routes():
        if route in PUBLIC or route.startswith(TOKEN_AUTH) or route.startswith("accounts/"):
            continue
        response = plain.get(concrete_path(route))
        if response.status_code == 200:
            let_in.append(f"GET {concrete_path(route)}")

    # 3. The admin login locks out too.
    for _ in range(6):
        Client().post("/admin/login/?next=/admin/", {"username": "root", "password": "wrong"})
    admin_client = Client()
    response = admin_client.post("/admin/login/?next=/admin/",
                                 {"username": "root", "password": "right-password-123"})
    admin_locked = "_auth_user_id" not in admin_client.session
    assert admin_user.is_superuser

    # 4. Revoked, altered and foreign-prefixed keys are refused on every API call.
    key, plaintext = ApiKey.issue("crawler")
    altered = plaintext[:-1] + ("A" if plaintext[-1] != "A" else "B")
    other, other_plain = ApiKey.issue("other")
    forged = f"dd_{other.prefix}_{plaintext.split('_', 2)[2]}"
    key_refusals = []
    api = Client()
    calls = [("get", "/api/v1/articles/x"), ("post", "/api/v1/articles"),
             ("post", "/api/v1/similar"), ("get", "/api/v1/docs/x"),
             ("patch", "/api/v1/articles/x")]
    ApiKey.objects.filter(pk=key.pk).update(revoked_at="2020-01-01T00:00:00Z")
    for label, token in (("revoked", plaintext), ("altered", altered), ("forged", forged)):
        for method, path in calls:
            auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
            response = (api.get(path, **auth) if method == "get" else getattr(api, method)(
                path, data="{}", content_type="application/json", **auth))
            if response.status_code != 401:
                key_refusals.append(f"{label} key: {method.upper()} {path} "
                                    f"{response.status_code}")
    stored_plain = ApiKey.objects.filter(key_hash__in=[plaintext, other_plain]).exists()

    checks = {
        "CSRF token required on every POST route (forms and htmx)": not csrf_open,
        "no page for an account without rights": not let_in,
        "admin login locked out after repeated failures": admin_locked,
        "revoked, altered and forged keys refused on every API call": not key_refusals,
        "keys hashed at rest": not stored_plain,
    }
    write_record(
        "security",
        title="Nobody let in: CSRF, rights, lockout, keys",
        fault=f"{csrf_checked} POSTs without a CSRF token as a logged-in editor; every page as "
              "a logged-in account without rights; 6 wrong admin passwords then the right one; "
              f"{len(calls) * 3} API calls with revoked, altered and forged keys",
        system_did=f"{csrf_checked - len(csrf_open)}/{csrf_checked} POSTs refused (403); "
                   f"{len(let_in)} pages let the account in; admin login "
                   f"{'locked' if admin_locked else 'NOT locked'}; "
                   f"{len(calls) * 3 - len(key_refusals)}/{len(calls) * 3} key misuses refused "
                   "(401)",
        lost="nothing" if all(checks.values()) else "see checks",
        recovery_s=None,
        checks=checks,
        figures={"csrf_open": csrf_open, "let_in": let_in, "key_refusals": key_refusals},
    )
    assert not csrf_open, csrf_open
    assert not let_in, let_in
    assert admin_locked
    assert not key_refusals, key_refusals
    assert not stored_plain
