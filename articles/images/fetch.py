"""Downloading a crawled article's pictures without letting the crawled web reach inside.

Every URL is resolved here and each address checked before a connection is made: a
private, loopback, link-local, multicast, reserved or unspecified address is refused
(``IMAGE_FETCH_ALLOW_PRIVATE=true`` lifts that for development and tests). The
connection goes to the checked address itself (the host name travels in the Host
header and, for https, in SNI and the certificate check), so a second DNS answer
cannot point it elsewhere. Redirects are followed by hand, at most
:data:`MAX_REDIRECTS`, each target checked the same way. The body is read up to
``IMAGE_MAX_BYTES`` and no further; its first bytes must be a JPEG, PNG, GIF or WebP
signature whatever the Content-Type says; Pillow's decompression-bomb limit applies
when it is decoded (fingerprints/rule/picture.py).

Every refusal is a :class:`Refused` with a short machine reason (``private_address``,
``too_large``, ``not_an_image``...) that the API shows per image.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import urllib3
from django.conf import settings

#: seconds to connect and between bytes read
TIMEOUT_S = 10.0
MAX_REDIRECTS = 3
SIGNATURES = {
    b"\xff\xd8\xff": "jpeg",
    b"\x89PNG\r\n\x1a\n": "png",
    b"GIF87a": "gif",
    b"GIF89a": "gif",
}


class Refused(Exception):
    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


@dataclass(frozen=True)
class Fetched:
    url: str  # the final URL, after redirects
    data: bytes
    kind: str  # jpeg, png, gif, webp


def sniff(head: bytes) -> str | None:
    """The image format the first bytes announce, or None."""
    for signature, kind in SIGNATURES.items():
        if head.startswith(signature):
            return kind
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    return None


def _allowed(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast
                or ip.is_reserved or ip.is_unspecified)


def resolve(host: str, port: int, *, allow_private: bool | None = None) -> str:
    """The first address of ``host`` that may be reached; Refused when none may.
    ``allow_private``: lift the rule (default: ``IMAGE_FETCH_ALLOW_PRIVATE``; the webhooks
    pass ``WEBHOOK_ALLOW_PRIVATE``)."""
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise Refused("dns_failed", str(exc)) from None
    addresses = [str(info[4][0]) for info in answers]
    if settings.IMAGE_FETCH_ALLOW_PRIVATE if allow_private is None else allow_private:
        return addresses[0]
    for address in addresses:
        if _allowed(address):
            return address
    raise Refused("private_address", f"{host} resolves to {addresses[0]}")


def _get(url: str) -> urllib3.BaseHTTPResponse:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Refused("bad_url", url[:200])
    port = parts.port or (443 if parts.scheme == "https" else 80)
    address = resolve(parts.hostname, port)
    timeout = urllib3.Timeout(connect=TIMEOUT_S, read=TIMEOUT_S)
    pool: urllib3.HTTPConnectionPool
    if parts.scheme == "https":
        pool = urllib3.HTTPSConnectionPool(
            address, port, timeout=timeout, retries=False, server_hostname=parts.hostname,
            assert_hostname=parts.hostname)
    else:
        pool = urllib3.HTTPConnectionPool(address, port, timeout=timeout, retries=False)
    path = parts.path or "/"
    if parts.query:
        path += f"?{parts.query}"
    host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
    try:
        return pool.urlopen("GET", path, headers={"Host": host, "Accept": "image/*",
                                                  "User-Agent": "dedupsite-images/1"},
                            redirect=False, preload_content=False, retries=False)
    except urllib3.exceptions.HTTPError as exc:
        raise Refused("unreachable", type(exc).__name__) from None


def fetch(url: str) -> Fetched:
    """The picture at ``url`` (Refused with the reason when it may not or cannot be read)."""
    limit = settings.IMAGE_MAX_BYTES
    for _hop in range(MAX_REDIRECTS + 1):
        response = _get(url)
        try:
            if response.status in (301, 302, 303, 307, 308):
                target = response.headers.get("Location", "")
                if not target:
                    raise Refused("bad_redirect")
                url = urljoin(url, target)
                continue
            if response.status != 200:
                raise Refused("http_status", str(response.status))
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > limit:
                raise Refused("too_large", f"{declared} bytes declared")
            data = bytearray()
            for chunk in response.stream(64 * 1024):
                data += chunk
                if len(data) > limit:
                    raise Refused("too_large", f"more than {limit} bytes")
            kind = sniff(bytes(data[:16]))
            if kind is None:
                raise Refused("not_an_image")
            return Fetched(url, bytes(data), kind)
        except urllib3.exceptions.HTTPError as exc:
            raise Refused("unreachable", type(exc).__name__) from None
        finally:
            response.release_conn()
    raise Refused("too_many_redirects")
