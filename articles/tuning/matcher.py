"""The match model learns from the editors: fit, compare on held-out decisions, activate.

The editors' decisions are labels: must-link pairs (confirm, merge, move) are one
story, cannot-link pairs (split, move away) are not (``EditorLink``). Each pair is
verified with the active settings (its stored features), which gives the levels it
reaches (fingerprints/rule/match_model.py). One decision in five (``held_out.HELD_OUT``) is kept
out of the fit whole, every pair it labelled (articles/tuning/held_out.py: by a hash of
the decision, so it stays on its side between runs; a split fans out into a pair per
member, and one editor's judgement must not both teach the candidate and vouch for it);
the model is fitted on the others (fingerprints/rule/match_training.py, starting from
the active model; asked to, the level bounds too, by cross-validation on folds that keep
each decision whole) and both models are scored on the held-out decisions' pairs, each at
its own bounds, threshold by threshold: that comparison is what the admin reads before
activating the new version. Activation is a settings change (a new settings version, no
reindex).

A *vector* version (engine v4: a model on the comparison vector,
fingerprints/rule/vector_model.py) learns from the pairs the engine actually compared:
for each article an editor's decision touched, the article against the member it was
matched through and against its doc's anchor (as the decision found them), labelled by
the editors' links between the two (a confirmed doc: one story). Not every member
fanned out: a split writes a cannot-link to each member, but the engine compared only
those two. Whole decisions are held out (the same decisions as above), and the fit's
calibration folds keep each decision whole too (:func:`train_vector`). The teaching
queue's answers (``PairLabel``, articles/editor/teaching.py) are labels on exactly the
pair asked and join them, an answer taking the place of a decision's label on the same
pair; they are held out and folded by connected component of the answered pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction
from django.utils import timezone

from articles.models import (
    Article,
    Decision,
    EditorLink,
    EngineSettings,
    LinkKind,
    MatchedBy,
    MatchModelVersion,
    PairAnswer,
    PairLabel,
)
from articles.tuning import editor_audit
from articles.tuning.held_out import (
    component_group,
    components,
    decision_group,
    group_held_out,
    group_key,
    link_groups,
)
from articles.tuning.held_out import decision_held_out as decision_held_out  # re-exported
from articles.tuning.preview import recent_articles
from articles.tuning.state import active_config
from fingerprints.batch.replay import Item, Replayer
from fingerprints.rule import EngineConfig, Features
from fingerprints.rule.comparison import compare_pair
from fingerprints.rule.decision import proposes
from fingerprints.rule.match_model import MatchModel, starting_model
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
from fingerprints.rule.vector_model import (
    VectorModel,
    rule_vector_model,
    shipped_vector_model,
)
from fingerprints.rule.vector_training import STRENGTH as VECTOR_STRENGTH
from fingerprints.rule.vector_training import VectorExample
from fingerprints.rule.vector_training import train as fit_vector
from fingerprints.rule.verification import verify

MIN_EACH = 10  # pairs of each kind (one story / not) the fit needs among the rest
MIN_PAIRS = 100  # candidate pairs the unlabelled estimate needs
SAMPLE = 5000  # recent articles replayed for the unlabelled estimate
THRESHOLDS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99)


class NotEnoughLabels(Exception):
    """Too few editors' decisions to fit a model on."""


@dataclass(frozen=True)
class Labelled:
    """An editors' link with its levels, and the group it is held out and folded with:
    the decision that wrote it, or the component of links no decision wrote."""

    nids: tuple[str, str]
    example: Example  # its levels under the configuration it was read with
    pair: PairOfFeatures  # what verification compares, to read its levels under another model
    group: str  # held_out.link_groups: "decision|<pk>" or "labels|<smallest nid>"

    @property
    def held_out(self) -> bool:
        return group_held_out(self.group)


def editor_pairs(config: EngineConfig) -> list[Labelled]:
    """Every editor-linked pair whose two articles have features, with its levels and
    its group (held out whole: one decision in five)."""
    links = [(kind, *EditorLink.ordered(a, b)) for kind, a, b
             in EditorLink.objects.values_list("kind", "nid_a", "nid_b")]
    nids = {n for _k, a, b in links for n in (a, b)}
    stored = dict(Article.objects.filter(nid__in=nids, features__isnull=False)
                  .values_list("nid", "features"))
    features = {nid: Features.from_bytes(bytes(data or b"")) for nid, data in stored.items()}
    groups = link_groups((a, b) for _kind, a, b in links)  # of every link: as the preview
    links = [(kind, a, b) for kind, a, b in links if a in features and b in features]
    out = []
    for kind, a, b in links:
        pair = PairOfFeatures(features[a], features[b], kind == LinkKind.MUST)
        out.append(Labelled((a, b), Example(levels_of(pair.a, pair.b, config), pair.match),
                            pair, groups[(a, b)]))
    return out


VECTOR_ACTIVE = ("the active model is a vector model: fit a vector version, or add and "
                 "activate the rule's shipped model (labels-1) to fit rule versions")


def train(*, strength: float = STRENGTH, bounds: bool = False,
          user: Any = None) -> MatchModelVersion:
    """Fit a new model version to the editors' decisions; it is not active until
    :func:`activate`. ``bounds``: the level bounds too, by cross-validation on the
    decisions fitted on (match_training.fit_bounds); else the active model's stay.
    Raises :class:`NotEnoughLabels`."""
    config = active_config()
    current = config.model
    if not isinstance(current, MatchModel):
        raise NotEnoughLabels(VECTOR_ACTIVE)
    pairs = editor_pairs(config)
    train_on = _enough([p for p in pairs if not p.held_out])
    description = f"fitted to {len(train_on)} editors' decisions from {current.version}"
    if bounds:
        proposed, moves = fit_bounds(
            [p.pair for p in train_on], current, config, _next_version(),
            keys=[group_key(p.group) for p in train_on], strength=strength)
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
    if not isinstance(current, MatchModel):
        raise NotEnoughLabels(VECTOR_ACTIVE)
    proposed = estimate(pairs, current, _next_version(), description=(
        f"estimated without labels (EM) from {len(pairs)} candidate pairs of "
        f"{len(rows)} recent articles"))
    return _saved(proposed, current, config, len(pairs), editor_pairs(config), user)


def _saved(proposed: MatchModel, current: MatchModel, config: EngineConfig, trained: int,
           held: list[Labelled], user: Any, fitted: Sequence[Labelled] = ()
           ) -> MatchModelVersion:
    """The new version with its comparison to ``current`` on the ``held`` pairs (the
    held-out decisions' pairs), each read at the levels of the model that scores it (the
    bounds may differ)."""
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
        "grouped": "decision", "heldOutDecisions": len({p.group for p in held}),
        # whose decisions these are; flagged when one editor's dominate (editor_audit.py)
        **editor_audit.audit(fitted, held, current, proposed, config),
    }
    return MatchModelVersion.objects.create(
        version=proposed.version, base=current.version, weights=proposed.as_dict(),
        trained_pairs=trained, held_out_pairs=len(held), report=report,
        created_by=user if getattr(user, "pk", None) else None)


# --- vector versions (engine v4) -----------------------------------------------------

COMPARED_BY_ENGINE = (MatchedBy.TITLE, MatchedBy.CONTENT, MatchedBy.PICTURE)


@dataclass(frozen=True)
class ComparedPair:
    """An editors' label on a pair the engine compared: its two articles' features,
    the label, and the decision it came from (held out and folded whole)."""

    nids: tuple[str, str]
    a: Features
    b: Features
    match: bool
    decision: int | None  # None: an answer on the teaching queue (PairLabel)
    component: str = ""  # labelled pairs: the smallest nid of their connected component
    answer: int | None = None  # the PairLabel's pk, for an answer
    inclusion: float | None = None  # an audit answer: its inclusion probability

    @property
    def group(self) -> str:
        """What is held out and folded whole: a decision, or a component of labelled
        pairs (pairs sharing an article never fall on two sides)."""
        if self.decision is not None:
            return decision_group(self.decision)
        return component_group(self.component)

    @property
    def held_out(self) -> bool:
        return group_held_out(self.group)


def compared_pairs() -> list[ComparedPair]:
    """The pairs the engine compared that the editors' decisions label (the module's
    docstring), one per pair of articles: the latest decision's. A pair is labelled by
    the editors' link between its two articles, or, in a doc an editor confirmed, as one
    story; a pair without either is not labelled."""
    links = {(a, b): kind == LinkKind.MUST
             for kind, a, b in EditorLink.objects.values_list("kind", "nid_a", "nid_b")}
    found: dict[tuple[int, int], tuple[int, bool]] = {}  # article pks -> (decision, confirm)
    for pk, action, before in (Decision.objects.filter(undone_at__isnull=True)
                               .order_by("pk").values_list("pk", "action", "before")):
        articles = (before or {}).get("articles") or {}
        docs = (before or {}).get("docs") or {}
        for article, state in articles.items():
            if state.get("matched_by") not in COMPARED_BY_ENGINE:
                continue  # placed by an editor or by its URL: the engine weighed nothing
            anchor = (docs.get(str(state.get("doc_id"))) or {}).get("anchor_id")
            for other in {state.get("matched_article_id"), anchor} - {None, int(article)}:
                confirmed = action == "confirm" and str(other) in articles
                found[(int(article), int(other))] = (pk, confirmed)
    pks = {pk for pair in found for pk in pair}
    rows = {pk: (nid, data) for pk, nid, data in Article.objects.filter(
        pk__in=pks, features__isnull=False).values_list("pk", "nid", "features")}
    out: dict[tuple[str, str], ComparedPair] = {}
    for (x, y), (decision, confirmed) in found.items():
        if x not in rows or y not in rows:
            continue
        nids = EditorLink.ordered(rows[x][0], rows[y][0])
        label = links.get(nids, True if confirmed else None)
        if label is None:
            continue
        out[nids] = ComparedPair(nids, Features.from_bytes(bytes(rows[x][1] or b"")),
                                 Features.from_bytes(bytes(rows[y][1] or b"")), label, decision)
    out.update(labelled_pairs())  # an answer on exactly the pair says more than a fan-out
    return list(out.values())


def labelled_pairs() -> dict[tuple[str, str], ComparedPair]:
    """The teaching queue's answers ("same story" / "different"; not "not sure", not
    taken back), the latest per pair, grouped by connected component of the answered
    pairs."""
    answers: dict[tuple[str, str], bool] = {}
    rows: dict[tuple[str, str], tuple[int, float | None]] = {}
    for pk, a, b, answer, audit, inclusion in (
            PairLabel.objects.filter(undone_at__isnull=True)
            .exclude(answer=PairAnswer.UNSURE).order_by("pk")
            .values_list("pk", "nid_a", "nid_b", "answer", "audit", "inclusion_probability")):
        answers[EditorLink.ordered(a, b)] = answer == PairAnswer.SAME
        rows[EditorLink.ordered(a, b)] = (pk, inclusion if audit else None)
    root = components(answers)
    stored = dict(Article.objects.filter(
        nid__in={n for pair in answers for n in pair}, features__isnull=False)
        .values_list("nid", "features"))
    out = {}
    for (a, b), match in answers.items():
        if a in stored and b in stored:
            out[(a, b)] = ComparedPair((a, b), Features.from_bytes(bytes(stored[a] or b"")),
                                       Features.from_bytes(bytes(stored[b] or b"")), match,
                                       None, root[a], *rows[(a, b)])
    return out


def train_vector(*, strength: float = VECTOR_STRENGTH, user: Any = None,
                 scheduled: bool = False) -> MatchModelVersion:
    """Fit a vector version to the pairs the engine compared (:func:`compared_pairs`),
    the prior centred on :func:`prior_of` (the active model, or where its chain of fits
    started); calibrated on folds that keep each decision whole; compared with the
    active model on the decisions held out and on the audit stream's held-out answers;
    flagged when one editor gave more than 60 % of the labels fitted on
    (editor_audit.label_shares). ``scheduled``: fitted by the scheduled retraining
    (articles/tuning/retraining.py). Not active until :func:`activate`. Raises
    :class:`NotEnoughLabels`."""
    config = active_config()
    pairs = compared_pairs()
    train_on = [p for p in pairs if not p.held_out]
    matches = sum(1 for p in train_on if p.match)
    if min(matches, len(train_on) - matches) < MIN_EACH:
        raise NotEnoughLabels(
            f"{matches} compared pairs confirmed as one story and {len(train_on) - matches} "
            f"split among the {len(train_on)} to fit on; at least {MIN_EACH} of each are "
            "needed")
    start = prior_of(config)
    examples = [VectorExample(compare_pair(p.a, p.b, picture_bits=config.picture_bits),
                              p.match) for p in train_on]
    proposed = fit_vector(
        examples, [p.group for p in train_on], start, _next_version(), strength=strength,
        description=(f"fitted to {len(train_on)} pairs the engine compared, from "
                     f"{len({p.decision for p in train_on if p.decision is not None})} "
                     f"editors' decisions and "
                     f"{sum(1 for p in train_on if p.decision is None)} answers on the "
                     f"teaching queue, from {start.version}"))
    held = [p for p in pairs if p.held_out]
    cfg = replace(config, model=proposed)
    report = operating_points(
        [(p.a, p.b, p.match) for p in held], config, cfg)
    report["heldOutDecisions"] = len({p.group for p in held})
    # the audit stream's held-out answers: unbiased, each weighed by 1 / its inclusion
    report["audit"] = audit_stream([p for p in held if p.inclusion], config, cfg)
    rows, flags = editor_audit.label_shares(editors_of_labels(train_on),
                                            editors_of_labels(held))
    report["editors"], report["flags"] = rows, flags
    return MatchModelVersion.objects.create(
        version=proposed.version, base=start.version, weights=proposed.as_dict(),
        trained_pairs=len(train_on), held_out_pairs=len(held), report=report,
        labels=labels_of(train_on, held), flagged=bool(flags), scheduled=scheduled,
        created_by=user if getattr(user, "pk", None) else None)


def prior_of(config: EngineConfig) -> VectorModel:
    """The model a vector fit's prior is centred on: the active vector model (else the
    shipped one), or, when the active model is itself a version fitted to labels, the
    model its chain of fits started from (its ``base``, followed back to a version no
    label was fitted to: the shipped model, vector-0 or one an admin added). Every fit
    uses every standing label again, so a prior centred on a version already fitted to
    them would count them twice, and each refit would lean further on its first answers
    (bench/teaching_lift.py: with the prior on the previous fit, 100 answers fell below
    the start in five seeds of eight; docs/results/teaching.md)."""
    model = config.model if isinstance(config.model, VectorModel) else shipped_vector_model()
    known = {m.version: m for m in (shipped_vector_model(), rule_vector_model())}
    seen: set[str] = set()
    while model.version not in seen:
        seen.add(model.version)
        row = MatchModelVersion.objects.filter(version=model.version).values_list(
            "trained_pairs", "base").first()
        if row is None or not row[0]:
            break  # no label was fitted to it
        parent = MatchModelVersion.objects.filter(version=row[1]).first()
        if parent is not None and parent.kind == "vector":
            model = VectorModel.from_dict(parent.weights)
        elif row[1] in known:
            model = known[row[1]]
        else:
            break
    return model


def labels_of(train_on: Sequence[ComparedPair], held: Sequence[ComparedPair]
              ) -> dict[str, list[int]]:
    """The decisions and the teaching queue's answers a vector version was fitted on
    and held out (``MatchModelVersion.labels``)."""

    def ids(pairs: Sequence[ComparedPair], answers: bool) -> list[int]:
        found = {p.answer if answers else p.decision for p in pairs}
        return sorted(pk for pk in found if pk is not None)

    return {"decisions": ids(train_on, False), "answers": ids(train_on, True),
            "heldOutDecisions": ids(held, False), "heldOutAnswers": ids(held, True)}


def editors_of_labels(pairs: Sequence[ComparedPair]) -> list[str]:
    """The username of the editor who gave each label: the decision's actor, or the
    answer's editor (``editor_audit.UNKNOWN`` for none)."""
    decisions = dict(Decision.objects.filter(pk__in={p.decision for p in pairs})
                     .values_list("pk", "actor__username"))
    answers = dict(PairLabel.objects.filter(pk__in={p.answer for p in pairs})
                   .values_list("pk", "editor__username"))
    return [(decisions.get(p.decision) if p.decision is not None
             else answers.get(p.answer) if p.answer is not None else None)
            or editor_audit.UNKNOWN for p in pairs]


def audit_stream(held: Sequence[ComparedPair], current: EngineConfig,
                 proposed: EngineConfig) -> dict[str, Any]:
    """Precision, recall and F1 of both configurations at the active threshold on the
    audit answers ``held`` out (``inclusion`` set), each weighed by the inverse of its
    inclusion probability (Horvitz-Thompson, as the teaching page estimates): the
    uncertainty-sampled answers would flatter or blame the model on its doubtful pairs."""

    def figures(config: EngineConfig) -> dict[str, Any]:
        tp = fp = fn = 0.0
        for p in held:
            found = proposes(p.a, p.b, config) or proposes(p.b, p.a, config)
            said = found and verify(p.a, p.b, config).probability >= current.match_threshold
            weight = 1.0 / (p.inclusion or 1.0)
            tp += weight * (said and p.match)
            fp += weight * (said and not p.match)
            fn += weight * (p.match and not said)
        precision = tp / (tp + fp) if tp + fp else None
        recall = tp / (tp + fn) if tp + fn else None
        f1 = (2 * precision * recall / (precision + recall)
              if precision is not None and recall is not None and precision + recall
              else None)
        return {"precision": precision, "recall": recall, "f1": f1}

    return {"answers": len(held), "current": figures(current),
            "proposed": figures(proposed)}


def shipped_rule_version() -> MatchModelVersion:
    """The rule's shipped model (``data/match_model.json``, ``labels-1``: the weights of
    the rule walk's levels, engine v3) as a version an admin can activate instead of the
    default vector model, and fit rule versions from; made once (by its version name)."""
    model = starting_model()
    version, _created = MatchModelVersion.objects.get_or_create(
        version=model.version, defaults={"base": "rule-1", "weights": model.as_dict()})
    return version


def shipped_vector_version() -> MatchModelVersion:
    """The shipped vector model (``data/vector_model.json``) as a version an admin can
    compare and activate; made once (by its version name)."""
    model = shipped_vector_model()
    version, _created = MatchModelVersion.objects.get_or_create(
        version=model.version, defaults={"base": "vector-0", "weights": model.as_dict()})
    return version


def operating_points(held: list[tuple[Features, Features, bool]], current: EngineConfig,
                     proposed: EngineConfig) -> dict[str, Any]:
    """The operating-point table of the active and the proposed configuration on the
    ``held`` pairs, threshold by threshold: precision, recall, F1, *merges* (pairs
    merged) and *review* (merged below ``anchorless_threshold``, short of near-certain:
    the pairs an editor would look at). A pair the candidate search would not propose
    (:func:`~fingerprints.rule.decision.proposes`, either way) is never merged: a miss
    when it is one story."""
    thresholds = sorted({*THRESHOLDS, current.match_threshold})

    def scored(config: EngineConfig) -> list[tuple[float, bool]]:
        out = []
        for a, b, match in held:
            found = proposes(a, b, config) or proposes(b, a, config)
            out.append((verify(a, b, config).probability if found else -1.0, match))
        return out

    def rows(config: EngineConfig) -> list[dict[str, Any]]:
        pairs = scored(config)
        out = []
        for t in thresholds:
            row = precision_recall(pairs, t)
            row["merges"] = sum(1 for p, _m in pairs if p >= t)
            row["review"] = sum(1 for p, _m in pairs if t <= p < config.anchorless_threshold)
            out.append(row)
        return out

    return {"thresholds": thresholds, "current": rows(current), "proposed": rows(proposed),
            "threshold": current.match_threshold, "grouped": "decision"}


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
