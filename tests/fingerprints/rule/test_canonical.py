from fingerprints.rule.canonical import canonical_url


def test_it_canonicalizes_scheme_host_port_fragment_and_slash() -> None:
    assert canonical_url("HTTPS://News.Example.COM:443/a/b/#top") == "https://news.example.com/a/b"
    assert canonical_url("http://example.com:8080/x") == "http://example.com:8080/x"
    assert canonical_url("http://example.com/") == "http://example.com"


def test_it_drops_tracking_parameters_and_sorts_the_query() -> None:
    url = "https://example.com/n/1.html?utm_source=wx&b=2&spm=a.b&a=1&fbclid=Z&gclid=Q"
    assert canonical_url(url) == "https://example.com/n/1.html?a=1&b=2"


def test_it_keeps_meaningful_parameters_and_path_case() -> None:
    assert canonical_url("https://example.com/Story?id=42") == "https://example.com/Story?id=42"
