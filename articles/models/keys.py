from __future__ import annotations

import hashlib
import secrets
from typing import Any

from cachetools import TLRUCache
from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

#: Active keys by prefix, each kept API_KEY_CACHE_SECONDS (read when it is stored).
_key_cache: TLRUCache[str, ApiKey] = TLRUCache(
    maxsize=10_000, ttu=lambda _prefix, _key, now: now + settings.API_KEY_CACHE_SECONDS)


class ApiKeyQuerySet(models.QuerySet["ApiKey"]):
    def active(self) -> ApiKeyQuerySet:
        return self.filter(revoked_at__isnull=True)


class ApiKey(models.Model):
    """A crawler's key. Only a SHA-256 of the secret is stored; the key is shown once."""

    PREFIX_LENGTH = 8

    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    key_hash = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)
    rate_limit_per_minute = models.PositiveIntegerField(
        default=6000, help_text=_("Requests per minute for this key; 0 means unlimited.")
    )
    may_change_others = models.BooleanField(
        default=False, help_text=_(
            "May re-post, or change the hotness of, articles first posted with another key "
            "(otherwise such a request is refused with 409).")
    )
    may_read_others = models.BooleanField(
        default=False, help_text=_(
            "May read articles first posted with another key: their results, their nids, "
            "URLs and titles in docIds and lookups, and their changes (GET "
            "/api/v1/changes). Otherwise a key reads its own articles only: another key's "
            "is a 404, named in docIds and lookups by its docId alone.")
    )

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        verbose_name = _("API key")
        verbose_name_plural = _("API keys")

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def reads(self, owner_id: int | None) -> bool:
        """Whether this key may read an article first posted with key ``owner_id``
        (None: loaded by a command, no key's). The one rule of every read: docs/api.md,
        "Which articles a key reads"."""
        return self.may_read_others or owner_id == self.pk

    def save(self, *args: Any, **kwargs: Any) -> None:
        super().save(*args, **kwargs)
        ApiKey.forget_cached()

    @staticmethod
    def hash_secret(secret: str) -> str:
        return hashlib.sha256(secret.encode("utf-8")).hexdigest()

    @classmethod
    def issue(cls, name: str, **fields: Any) -> tuple[ApiKey, str]:
        """Create a key; return it with the plaintext, which is never stored."""
        prefix = secrets.token_hex(cls.PREFIX_LENGTH // 2)
        plaintext = f"dd_{prefix}_{secrets.token_urlsafe(32)}"
        key = cls.objects.create(
            name=name, prefix=prefix, key_hash=cls.hash_secret(plaintext), **fields
        )
        return key, plaintext

    @classmethod
    def authenticate(cls, plaintext: str) -> ApiKey | None:
        parts = plaintext.split("_", 2)
        if len(parts) != 3 or parts[0] != "dd":
            return None
        key = cls._lookup(parts[1])
        if key is None or not secrets.compare_digest(key.key_hash, cls.hash_secret(plaintext)):
            return None
        return key

    @classmethod
    def _lookup(cls, prefix: str) -> ApiKey | None:
        """The active key with this prefix, remembered for API_KEY_CACHE_SECONDS per
        process (a revoked key stops working within that time; 0 reads every time).
        Unknown prefixes are not remembered."""
        cached = _key_cache.get(prefix)
        if cached is not None:
            return cached
        key = cls.objects.active().filter(prefix=prefix).first()
        if key is not None and settings.API_KEY_CACHE_SECONDS > 0:
            _key_cache[prefix] = key
        else:
            _key_cache.pop(prefix, None)
        return key

    @staticmethod
    def forget_cached() -> None:
        _key_cache.clear()

    def touch(self) -> None:
        # At most one write a minute per key: the API is hot, this column is not.
        now = timezone.now()
        if self.last_used_at is None or (now - self.last_used_at).total_seconds() > 60:
            ApiKey.objects.filter(pk=self.pk).update(last_used_at=now)
            self.last_used_at = now
