"""Fixtures of the picture tests."""

from __future__ import annotations

import json

import pytest

from articles.images import fetch as fetching

BODY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")


def post(client, auth, body):
    return client.post("/api/v1/articles", data=json.dumps(body),
                       content_type="application/json", **auth)


@pytest.fixture
def loopback_is_public(monkeypatch, settings):
    """The local test server stands for the public web: 127.0.0.1 passes, every other
    address is checked by the real rule (so a redirect to 10.x is still refused)."""
    settings.IMAGE_FETCH_ALLOW_PRIVATE = False
    real = fetching._allowed
    monkeypatch.setattr(fetching, "_allowed",
                        lambda address: address == "127.0.0.1" or real(address))
