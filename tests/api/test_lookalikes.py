"""Look-alike identifiers are refused (Unicode TR 39's confusables and mixed scripts)."""

from __future__ import annotations

import pytest

from articles.api.lookalikes import check_identifier, check_url
from articles.models import Article

from .test_real_crawls import article, post

INVISIBLE = ["\u3164", "\u2800", "\u034f", "\ufe0f", "\u00a0", "\u115f", "\u2060", "\U000e0041"]


@pytest.mark.parametrize("ch", INVISIBLE)
def test_invisible_characters_are_refused_in_identifiers(ch):
    with pytest.raises(ValueError, match="invisible"):
        check_identifier(f"news{ch}1")
    with pytest.raises(ValueError, match="invisible"):
        check_url(f"https://n.example/a{ch}b")


@pytest.mark.parametrize("value", ["pаypal-1", "nid-ε1", "新华аbc"])
def test_mixed_scripts_are_refused(value):
    with pytest.raises(ValueError, match="mixes scripts"):
        check_identifier(value)


@pytest.mark.parametrize("value", ["plain-123", "新华社2024-001", "nhk-ニュース-7", "한국-1",
                                   "ㄅㄆ新闻", "ｆｕｌｌ-1", "café-1", "a b"])
def test_one_script_or_a_cjk_set_is_accepted(value):
    assert check_identifier(value) == value


def test_urls_with_user_information_or_mixed_script_hosts_are_refused():
    with pytest.raises(ValueError, match="user information"):
        check_url("https://bank.example@evil.example/login")
    with pytest.raises(ValueError, match="user information"):
        check_url("https://b\u0430nk.com@b\u0430nk.com/")
    punycode = "b\u0430nk.com".encode("idna").decode("ascii")  # Cyrillic а + Latin
    with pytest.raises(ValueError, match="mixes scripts"):
        check_url(f"https://{punycode}/")
    with pytest.raises(ValueError, match="mixes scripts"):
        check_url("https://b\u0430nk.com/")
    for fine in ("https://新华网.中国/a", "https://n.example/新闻?q=1#x", "http://[::1/x",
                 "https://xn--fiqs8s.cn/", "https://news.example:8080/a"):
        assert check_url(fine) == fine


@pytest.mark.django_db(transaction=True)
def test_the_api_answers_each_with_a_422_for_its_field(client, auth):
    body = {"articles": [article("p\u0430ypal-1"), article("ok-1", media="新华\u3164社"),
                         article("ok-2", url="https://bank.example@evil.example/"),
                         article("ok-3")]}
    response = post(client, auth, body)
    results = response.json()["results"]
    assert [r.get("status") for r in results] == ["invalid", "invalid", "invalid", "queued"]
    assert [next(iter(r["error"]["details"])) for r in results[:3]] == [
        "nid", "media", "url"]
    assert list(Article.objects.values_list("nid", flat=True)) == ["ok-3"]
