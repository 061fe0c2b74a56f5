"""Webhooks: the change log POSTed to a receiver in batches, in cursor order, signed.

Each delivery is a JSON body ``{"changes": [...], "next": "<cursor>"}`` (the objects of
``GET /api/v1/changes``) with the headers ``X-Dedupsite-Signature: sha256=<hex HMAC-SHA256
of the body with the webhook's secret>`` and ``X-Dedupsite-Delivery: <webhook>:<first
cursor>-<last cursor>``. A 2xx answer acknowledges the batch; anything else (or no answer
within :data:`TIMEOUT_S`) is retried after a back-off (:data:`BACKOFF_S`), the same batch
again, so a receiver sees every change at least once and in order, and dedupes by cursor.
After :data:`MAX_ATTEMPTS` failures in a row the webhook is *dead*: nothing more is sent
until an admin redelivers (it resumes where it stopped). The receiver's address follows
the picture fetcher's rules (articles/images/fetch.py): no private, loopback or link-local
address unless ``WEBHOOK_ALLOW_PRIVATE``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import urllib3
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from articles.changes import log as changes
from articles.images.fetch import Refused, resolve
from articles.models import ApiKey, Change, Webhook, WebhookStatus
from dedupsite import metrics

BATCH = 100
TIMEOUT_S = 10.0
#: seconds before the next try, by the failures so far (the last one repeats)
BACKOFF_S = (1, 5, 15, 30, 60, 120, 300, 600)
MAX_ATTEMPTS = 24  # about three hours of tries, then dead
SIGNATURE_HEADER = "X-Dedupsite-Signature"
DELIVERY_HEADER = "X-Dedupsite-Delivery"


class BadWebhook(ValueError):
    """A webhook URL that may not be registered (the message says why)."""


def sign(secret: str, body: bytes) -> str:
    """The signature header's value of ``body``: ``sha256=`` and the hex HMAC-SHA256."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, header: str) -> bool:
    """What a receiver checks (docs/api.md shows the same in a few lines)."""
    return hmac.compare_digest(sign(secret, body), header or "")


def check_url(url: str) -> tuple[str, int]:
    """(host, port) of a URL a webhook may use: http(s), a host, a valid port, an address
    that may be reached; BadWebhook otherwise."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:  # a port out of range or not a number
        raise BadWebhook(f"not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadWebhook("the URL must be http:// or https:// with a host")
    try:
        resolve(parts.hostname, port, allow_private=settings.WEBHOOK_ALLOW_PRIVATE)
    except Refused:
        raise BadWebhook("the URL's host is not an address webhooks may reach") from None
    return parts.hostname, port


def create(url: str, key: ApiKey | None = None) -> Webhook:
    """Register a receiver (its URL checked now, its address again at every delivery);
    the returned webhook's ``secret`` is shown once to the caller. It starts at the end
    of the log: it receives the changes committed from now on."""
    if len(url) > 500:
        raise BadWebhook("the URL is longer than 500 characters")
    check_url(url)
    hook = Webhook.objects.create(url=url, api_key=key, secret=secrets.token_hex(32),
                                  delivered=changes.last_cursor())
    cache.delete(_ACTIVE_KEY)
    return hook


_ACTIVE_KEY = "downstream:webhooks-active"


def any_active() -> bool:
    """Is any webhook active? (asked on every logging commit: cached 10 s per process)"""
    found = cache.get(_ACTIVE_KEY)
    if found is None:
        found = Webhook.objects.filter(status=WebhookStatus.ACTIVE).exists()
        cache.set(_ACTIVE_KEY, found, 10)
    return bool(found)


def payload(rows: list[Change], following: int) -> bytes:
    return json.dumps({"changes": [{
        "cursor": str(c.cursor), "kind": c.kind, "nid": c.nid, "docId": c.doc_id,
        "previousDocId": c.previous_doc_id, "representativeNid": c.representative_nid,
        "status": c.status, "reason": c.reason, "at": c.at.isoformat()} for c in rows],
        "next": str(following)}, ensure_ascii=False, separators=(",", ":")).encode()


def _post(url: str, body: bytes, headers: dict[str, str]) -> int:
    """POST to the checked address of ``url`` (the host name in Host and SNI, as the
    picture fetcher connects); the status, or Refused."""
    host, port = check_url(url)
    parts = urlsplit(url)
    address = resolve(host, port, allow_private=settings.WEBHOOK_ALLOW_PRIVATE)
    timeout = urllib3.Timeout(connect=TIMEOUT_S, read=TIMEOUT_S)
    pool: urllib3.HTTPConnectionPool
    if parts.scheme == "https":
        pool = urllib3.HTTPSConnectionPool(address, port, timeout=timeout, retries=False,
                                           server_hostname=host, assert_hostname=host)
    else:
        pool = urllib3.HTTPConnectionPool(address, port, timeout=timeout, retries=False)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        response = pool.urlopen("POST", path, body=body, redirect=False, retries=False,
                                headers={**headers, "Host": parts.netloc.rsplit("@", 1)[-1]})
        return int(response.status)
    except urllib3.exceptions.HTTPError as exc:
        raise Refused("unreachable", type(exc).__name__) from None
    finally:
        pool.close()


def catch_up(hook: Webhook, deadline: float) -> tuple[int, bool]:
    """Send ``hook`` its changes after ``delivered`` in batches until it is up to date, a
    batch fails (a back-off is set) or ``deadline`` passes. Returns (changes
    acknowledged, whether it is still behind and should go on soon)."""
    sent = 0
    key = hook.api_key
    while True:
        rows, following = changes.page_after(hook.delivered, BATCH, key)
        if not rows:
            if following != hook.delivered:  # only rows the hook may not read: skipped
                Webhook.objects.filter(pk=hook.pk).update(delivered=following)
                hook.delivered = following
            return sent, False
        body = payload(rows, following)
        delivery = f"{hook.pk}:{rows[0].cursor}-{rows[-1].cursor}"
        started = time.monotonic()
        try:
            status = _post(hook.url, body, {
                "Content-Type": "application/json", SIGNATURE_HEADER: sign(hook.secret, body),
                DELIVERY_HEADER: delivery, "User-Agent": "dedupsite-webhooks/1"})
            error = "" if 200 <= status < 300 else f"answered {status}"
        except Refused as exc:
            error = str(exc)
        metrics.observe("dedupsite_webhook_seconds", time.monotonic() - started)
        if error:
            _failed(hook, error)
            return sent, False
        metrics.inc("dedupsite_webhook_deliveries_total", outcome="delivered")
        Webhook.objects.filter(pk=hook.pk).update(delivered=following, attempts=0,
                                                  next_attempt_at=None, last_error="")
        hook.delivered, hook.attempts = following, 0
        sent += len(rows)
        if time.monotonic() > deadline:
            return sent, True


def _failed(hook: Webhook, error: str) -> None:
    attempts = hook.attempts + 1
    dead = attempts >= MAX_ATTEMPTS
    metrics.inc("dedupsite_webhook_deliveries_total", outcome="dead" if dead else "failed")
    wait = BACKOFF_S[min(attempts, len(BACKOFF_S)) - 1]
    fields: dict[str, Any] = {"attempts": attempts, "last_error": error[:2000],
                              "next_attempt_at": timezone.now() + timedelta(seconds=wait)}
    if dead:
        fields["status"] = WebhookStatus.DEAD
    Webhook.objects.filter(pk=hook.pk).update(**fields)
    cache.delete(_ACTIVE_KEY)


def redeliver(hooks: Any) -> int:
    """An admin's redelivery: dead (or waiting) webhooks active again at once, from where
    they stopped."""
    count = hooks.update(status=WebhookStatus.ACTIVE, attempts=0, next_attempt_at=None)
    cache.delete(_ACTIVE_KEY)
    return int(count)
