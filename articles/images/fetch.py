"""Downloading a crawled article's pictures without letting the crawled web reach inside.

Every URL is parsed (scheme http or https, a host, a port from 1 to 65535: else
``bad_url``), resolved here and each address checked before a connection is made, by an
allow-list: only a global unicast address passes (``ipaddress``'s ``is_global``, after
unwrapping IPv4 carried in IPv6: IPv4-mapped, 6to4 ``2002::/16``, Teredo, NAT64
``64:ff9b::/96``), and :data:`REFUSED_NETWORKS` never does
(``IMAGE_FETCH_ALLOW_PRIVATE=true`` lifts the rule for development and tests). An
address refused, a name that does not resolve and a host that does not answer all fail
with the same reason, ``unreachable``: the reason tells a crawler nothing about which
internal addresses or ports exist. The connection goes to the checked address itself
(the host name travels in the Host header and, for https, in SNI and the certificate
check), so a second DNS answer cannot point it elsewhere. Redirects are followed by
hand, at most :data:`MAX_REDIRECTS`, each target checked the same way.

A picture has :data:`PICTURE_DEADLINE_S` in all (connecting, redirects, headers and body
together; ``timeout`` after that) however slowly its host sends, and the caller may
shorten that (the picture job's own deadline) or stop the read early (``stop``: a text
job is waiting; ``interrupted``). The body is read up to ``IMAGE_MAX_BYTES`` and no
further; its first bytes must be a JPEG, PNG, GIF or WebP signature whatever the
Content-Type says; Pillow's decompression-bomb limit applies when it is decoded
(fingerprints/rule/picture.py).

Every refusal is a :class:`Refused` with a short machine reason (``unreachable``,
``too_large``, ``not_an_image``...) that the API shows per image.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import SplitResult, urljoin, urlsplit

import urllib3
from django.conf import settings

#: seconds to connect and between bytes read (at most: the deadlines below come first)
TIMEOUT_S = 10.0
#: seconds a picture may take in all, however slowly its host sends
PICTURE_DEADLINE_S = 15.0
#: how often a read in progress looks at its deadline and at ``stop``
_WATCH_S = 0.5
MAX_REDIRECTS = 3
SIGNATURES = {
    b"\xff\xd8\xff": "jpeg",
    b"\x89PNG\r\n\x1a\n": "png",
    b"GIF87a": "gif",
    b"GIF89a": "gif",
}
#: refused although ``is_global`` may call some of their addresses global: shared address
#: space (a cloud's metadata service lives at 100.100.100.200), IETF protocol
#: assignments, the 6to4 relay anycast, multicast, NAT64's local-use prefix
REFUSED_NETWORKS = tuple(ipaddress.ip_network(net) for net in (
    "100.64.0.0/10", "192.0.0.0/24", "192.88.99.0/24", "224.0.0.0/4", "ff00::/8",
    "64:ff9b:1::/48"))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


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


def carried_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (IPv4-mapped, 6to4, a Teredo client,
    NAT64's well-known prefix), or None: a connection to it reaches that IPv4 host."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
    return None


def _allowed(address: str) -> bool:
    """Whether a picture may be fetched from ``address``: a global unicast address, the
    IPv4 one inside it included, outside :data:`REFUSED_NETWORKS`."""
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(
            address.split("%", 1)[0])  # a scoped IPv6 address is link-local anyway
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.teredo is not None and not _allowed(str(ip.teredo[0])):
            return False  # the Teredo server too
        if any(ip in net for net in REFUSED_NETWORKS if net.version == 6):
            return False
        ip = carried_ipv4(ip) or ip
    return ip.is_global and not any(ip in net for net in REFUSED_NETWORKS
                                    if net.version == ip.version)


def parse(url: str) -> tuple[SplitResult, int]:
    """``url`` split, with its port: Refused("bad_url") unless it is an http(s) URL with
    a host and a port from 1 to 65535."""
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError when not a number from 0 to 65535
    except ValueError:
        raise Refused("bad_url", url[:200]) from None
    if parts.scheme not in ("http", "https") or not parts.hostname or port == 0:
        raise Refused("bad_url", url[:200])
    return parts, port or (443 if parts.scheme == "https" else 80)


def resolve(host: str, port: int, *, allow_private: bool | None = None) -> str:
    """The first address of ``host`` that may be reached; Refused("unreachable"), the
    reason of a host that does not answer, when none may or the name does not resolve.
    ``allow_private``: lift the rule (default: ``IMAGE_FETCH_ALLOW_PRIVATE``; the webhooks
    pass ``WEBHOOK_ALLOW_PRIVATE``)."""
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:  # gaierror; a label IDNA cannot encode
        raise Refused("unreachable", f"{host[:100]} does not resolve: {exc}") from None
    addresses = [str(info[4][0]) for info in answers]
    if settings.IMAGE_FETCH_ALLOW_PRIVATE if allow_private is None else allow_private:
        return addresses[0]
    for address in addresses:
        if _allowed(address):
            return address
    raise Refused("unreachable", f"{host[:100]} resolves to {addresses[0]}, refused")


class _Watch(threading.Thread):
    """Shuts a connection's socket when its deadline passes or ``stop`` says so: a read
    blocked on a host that sends a byte now and then returns at once. ``fired`` is the
    reason (``timeout``, ``interrupted``) or ""."""

    def __init__(self, sock: socket.socket, deadline: float,
                 stop: Callable[[], bool] | None) -> None:
        super().__init__(daemon=True, name="picture-deadline")
        self.sock, self.deadline, self.stop = sock, deadline, stop
        self.finished = threading.Event()
        self.fired = ""

    def run(self) -> None:
        while not self.finished.wait(max(0.0, min(_WATCH_S,
                                                  self.deadline - time.monotonic()))):
            if time.monotonic() >= self.deadline:
                self.fired = "timeout"
            elif self.stop is not None and self.stop():
                self.fired = "interrupted"
            else:
                continue
            # the plain socket's shutdown, an SSL socket's too: no TLS close_notify
            with contextlib.suppress(OSError):
                socket.socket.shutdown(self.sock, socket.SHUT_RDWR)
            return


def _connect(parts: SplitResult, port: int, deadline: float) -> urllib3.connection.HTTPConnection:
    address = resolve(parts.hostname or "", port)
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise Refused("timeout")
    timeout = min(TIMEOUT_S, remaining)
    conn: urllib3.connection.HTTPConnection
    if parts.scheme == "https":
        conn = urllib3.connection.HTTPSConnection(
            address, port, timeout=timeout, server_hostname=parts.hostname,
            assert_hostname=parts.hostname)
    else:
        conn = urllib3.connection.HTTPConnection(address, port, timeout=timeout)
    try:
        conn.connect()
    except (OSError, urllib3.exceptions.HTTPError) as exc:
        conn.close()
        raise Refused("unreachable", type(exc).__name__) from None
    return conn


def _read(url: str, deadline: float, stop: Callable[[], bool] | None) -> Fetched | str:
    """One request: the picture, or the URL a redirect points to."""
    parts, port = parse(url)
    conn = _connect(parts, port, deadline)
    assert conn.sock is not None
    watch = _Watch(conn.sock, deadline, stop)
    watch.start()
    try:
        return _exchange(conn, parts, url)
    except (OSError, urllib3.exceptions.HTTPError, http.client.HTTPException) as exc:
        raise Refused(watch.fired or "unreachable", type(exc).__name__) from None
    finally:
        watch.finished.set()
        conn.close()
        watch.join()
        if watch.fired:  # a body cut short by the deadline is no picture
            raise Refused(watch.fired)  # this, not what the cut body caused


def _exchange(conn: urllib3.connection.HTTPConnection, parts: SplitResult,
              url: str) -> Fetched | str:
    path = parts.path or "/"
    if parts.query:
        path += f"?{parts.query}"
    host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
    conn.request("GET", path, headers={"Host": host or "", "Accept": "image/*",
                                       "User-Agent": "dedupsite-images/1"},
                 preload_content=False)
    response = conn.getresponse()
    if response.status in (301, 302, 303, 307, 308):
        target = response.headers.get("Location", "")
        if not target:
            raise Refused("bad_redirect")
        try:
            return urljoin(url, target)
        except ValueError:  # an unbalanced IPv6 bracket
            raise Refused("bad_url", target[:200]) from None
    if response.status != 200:
        raise Refused("http_status", str(response.status))
    limit = settings.IMAGE_MAX_BYTES
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


def fetch(url: str, *, deadline: float | None = None,
          stop: Callable[[], bool] | None = None) -> Fetched:
    """The picture at ``url`` (Refused with the reason when it may not or cannot be
    read), within :data:`PICTURE_DEADLINE_S` or by ``deadline`` (``time.monotonic()``)
    when that comes first; ``stop``, asked twice a second while it reads, ends the read
    early (``interrupted``)."""
    own = time.monotonic() + PICTURE_DEADLINE_S
    deadline = own if deadline is None else min(deadline, own)
    for _hop in range(MAX_REDIRECTS + 1):
        answer = _read(url, deadline, stop)
        if isinstance(answer, Fetched):
            return answer
        url = answer
    raise Refused("too_many_redirects")
