"""Login lockout under attack: concurrent wrong passwords are counted
before any is checked, and a username the database takes for another is that account."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from .test_lockout import RIGHT, sign_in, signed_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_concurrent_wrong_passwords_are_checked_at_most_the_limit(redis_client, settings,
                                                                   monkeypatch):
    User.objects.create_user("editor", password=RIGHT)
    checked: list[int] = []
    real_check = User.check_password

    def counting_check(self, raw_password):
        checked.append(1)
        return real_check(self, raw_password)

    monkeypatch.setattr(User, "check_password", counting_check)
    start = threading.Barrier(24)

    def attempt() -> None:
        start.wait()
        try:
            sign_in(Client(), "editor", "wrong")
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt) for _ in range(24)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 1 <= len(checked) <= settings.LOGIN_FAILURE_LIMIT
    client = Client()
    assert "temporarily locked" in sign_in(client, "editor", RIGHT).content.decode()
    assert not signed_in(client)


@pytest.mark.mysql
def test_a_variant_the_database_takes_for_the_user_shares_the_lock(client, redis_client,
                                                                   settings):
    # MariaDB's default collation, utf8mb4_general_ci, takes "vıctim" (dotless ı) for
    # "victim"; no Unicode normalisation in Python does
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE auth_user MODIFY username varchar(150) "
                       "CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL")
    try:
        User.objects.create_user("victim", password=RIGHT)
        assert User.objects.filter(username="vıctim").exists()
        for _ in range(settings.LOGIN_FAILURE_LIMIT):
            sign_in(client, "victim", "wrong")
        answer = sign_in(client, "vıctim", RIGHT)
        assert not signed_in(client)
        assert "temporarily locked" in answer.content.decode()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE auth_user MODIFY username varchar(150) "
                           "CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL")


def test_a_successful_sign_in_does_not_count_against_the_address(client, redis_client,
                                                                 settings):
    settings.LOGIN_ADDRESS_LIMIT = 3
    User.objects.create_user("editor", password=RIGHT)
    for _ in range(5):
        assert sign_in(Client(), "editor", RIGHT).status_code == 302
    sign_in(client, "editor", RIGHT)
    assert signed_in(client)


def test_past_the_address_limit_tries_slow_down_instead_of_a_hard_lock(client, redis_client,
                                                                       settings):
    # one NAT or a proxy with TRUSTED_PROXIES unset puts everybody on one address: the
    # address's limit must not lock them all out for LOGIN_LOCKOUT_SECONDS
    import time

    from dedupsite import counters, redis_store
    from dedupsite.security import address_delay

    settings.LOGIN_ADDRESS_LIMIT = 2
    settings.LOGIN_LOCKOUT_SECONDS = 900
    User.objects.create_user("editor", password=RIGHT)
    sign_in(client, "guess-1", "wrong")
    sign_in(client, "guess-2", "wrong")
    assert "temporarily locked" in sign_in(client, "editor", RIGHT).content.decode()
    # in milliseconds: TTL's whole seconds round a wait half gone on a busy machine to 0
    waiting = redis_store.client().pttl(redis_store.key("login", "wait", "10.0.0.1"))
    assert 0 < waiting <= address_delay(2) * 1000 == 1000
    time.sleep(1.1)
    sign_in(client, "guess-3", "wrong")  # one try after the wait; it fails: 2 s now
    assert counters.ttl("login", "wait", "10.0.0.1") == address_delay(3) == 2
    assert address_delay(20) == 900  # doubling, up to the lockout window
    time.sleep(2.1)
    sign_in(client, "editor", RIGHT)
    assert signed_in(client)  # not locked for the window: slowed down
