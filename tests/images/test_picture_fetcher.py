"""The picture fetcher against hostile URLs and hosts: ports out of range (refused by the
API, ``bad_url`` in a redirect), addresses outside the global unicast space however they
are spelled (one reason, ``unreachable``, for a refused address, a closed port and a name
that does not resolve), a host that sends a byte now and then (a deadline per picture),
a read stopped when asked."""

from __future__ import annotations

import json
import time

import pytest

from articles.images import fetch as fetching
from articles.models import Article
from tests.images.conftest import BODY, post
from tests.picture_host import Drip, Redirect, serve

pytestmark = pytest.mark.django_db(transaction=True)

def refusal(url: str, **kwargs) -> str:
    with pytest.raises(fetching.Refused) as caught:
        fetching.fetch(url, **kwargs)
    return caught.value.reason


@pytest.mark.parametrize("url", ["http://img.example:99999/a.png", "http://img.example:0/a.png",
                                 "http://img.example:65536/a.png", "http://[::1/a.png",
                                 "http://img.example:port/a.png"])
def test_an_image_port_out_of_range_is_a_422_and_nothing_is_stored(client, auth,
                                                                   redis_client, url):
    answer = post(client, auth, {"nid": "bad-port", "url": "https://n.example/a",
                                 "title": "绿道", "content": BODY, "images": [url]})
    assert answer.status_code == 422
    assert "images" in json.dumps(answer.json()["error"]["details"])
    assert not Article.objects.filter(nid="bad-port").exists()


@pytest.mark.parametrize("location", ["http://x:65536/", "http://x:99999/a.png",
                                      "gopher://x/a.png", "http://[::1/a.png"])
def test_a_redirect_to_a_bad_url_fails_the_picture_with_bad_url(location, loopback_is_public):
    with serve({"/a.png": Redirect(location)}) as (base, _hits):
        assert refusal(f"{base}/a.png") == "bad_url"


@pytest.mark.parametrize("address", [
    "100.64.0.1", "100.100.100.200",  # shared address space, a cloud's metadata service
    "192.0.0.1", "192.0.0.9", "192.88.99.1", "198.18.0.1", "224.0.0.1", "240.0.0.1",
    "10.0.0.1", "127.0.0.1", "169.254.169.254", "0.0.0.0", "255.255.255.255",
    "::1", "::", "fe80::1", "fc00::1", "ff02::1",
    "::ffff:10.0.0.1", "::ffff:127.0.0.1",  # IPv4-mapped
    "2002:a00:1::1", "2002:7f00:1::1", "2002:6440:1::1",  # 6to4 of 10/8, loopback, 100.64/10
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo: the client is 10.0.0.1
    "64:ff9b::a00:1", "64:ff9b::7f00:1", "64:ff9b::6464:64c8",  # NAT64 of private ones
    "64:ff9b:1::808:808",  # NAT64's local-use prefix
])
def test_only_global_unicast_addresses_are_allowed_however_they_are_spelled(address):
    assert not fetching._allowed(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "93.184.216.34", "2606:4700::1111",
                                     "2002:808:808::1", "64:ff9b::808:808",
                                     "::ffff:8.8.8.8"])
def test_global_addresses_pass(address):
    assert fetching._allowed(address)


def test_a_refused_address_a_closed_port_and_an_unknown_name_read_alike(loopback_is_public):
    """No port-scanning oracle: whatever the crawler names, it learns "unreachable"."""
    with serve({}) as (base, _hits):
        port = int(base.rsplit(":", 1)[1])
    # the server is gone: its port is closed now
    reasons = {refusal(f"http://127.0.0.1:{port}/a.png"),  # a closed port
               refusal("http://10.0.0.1:22/a.png"), refusal("http://100.100.100.200/a.png"),
               refusal("http://[2002:a00:1::1]:6379/"), refusal("http://192.88.99.1/a.png"),
               refusal("http://name-that-does-not-resolve.invalid/a.png")}
    assert reasons == {"unreachable"}


def test_a_host_that_sends_a_byte_now_and_then_meets_the_picture_deadline(
        loopback_is_public, monkeypatch):
    monkeypatch.setattr(fetching, "PICTURE_DEADLINE_S", 2.0)
    with serve({"/slow.png": Drip(every_s=0.3)}) as (base, _hits):
        started = time.monotonic()
        assert refusal(f"{base}/slow.png") == "timeout"
        assert time.monotonic() - started < 3.5
        started = time.monotonic()
        assert refusal(f"{base}/slow.png", deadline=time.monotonic() + 1) == "timeout"
        assert time.monotonic() - started < 2.5


def test_a_read_stops_when_asked(loopback_is_public):
    with serve({"/slow.png": Drip(every_s=0.3)}) as (base, _hits):
        started = time.monotonic()
        asked = iter([False, False, True])
        assert refusal(f"{base}/slow.png", stop=lambda: next(asked, True)) == "interrupted"
        assert time.monotonic() - started < 3
