"""Which clauses are boilerplate, as every process reads it (fingerprints/rule/boilerplate.py).

The list lives in MySQL (:class:`BoilerplateClause`): it survives Redis, the admin
lists it (most stories first), adds a clause or switches one off. Workers, the reindex
job and the previews read the active hashes with :func:`active_boilerplate`, again
when the table changed (one cheap query, at most every ``STATE_CACHE_MS``). Learning
(counting stories per clause) is ``articles.ingest.boilerplate``.
"""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Max

from articles.models import BoilerplateClause, BoilerplateSource
from fingerprints.rule.boilerplate import MIN_CLAUSE, clause_hash, clauses, shipped_hashes
from fingerprints.rule.ids import to_signed, to_unsigned
from fingerprints.rule.normalize import normalize

_cache = threading.local()


def active_boilerplate(max_age_ms: int | None = None) -> frozenset[int]:
    """The hashes (unsigned) of the active boilerplate clauses, re-read when the table
    changed; the check runs at most every ``max_age_ms`` (default STATE_CACHE_MS)."""
    if max_age_ms is None:
        max_age_ms = settings.STATE_CACHE_MS
    now = time.monotonic()
    cached = getattr(_cache, "entry", None)
    if cached is not None and (now - cached[0]) * 1000 < max_age_ms:
        return cached[2]
    stamp = BoilerplateClause.objects.aggregate(n=Count("id"), at=Max("updated_at"))
    version = (stamp["n"], stamp["at"])
    if cached is not None and cached[1] == version:
        hashes = cached[2]
    else:
        hashes = frozenset(
            to_unsigned(h) for h in BoilerplateClause.objects.filter(active=True)
            .values_list("clause_hash", flat=True))
    _cache.entry = (now, version, hashes)
    return hashes


def forget() -> None:
    """Read the table again at the next :func:`active_boilerplate` (this thread)."""
    _cache.entry = None


def add_clause(text: str) -> BoilerplateClause:
    """An admin's clause: its letters and digits, active, source admin. ``ValueError``
    when it has too few letters and digits to be a clause."""
    keys = [k for k in clauses(normalize(text)) if k]
    if len(keys) != 1 or len(keys[0]) < MIN_CLAUSE:
        raise ValueError(
            f"a boilerplate clause is one clause of at least {MIN_CLAUSE} letters or digits "
            "(no sentence or clause punctuation inside)")
    key = keys[0]
    signed = to_signed(clause_hash(key))
    try:
        with transaction.atomic():
            clause, _ = BoilerplateClause.objects.update_or_create(
                clause_hash=signed,
                defaults={"text": key[:300], "active": True, "source": BoilerplateSource.ADMIN})
    except IntegrityError:  # a worker learned it at the same moment
        clause = BoilerplateClause.objects.get(clause_hash=signed)
        clause.active, clause.source = True, BoilerplateSource.ADMIN
        clause.save(update_fields=["active", "source", "updated_at"])
    forget()
    return clause


def load_shipped() -> tuple[int, int]:
    """The shipped starting list (``fingerprints.rule.boilerplate.shipped_hashes``) as
    rows of source *shipped* (no text: only hashes are shipped), active; a clause the
    table holds already keeps its row (an admin's switch-off stays). Returns (rows
    added, hashes shipped)."""
    hashes = shipped_hashes()
    before = BoilerplateClause.objects.count()
    BoilerplateClause.objects.bulk_create(
        [BoilerplateClause(clause_hash=to_signed(h), text="", stories=0,
                           source=BoilerplateSource.SHIPPED) for h in hashes],
        batch_size=1000, ignore_conflicts=True)
    forget()
    return BoilerplateClause.objects.count() - before, len(hashes)
