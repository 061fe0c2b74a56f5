"""Canonical URLs for the first step of the cascade (same canonical URL -> same docId)."""

from __future__ import annotations

import contextlib
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}

# Parameters that say how a reader arrived, not what they read.
TRACKING_PARAMS = frozenset(
    {
        "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "twclid",
        "igshid", "mc_cid", "mc_eid", "_hsenc", "_hsmi", "mkt_tok", "spm", "scm",
        "from", "share_token", "share_source", "share_medium", "sharesource",
        "ref", "ref_src", "ref_url", "referrer", "source", "src", "cmpid", "ncid",
        "wt.mc_id", "xtor", "_ga", "_gl", "vd_source", "isappinstalled", "wfr",
        "timestamp", "ts", "tt_from", "utm",
    }
)
_TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "hmsr", "hmpl", "hmcu", "hmkw", "hmci")


def is_tracking_param(name: str) -> bool:
    lowered = name.lower()
    return lowered in TRACKING_PARAMS or lowered.startswith(_TRACKING_PREFIXES)


def canonical_url(url: str) -> str:
    """Lower-case scheme and host, no default port, no fragment, no tracking
    parameters, query sorted, no trailing slash on the path, ``www.`` kept (it can be
    a different site). A URL that cannot be parsed is returned stripped."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if not host:
        return url
    with contextlib.suppress(UnicodeError):
        host = host.encode("idna").decode("ascii")
    if port is not None and _DEFAULT_PORTS.get(scheme) != port:
        host = f"{host}:{port}"
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@{host}" if userinfo else host
    # Decode then re-encode so %7E and ~ (and other equivalent spellings) agree.
    path = quote(unquote(parts.path), safe="/:@!$&'()*+,;=-._~%")
    path = path.rstrip("/")
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if not is_tracking_param(k)]
    query.sort()
    return urlunsplit((scheme, netloc, path, urlencode(query, doseq=True), ""))
