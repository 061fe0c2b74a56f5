"""X-Forwarded-For and X-Forwarded-Proto are read only from the proxies named in
TRUSTED_PROXY_IPS: a caller that reaches gunicorn without the proxy cannot pass for a
loopback caller of /metrics, dodge the login lockout with a new address per try, or say
it came over HTTPS."""

from __future__ import annotations

import ipaddress

import pytest
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import RequestFactory

from dedupsite.security import UntrustedProxyHeadersMiddleware, client_ip

from .test_lockout import RIGHT, sign_in, signed_in

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("remote", "forwarded", "expected"), [
    ("127.0.0.1", "127.0.0.1", 200),  # the proxy on this machine says: a loopback client
    ("203.0.113.9", "127.0.0.1", 403),  # straight at gunicorn, claiming loopback
    ("10.0.0.5", "::1", 403),
])
def test_metrics_believe_only_a_trusted_proxy(client, redis_client, settings, remote,
                                              forwarded, expected):
    settings.METRICS_TOKEN = ""
    settings.TRUSTED_PROXIES = 1
    assert client.get("/metrics", REMOTE_ADDR=remote,
                      HTTP_X_FORWARDED_FOR=forwarded).status_code == expected


def test_a_caller_without_the_proxy_cannot_dodge_the_lockout(client, redis_client, settings):
    settings.TRUSTED_PROXIES = 1
    User.objects.create_user("editor", password=RIGHT)
    for n in range(settings.LOGIN_FAILURE_LIMIT):  # a new address claimed per try
        sign_in(client, "editor", "wrong", address="203.0.113.9",
                HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")
    answer = sign_in(client, "editor", RIGHT, address="203.0.113.9",
                     HTTP_X_FORWARDED_FOR="198.51.100.77")
    assert not signed_in(client) and "temporarily locked" in answer.content.decode()


def test_every_proxy_of_a_chain_must_be_trusted(settings):
    settings.TRUSTED_PROXIES = 2
    settings.TRUSTED_PROXY_IPS = [ipaddress.ip_network("127.0.0.1"),
                                  ipaddress.ip_network("10.1.0.0/16")]
    request = RequestFactory().get("/", REMOTE_ADDR="127.0.0.1",
                                   HTTP_X_FORWARDED_FOR="6.6.6.6, 198.51.100.3, 10.1.2.3")
    assert client_ip(request) == "198.51.100.3"  # nginx, then the balancer: its client
    request = RequestFactory().get("/", REMOTE_ADDR="127.0.0.1",
                                   HTTP_X_FORWARDED_FOR="6.6.6.6, 198.51.100.3")
    assert client_ip(request) == "198.51.100.3"  # 198.51.100.3 is no proxy of ours
    assert client_ip(RequestFactory().get("/", REMOTE_ADDR="192.0.2.8",
                                          HTTP_X_FORWARDED_FOR="6.6.6.6")) == "192.0.2.8"


def test_forwarded_headers_from_anyone_else_are_dropped(settings):
    settings.TRUSTED_PROXIES = 1
    seen = {}

    def view(request):
        seen.update(request.META)
        return HttpResponse()

    middleware = UntrustedProxyHeadersMiddleware(view)
    middleware(RequestFactory().get("/", REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_PROTO="https",
                                    HTTP_X_FORWARDED_FOR="127.0.0.1"))
    assert "HTTP_X_FORWARDED_PROTO" not in seen and "HTTP_X_FORWARDED_FOR" not in seen
    middleware(RequestFactory().get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_PROTO="https",
                                    HTTP_X_FORWARDED_FOR="198.51.100.3"))
    assert seen["HTTP_X_FORWARDED_PROTO"] == "https"
    assert seen["HTTP_X_FORWARDED_FOR"] == "198.51.100.3"
