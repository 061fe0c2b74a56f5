"""Engine settings that admins change at run time, and how they reach every process.

`EngineSettings` (a singleton row, edited in the Django admin) holds what the
admin *wants*. `IndexState.config` holds the configuration the active Redis
index was built with; workers and the web read that one (`active_config()`),
re-reading it when `IndexState.config_version` changes — one cheap query per
batch, no restart.

A change of verification parameters (similarity thresholds, review rules)
applies at once. A change of the block layout (k) or of the tokens (stopwords,
user dictionary, HMM) needs new fingerprints: it starts a reindex job that
builds a new index generation beside the old one, which keeps serving until
the new one is complete; then one atomic switch (articles/index/reindex.py).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

from fingerprints.rule import EngineConfig
from fingerprints.rule.bounds import Bounds
from fingerprints.rule.config import model_from_dict
from fingerprints.rule.match_model import MatchModel, starting_model

BOUND_NAMES = frozenset(f.name for f in dataclasses.fields(Bounds))

_cache = threading.local()


def config_to_json(config: EngineConfig) -> dict[str, Any]:
    data = {f.name: getattr(config, f.name) for f in dataclasses.fields(EngineConfig)}
    data["model"] = config.model.as_dict()
    data["extra_stopwords"] = sorted(config.extra_stopwords)
    data["user_words"] = [list(word) for word in config.user_words]
    return data


def config_from_json(data: dict[str, Any]) -> EngineConfig:
    """The configuration :func:`config_to_json` wrote. A state written before the level
    bounds were part of the model holds them beside it: they become its bounds, so
    the engine decides as it did until the admin saves the settings again."""
    known = {f.name for f in dataclasses.fields(EngineConfig)}
    values = {k: v for k, v in data.items() if k in known}
    if "extra_stopwords" in values:
        values["extra_stopwords"] = frozenset(values["extra_stopwords"])
    if "user_words" in values:
        values["user_words"] = tuple(tuple(w) for w in values["user_words"])
    model = (model_from_dict(values["model"]) if "model" in values  # absent before
             else starting_model())  # the match model
    legacy = {k: v for k, v in data.items() if k in BOUND_NAMES}
    if isinstance(model, MatchModel) and legacy and "bounds" not in data.get("model", {}):
        model = dataclasses.replace(model, bounds=dataclasses.replace(model.bounds, **legacy))
    values["model"] = model
    return EngineConfig(**values)


def needs_reindex(old: EngineConfig, new: EngineConfig) -> bool:
    """Does going from ``old`` to ``new`` need new features or a new block layout (the
    fields' kinds: ``EngineConfig.index_shape``)?"""
    return old.index_shape() != new.index_shape()


def active_version() -> int | None:
    """The settings version of the configuration `active_config()` returned last."""
    cached = getattr(_cache, "entry", None)
    return cached[0] if cached is not None else None


def active_config() -> EngineConfig:
    """The configuration of the active index, re-read when its version changes."""
    return active_state()[1]


def active_state(max_age_ms: int | None = None) -> tuple[str | None, EngineConfig]:
    """The database's index generation and the active configuration, in one query,
    reused for ``max_age_ms`` (default ``settings.STATE_CACHE_MS``) in this thread.

    A reused state can be older than an index switch: the batch then finds another
    generation in Redis (``reindex.ensure_index``) and reads the state again
    (``max_age_ms=0``), and the lock script refuses a generation that is no longer
    Redis's (articles/ingest/assign.py). A verification threshold changed in admin reaches
    the other processes within the reuse time."""
    from django.conf import settings

    from articles.models import IndexState

    if max_age_ms is None:
        max_age_ms = settings.STATE_CACHE_MS
    now = time.monotonic()
    cached = getattr(_cache, "state", None)
    if cached is not None and (now - cached[0]) * 1000 < max_age_ms:
        return cached[1]
    row = IndexState.objects.filter(pk=1).values_list("generation", "config_version",
                                                      "config").first()
    state = (row[0] or None if row else None), _config_of(row[1:] if row else None)
    _cache.state = (now, state)
    return state


def forget_state() -> None:
    """Read the state again at the next :func:`active_state` (this thread): after this
    process changed it."""
    _cache.state = None
    _cache.entry = None


def _config_of(row: tuple[int, Any] | None) -> EngineConfig:
    if row is None or not row[1]:
        return EngineConfig()
    version, data = row
    cached = getattr(_cache, "entry", None)
    if cached is None or cached[0] != version:
        cached = (version, config_from_json(data))
        _cache.entry = cached
    return cached[1]
