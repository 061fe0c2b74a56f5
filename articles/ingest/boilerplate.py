"""Boilerplate learning, shared by every worker (fingerprints/rule/boilerplate.py).

Counting lives in Redis (:class:`fingerprints.rule.boilerplate.RedisCounter`, one bounded
slot table for all workers): after a batch is saved, every article that founded a
story counts its clauses once (:func:`learn`), and so does every article whose body is
not about its title (``Features.off_title``: it may have joined a doc of look-alike
redirect pages). The worker that sees a clause reach
``boilerplate_min_docs`` writes its :class:`BoilerplateClause` row; every process
then reads it through ``articles.tuning.boilerplate.active_boilerplate``.

Learning is best effort: it runs after the batch committed, and a Redis or database
error there is logged, never fails the batch (the articles are already assigned; the
clause is counted again by the next stories).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.conf import settings
from django.db import transaction

from articles.models import Article, BoilerplateClause
from articles.tuning.boilerplate import forget
from dedupsite import redis_store
from fingerprints.rule import EngineConfig
from fingerprints.rule.boilerplate import (
    DEFAULT_SLOTS_LOG2,
    RedisCounter,
    clause_texts,
    story_clauses,
)
from fingerprints.rule.ids import to_signed
from fingerprints.rule.normalize import normalize

log = logging.getLogger(__name__)


def counter(config: EngineConfig) -> RedisCounter:
    return RedisCounter(redis_store.client(), config.boilerplate_min_docs,
                        getattr(settings, "BOILERPLATE_SLOTS_LOG2", DEFAULT_SLOTS_LOG2),
                        namespace=redis_store.key("bp"))


def learn(anchors: Iterable[Article], config: EngineConfig, known: frozenset[int]) -> int:
    """Count the clauses of the articles that founded a story; write the clauses that
    became boilerplate. Returns how many were learned. Never raises."""
    if not config.boilerplate_min_docs:
        return 0
    try:
        return _learn(list(anchors), config, known)
    except Exception:  # best effort: the batch is saved already
        log.exception("boilerplate learning failed for this batch; it goes on with the next")
        return 0


def _learn(anchors: list[Article], config: EngineConfig, known: frozenset[int]) -> int:
    count = counter(config)
    learned: dict[int, str] = {}
    stories = [story_clauses(normalize(article.content), known) for article in anchors]
    for (body, _hashes), seen in zip(stories, count.observe_many([h for _b, h in stories]),
                                     strict=True):
        if seen.promoted:
            learned.update(clause_texts(body, seen.promoted))
    if not learned:
        return 0
    switched_off = set(BoilerplateClause.objects.filter(
        clause_hash__in=[to_signed(h) for h in learned], active=False,
    ).values_list("clause_hash", flat=True))
    rows = [BoilerplateClause(clause_hash=to_signed(h), text=text[:300],
                              stories=config.boilerplate_min_docs)
            for h, text in learned.items() if to_signed(h) not in switched_off]
    with transaction.atomic():
        BoilerplateClause.objects.bulk_create(rows, ignore_conflicts=True)
    log.info("learned %d boilerplate clause(s)", len(rows))
    forget()
    return len(rows)
