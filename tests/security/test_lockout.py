"""Failed sign-ins slow an attacker down without letting a stranger lock a user out."""

from __future__ import annotations

import ipaddress

import pytest
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from dedupsite import counters
from dedupsite.security import account_name

pytestmark = pytest.mark.django_db

RIGHT = "right-password-123"


def sign_in(client, username, password, address="10.0.0.1", **headers):
    return client.post("/accounts/login/", {"username": username, "password": password},
                       REMOTE_ADDR=address, **headers)


def signed_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_the_failing_address_is_locked_out_for_a_fixed_while_and_told_so(client, redis_client,
                                                                         settings):
    User.objects.create_user("editor", password=RIGHT)
    for _ in range(settings.LOGIN_FAILURE_LIMIT):
        sign_in(client, "editor", "wrong")
    locked = sign_in(client, "editor", RIGHT)
    assert not signed_in(client)
    assert "temporarily locked" in locked.content.decode()
    counter = ("login", "fail", "editor", "10.0.0.1")
    count, ttl = counters.count(*counter), counters.ttl(*counter)
    for _ in range(5):  # tries during the lock neither count nor extend it
        sign_in(client, "editor", "wrong")
    assert counters.count(*counter) == count and counters.ttl(*counter) <= ttl


def test_a_stranger_elsewhere_cannot_lock_the_user_out(client, redis_client, settings):
    User.objects.create_user("editor", password=RIGHT)
    for _ in range(settings.LOGIN_FAILURE_LIMIT * 3):
        sign_in(client, "editor", "wrong", address="203.0.113.9")
    sign_in(client, "editor", RIGHT, address="10.0.0.1")
    assert signed_in(client)


def test_look_alike_usernames_share_the_accounts_count(client, redis_client, settings):
    User.objects.create_user("victim", password=RIGHT)
    assert account_name("VÎCTIM") == account_name("vîctim") == account_name("victim")
    for name in ("vîctim", "VICTIM", "Victim", "VÍCTIM", "víctim"):
        sign_in(client, name, "wrong")
    assert "temporarily locked" in sign_in(client, "victim", RIGHT).content.decode()


def test_one_address_guessing_many_accounts_is_stopped(client, redis_client, settings):
    settings.LOGIN_ADDRESS_LIMIT = 6
    User.objects.create_user("editor", password=RIGHT)
    for n in range(6):
        sign_in(client, f"user{n}", "wrong")
    sign_in(client, "editor", RIGHT)
    assert not signed_in(client)
    sign_in(client, "editor", RIGHT, address="10.0.0.2")
    assert signed_in(client)


def test_behind_a_proxy_the_address_it_reports_counts_not_what_the_client_claims(
        client, redis_client, settings):
    settings.TRUSTED_PROXIES = 1
    settings.TRUSTED_PROXY_IPS = [ipaddress.ip_network("192.0.2.1")]
    User.objects.create_user("editor", password=RIGHT)
    for n in range(settings.LOGIN_FAILURE_LIMIT):  # a forged first entry changes nothing
        sign_in(client, "editor", "wrong", address="192.0.2.1",
                HTTP_X_FORWARDED_FOR=f"1.1.1.{n}, 198.51.100.7")
    sign_in(client, "editor", RIGHT, address="192.0.2.1",
            HTTP_X_FORWARDED_FOR="198.51.100.7")
    assert not signed_in(client)
    sign_in(client, "editor", RIGHT, address="192.0.2.1", HTTP_X_FORWARDED_FOR="198.51.100.8")
    assert signed_in(client)  # another client behind the same proxy


@pytest.mark.parametrize("password", ["password123", "12345678901234", "qwertyuiop"])
def test_common_and_numeric_passwords_are_refused(password):
    with pytest.raises(ValidationError):
        validate_password(password, User(username="someone"))


def test_the_admin_login_says_temporarily_locked_too(client, redis_client, settings):
    User.objects.create_superuser("root", password=RIGHT)
    for _ in range(settings.LOGIN_FAILURE_LIMIT):
        client.post("/admin/login/?next=/admin/", {"username": "root", "password": "wrong"},
                    REMOTE_ADDR="10.0.0.1")
    page = client.post("/admin/login/?next=/admin/", {"username": "root", "password": RIGHT},
                       REMOTE_ADDR="10.0.0.1")
    assert "temporarily locked" in page.content.decode() and not signed_in(client)
