"""The match model learns from the editors: fit, compare on held-out decisions, activate.

The editors' decisions are labels: must-link pairs (confirm, merge, move) are one
story, cannot-link pairs (split, move away) are not (``EditorLink``). Each pair is
verified with the active settings (its stored features), which gives the levels it
reaches (fingerprints/rule/match_model.py). One pair in :data:`HELD_OUT` (by a hash of
the two nids, so a pair stays on its side between runs) is kept out of the fit; the
model is fitted on the others (fingerprints/rule/match_training.py, starting from the
active model; asked to, the level bounds too, by cross-validation on those pairs) and
both models are scored on the held-out pairs, each at its own bounds, threshold by
threshold: that comparison is what the admin reads before activating the new version.
Activation is a settings change (a new settings version, no reindex).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import mmh3
from django.db import transaction
from django.utils import timezone

from articles.models import Article, EditorLink, EngineSettings, LinkKind, MatchModelVersion
from articles.tuning import editor_audit
from articles.tuning.preview import recent_articles
from articles.tuning.state import active_config
from fingerprints.batch.replay import Item, Replayer
from fingerprints.rule import EngineConfig, Features
from fingerprints.rule.match_model import MatchModel
from fingerprints.rule.match_training import (
    FOLDS,
    STRENGTH,
    Example,
    PairOfFeatures,
    estimate,
    fit,
    fit_bounds,
    levels_of,
    precision_recall,
    scores,
)

HELD_OUT = 5  # one labelled pair in this many is kept out of the fit
MIN_EACH = 10  # pairs of each kind (one story / not) the fit needs among the rest
MIN_PAIRS = 100  # candidate pairs the unlabelled estimate needs
SAMPLE = 5000  # recent articles replayed for the unlabelled estimate
THRESHOLDS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99)


class NotEnoughLabels(Exception):
    """Too few editors' decisions to fit a model on."""


@dataclass(frozen=True)
class Labelled:
    nids: tuple[str, str]
    example: Example  # its levels under the configuration it was read with
    held_out: bool
    pair: PairOfFeatures  # what verification compares, to read its levels under another model


def is_held_out(nid_a: str, nid_b: str) -> bool:
    return _key((nid_a, nid_b)) % HELD_OUT == 0


def editor_pairs(config: EngineConfig) -> list[Labelled]:
    """Every editor-linked pair whose two articles have features, with its levels."""
    links = list(EditorLink.objects.values_list("kind", "nid_a", "nid_b"))
    nids = {n for _k, a, b in links for n in (a, b)}
    stored = dict(Article.objects.filter(nid__in=nids, features__isnull=False)
                  .values_list("nid", "features"))
    features = {nid: Features.from_bytes(bytes(data or b"")) for nid, data in stored.items()}
    out = []
    for kind, a, b in links:
        if a in features and b in features:
            pair = PairOfFeatures(features[a], features[b], kind == LinkKind.MUST)
            out.append(Labelled((a, b), Example(levels_of(pair.a, pair.b, config), pair.match),
                                is_held_out(a, b), pair))
    return out


def _key(nids: tuple[str, str]) -> int:
    return mmh3.hash("|".join(nids), signed=False)


def train(*, strength: float = STRENGTH, bounds: bool = False,
          user: Any = None) -> MatchModelVersion:
    """Fit a new model version to the editors' decisions; it is not active until
    :func:`activate`. ``bounds``: the level bounds too, by cross-validation on the
    decisions fitted on (match_training.fit_bounds); else the active model's stay.
    Raises :class:`NotEnoughLabels`."""
    config = active_config()
    pairs = editor_pairs(config)
    train_on = _enough([p for p in pairs if not p.held_out])
    current = config.model
    description = f"fitted to {len(train_on)} editors' decisions from {current.version}"
    if bounds:
        proposed, moves = fit_bounds(
            [p.pair for p in train_on], current, config, _next_version(),
            keys=[_key(p.nids) for p in train_on], strength=strength)
        moved = ", ".join(f"{m.name} {m.before:g} -> {m.after:g}" for m in moves)
        proposed = replace(proposed, description=(
            f"{description}, level bounds by {FOLDS}-fold cross-validation "
            f"({moved or 'none moved'})"))
    else:
        proposed = fit([p.example for p in train_on], current, _next_version(),
                       strength=strength, description=description)
    held = [p for p in pairs if p.held_out]
    return _saved(proposed, current, config, len(train_on), held, user, fitted=train_on)


def _enough(train_on: list[Labelled]) -> list[Labelled]:
    matches = sum(1 for p in train_on if p.example.match)
    if min(matches, len(train_on) - matches) < MIN_EACH:
        raise NotEnoughLabels(
            f"{matches} pairs confirmed as one story and {len(train_on) - matches} split "
            f"among the {len(train_on)} to fit on; at least {MIN_EACH} of each are needed")
    return train_on


def check_labels() -> None:
    """Raise :class:`NotEnoughLabels` when :func:`train` would (before a job is queued)."""
    _enough([p for p in editor_pairs(active_config()) if not p.held_out])


def train_job(bounds: bool, user_id: int | None) -> str:
    """RQ job (the admin's fit with the level bounds: minutes on thousands of decisions,
    longer than a request may take): :func:`train`; returns the new version's name."""
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.filter(pk=user_id).first() if user_id else None
    return train(bounds=bounds, user=user).version


def train_unlabelled(*, sample: int = SAMPLE, user: Any = None) -> MatchModelVersion:
    """Estimate a new version without labels (EM) from the candidate pairs of the
    ``sample`` most recent articles replayed through the online rule; every editors'
    decision is held out (none was used). Raises :class:`NotEnoughLabels` when the
    sample has fewer than :data:`MIN_PAIRS` candidate pairs."""
    config = active_config()
    rows = recent_articles(sample)
    features = [Features.from_bytes(bytes(r["features"] or b"")) for r in rows]
    replayer = Replayer(config, record_pairs=True)
    for row, feats in zip(rows, features, strict=True):
        replayer.add(Item(seq=row["id"], nid=row["nid"], features=feats,
                          url_hash=row["url_hash"]))
    by_id = {row["id"]: feats for row, feats in zip(rows, features, strict=True)}
    pairs = []
    for a, b in replayer.pairs or ():
        pairs.append(levels_of(by_id[b], by_id[a], config))
    if len(pairs) < MIN_PAIRS:
        raise NotEnoughLabels(f"{len(pairs)} candidate pairs among the {len(rows)} most "
                              f"recent articles; at least {MIN_PAIRS} are needed")
    current = config.model
    proposed = estimate(pairs, current, _next_version(), description=(
        f"estimated without labels (EM) from {len(pairs)} candidate pairs of "
        f"{len(rows)} recent articles"))
    return _saved(proposed, current, config, len(pairs), editor_pairs(config), user)


def _saved(proposed: MatchModel, current: MatchModel, config: EngineConfig, trained: int,
           held: list[Labelled], user: Any, fitted: Sequence[Labelled] = ()
           ) -> MatchModelVersion:
    """The new version with its comparison to ``current`` on the ``held`` pairs, each
    read at the levels of the model that scores it (the bounds may differ)."""
    thresholds = sorted({*THRESHOLDS, config.match_threshold})  # the admin's among them
    now = [p.example for p in held]
    if proposed.bounds == current.bounds:
        then = now
    else:
        cfg = replace(config, model=proposed)
        then = [Example(levels_of(p.pair.a, p.pair.b, cfg), p.pair.match) for p in held]
    report = {
        "thresholds": thresholds,
        "current": [precision_recall(scores(current, now), t) for t in thresholds],
        "proposed": [precision_recall(scores(proposed, then), t) for t in thresholds],
        "threshold": config.match_threshold,
        # whose decisions these are; flagged when one editor's dominate (editor_audit.py)
        **editor_audit.audit(fitted, held, current, proposed, config),
    }
    return MatchModelVersion.objects.create(
        version=proposed.version, base=current.version, weights=proposed.as_dict(),
        trained_pairs=trained, held_out_pairs=len(held), report=report,
        created_by=user if getattr(user, "pk", None) else None)


def _next_version() -> str:
    stamp = timezone.now().strftime("editors-%Y%m%d-%H%M%S")
    version, n = stamp, 1
    while MatchModelVersion.objects.filter(version=version).exists():
        n += 1
        version = f"{stamp}-{n}"
    return version


def activate(version: MatchModelVersion | None) -> EngineSettings:
    """Make ``version`` (None: the shipped model) the engine's model: a new settings
    version. The caller applies it like an admin's save (``apply_settings``; no
    reindex: weights are decision fields)."""
    with transaction.atomic():
        settings = EngineSettings.objects.select_for_update().get(pk=EngineSettings.load().pk)
        settings.match_model = version
        settings.version += 1
        settings.save()
    return settings
