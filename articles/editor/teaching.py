"""The teaching queue: single candidate pairs whose answers would teach the engine most.

Where the pairs come from: the newest ``TEACHING_WINDOW`` processed articles are
replayed through the online candidate search (fingerprints/batch/replay.py, as the
unlabelled estimate does), which gives every pair the engine *proposes*, joined or
not. Nothing new is recorded at decision time: the replay is bounded by the window
and costs what a settings preview costs, and a pair the engine did not join is found
as long as both articles are recent.

Which pair is asked next (:func:`choose`):

- with probability ``TEACHING_AUDIT_PERCENT`` / 100, an *audit* item: one pair drawn
  uniformly at random from the open pool; the label keeps the probability of that draw
  (the audit share over the pool's size), so precision and recall estimated from audit
  labels weigh each by its inverse and are unbiased (the uncertain items are not);
- otherwise the most *doubtful* open pair: the active model's probability nearest the
  threshold, pulled forward by disagreement with the shipped vector model (dedupe's
  "two models disagree" signal), skipping families (the earlier article's docId) the
  desk was asked about twice in its last answers, so a templated bulletin does not fill
  the queue.

A drill (``TEACHING_DRILL_PAIRS``, a file of labelled pairs) replaces the candidate
search's pool by those pairs (:func:`drill_pool`), so that a scripted editor answering
with the labels (bench/teaching_drill.py) is asked only what it can answer.

An answer is a :class:`~articles.models.PairLabel` on exactly that pair, stored with
the model version and probability that scored it; where the editor may act, "same
story" joins the later article to the earlier one's docId and "different" splits a
pair the engine joined (articles/editor/actions.py), undone with the answer.
"""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.utils import timezone

from articles.editor import actions
from articles.models import Article, ArticleStatus, Decision, PairAnswer, PairLabel
from articles.tuning.preview import recent_articles
from articles.tuning.state import active_config
from fingerprints.batch.replay import Item, Replayer
from fingerprints.rule import EngineConfig, Features
from fingerprints.rule.vector_model import shipped_vector_model
from fingerprints.rule.verification import verify

PER_FAMILY = 2  # pairs of one family among the desk's RECENT answers before it is skipped
RECENT = 10
STOP_WINDOW = 20  # the suggested stopping point: of the last STOP_WINDOW sure answers,
STOP_AGREE = 19  # at least STOP_AGREE agreed with the model's verdict
DISAGREEMENT_WEIGHT = 0.5
SALT = "articles.teaching"


@dataclass(frozen=True)
class Candidate:
    """A candidate pair: the earlier article first (its docId is the pair's family)."""

    a: int
    b: int
    nid_a: str
    nid_b: str
    family: str
    joined: bool  # the two are in one docId now
    probability: float  # the active model's
    shipped: float  # the shipped vector model's

    def doubt(self, threshold: float) -> float:
        """Smaller is more doubtful: distance to the threshold, less the disagreement."""
        return (abs(self.probability - threshold)
                - DISAGREEMENT_WEIGHT * abs(self.probability - self.shipped))


@dataclass(frozen=True)
class Asked:
    """The pair put to the editor and how it was chosen (signed into the answer form)."""

    candidate: Candidate
    audit: bool
    inclusion_probability: float | None  # audit items only: the chance of this draw
    model_version: str
    threshold: float

    def token(self) -> str:
        """The pair and how it was drawn, signed (not encrypted: readable in the page), so
        it carries nothing of the model's view: the answer is scored again
        (:func:`rescored`)."""
        c = self.candidate
        return signing.dumps({
            "a": c.a, "b": c.b, "na": c.nid_a, "nb": c.nid_b, "f": c.family,
            "j": c.joined, "audit": self.audit, "pi": self.inclusion_probability},
            salt=SALT)

    @classmethod
    def from_token(cls, token: str) -> Asked:
        """The pair of a token, not yet scored (:func:`rescored`). Raises
        ``signing.BadSignature`` for a token this server did not sign."""
        d = signing.loads(token, salt=SALT)
        return cls(Candidate(int(d["a"]), int(d["b"]), str(d["na"]), str(d["nb"]),
                             str(d["f"]), bool(d["j"]), UNSCORED, UNSCORED),
                   bool(d["audit"]), None if d["pi"] is None else float(d["pi"]), "",
                   UNSCORED)


UNSCORED = -1.0


def rescored(asked: Asked, config: EngineConfig | None = None) -> Asked:
    """``asked`` scored by the active model (its version and threshold) and the shipped
    vector model, from the two articles' stored features."""
    config = config or active_config()
    c = asked.candidate
    stored = dict(Article.objects.filter(pk__in=[c.a, c.b], features__isnull=False)
                  .values_list("pk", "features"))
    probability = shipped = UNSCORED
    if c.a in stored and c.b in stored:
        fa = Features.from_bytes(bytes(stored[c.a] or b""))
        fb = Features.from_bytes(bytes(stored[c.b] or b""))
        probability = verify(fb, fa, config).probability
        shipped = verify(fb, fa, replace(config, model=shipped_vector_model())).probability
    return replace(asked, candidate=replace(c, probability=probability, shipped=shipped),
                   model_version=_model_version(config), threshold=config.match_threshold)


def candidate_pool(config: EngineConfig | None = None, window: int | None = None
                   ) -> list[Candidate]:
    """Every pair the candidate search proposes among the newest ``window`` articles,
    scored by the active model and by the shipped vector model."""
    config = config or active_config()
    rows = recent_articles(window or settings.TEACHING_WINDOW)
    features = {r["id"]: Features.from_bytes(bytes(r["features"] or b"")) for r in rows}
    by_id = {r["id"]: r for r in rows}
    replayer = Replayer(config, record_pairs=True)
    for row in rows:
        replayer.add(Item(seq=row["id"], nid=row["nid"], features=features[row["id"]],
                          url_hash=row["url_hash"]))
    shipped = replace(config, model=shipped_vector_model())
    out: dict[tuple[int, int], Candidate] = {}
    for x, y in replayer.pairs or ():
        a, b = min(x, y), max(x, y)
        if a == b or (a, b) in out:
            continue
        fa, fb = features[a], features[b]
        out[(a, b)] = Candidate(
            a, b, by_id[a]["nid"], by_id[b]["nid"], by_id[a]["doc__doc_id"] or "",
            by_id[a]["doc__doc_id"] == by_id[b]["doc__doc_id"],
            verify(fb, fa, config).probability, verify(fb, fa, shipped).probability)
    return list(out.values())


def drill_pairs(path: str) -> list[tuple[str, str]]:
    """The pairs of a drill file (``TEACHING_DRILL_PAIRS``): its ``id_a``, ``id_b`` columns,
    in file order, each pair once. Labels, if the file has them, are not read: the desk
    must not know the answers."""
    with open(path, encoding="utf-8", newline="") as handle:
        rows = [(str(r["id_a"]).strip(), str(r["id_b"]).strip())
                for r in csv.DictReader(handle)]
    return list(dict.fromkeys((a, b) for a, b in rows if a and b and a != b))


def drill_pool(path: str, config: EngineConfig | None = None) -> list[Candidate]:
    """The drill's pool: the pairs of ``path`` whose two articles are stored and
    processed, the earlier article first, scored as :func:`candidate_pool` scores (the
    candidate search is not asked: a drill asks about its labelled pairs only)."""
    config = config or active_config()
    pairs = drill_pairs(path)
    rows = {r["nid"]: r for r in Article.objects.filter(
        nid__in={n for pair in pairs for n in pair}, status=ArticleStatus.DONE,
        doc__isnull=False, features__isnull=False).values("id", "nid", "features",
                                                          "doc__doc_id")}
    features = {nid: Features.from_bytes(bytes(r["features"] or b"")) for nid, r in rows.items()}
    shipped = replace(config, model=shipped_vector_model())
    out: dict[tuple[int, int], Candidate] = {}
    for x, y in pairs:
        if x not in rows or y not in rows:
            continue
        first, later = sorted((rows[x], rows[y]), key=lambda r: r["id"])
        key = (first["id"], later["id"])
        if key in out:
            continue
        fa, fb = features[first["nid"]], features[later["nid"]]
        out[key] = Candidate(
            first["id"], later["id"], first["nid"], later["nid"], first["doc__doc_id"] or "",
            first["doc__doc_id"] == later["doc__doc_id"],
            verify(fb, fa, config).probability, verify(fb, fa, shipped).probability)
    return list(out.values())


def answered_pairs() -> set[tuple[str, str]]:
    return set(PairLabel.objects.filter(undone_at__isnull=True)
               .values_list("nid_a", "nid_b"))


def _model_version(config: EngineConfig) -> str:
    return str(getattr(config.model, "version", ""))


def choose(pool: list[Candidate], answered: set[tuple[str, str]], recent_families: list[str],
           config: EngineConfig, rng: random.Random | None = None,
           audit_percent: int | None = None) -> Asked | None:
    """The next pair to ask (the module's docstring), None when every pair is answered."""
    rng = rng or random.SystemRandom()
    share = (settings.TEACHING_AUDIT_PERCENT if audit_percent is None else audit_percent) / 100
    open_ = [c for c in pool if (c.nid_a, c.nid_b) not in answered]
    if not open_:
        return None
    version, threshold = _model_version(config), config.match_threshold
    if share > 0 and rng.random() < share:
        picked = open_[rng.randrange(len(open_))]
        return Asked(picked, True, share / len(open_), version, threshold)
    seen: dict[str, int] = {}
    for family in recent_families:
        seen[family] = seen.get(family, 0) + 1
    ranked = sorted(open_, key=lambda c: (c.doubt(threshold), c.a, c.b))
    fresh = [c for c in ranked if seen.get(c.family, 0) < PER_FAMILY]
    return Asked((fresh or ranked)[0], False, None, version, threshold)


def next_pair(user: Any, rng: random.Random | None = None) -> Asked | None:
    config = active_config()
    recent = list(PairLabel.objects.filter(editor=user if user.is_authenticated else None)
                  .filter(undone_at__isnull=True).order_by("-id")
                  .values_list("family", flat=True)[:RECENT])
    pool = (drill_pool(settings.TEACHING_DRILL_PAIRS, config) if settings.TEACHING_DRILL_PAIRS
            else candidate_pool(config))
    return choose(pool, answered_pairs(), recent, config, rng)


def record(asked: Asked, answer: str, user: Any) -> tuple[PairLabel, str]:
    """Store the answer on the pair; where ``user`` may act, apply it to the clusters.
    Returns the label and what was applied ("joined", "split", "" for nothing, or the
    reason the clusters were left as they are)."""
    if answer not in PairAnswer.values:
        raise ValueError(f"unknown answer {answer!r}")
    c = asked.candidate
    editor = user if getattr(user, "is_authenticated", False) else None
    with transaction.atomic():
        label = PairLabel.objects.create(
            nid_a=c.nid_a, nid_b=c.nid_b, family=c.family, answer=answer, editor=editor,
            model_version=asked.model_version,
            probability=None if c.probability == UNSCORED else c.probability,
            threshold=asked.threshold, audit=asked.audit,
            inclusion_probability=asked.inclusion_probability)
    applied = _apply(label, c, user) if actions.can_edit(user) else ""
    return label, applied


def _apply(label: PairLabel, c: Candidate, user: Any) -> str:
    """Join or split the pair's clusters as the answer says (nothing for "not sure" or
    when the clusters already agree with it)."""
    pair = {a.pk: a for a in Article.objects.select_related("doc").filter(pk__in=[c.a, c.b])}
    if len(pair) < 2 or pair[c.a].doc is None or pair[c.b].doc is None:
        return ""
    first, later = pair[c.a], pair[c.b]
    target, shared = first.doc, later.doc
    assert target is not None and shared is not None  # checked above
    together = first.doc_pk == later.doc_pk
    try:
        if label.answer == PairAnswer.SAME and not together:
            actions.move_article(later, target, user, "teaching queue: same story")
            applied = "joined"
        elif label.answer == PairAnswer.DIFFERENT and together:
            leaving = later if shared.representative_id != later.pk else first
            actions.split_article(leaving, user, "teaching queue: different")
            applied = "split"
        else:
            return ""
    except actions.EditError as exc:
        return str(exc)
    label.decision = Decision.objects.filter(actor=user).order_by("-pk").first()
    label.save(update_fields=["decision"])
    return applied


def undo(label: PairLabel, user: Any) -> None:
    """Take an answer back, and the join or split it applied (actions.undo; refused
    with ``actions.UndoRefused`` when its docIds were decided on since)."""
    with transaction.atomic():
        if label.decision is not None and label.decision.undone_at is None:
            actions.undo(label.decision, user, "teaching queue: answer undone")
        label.undone_at = timezone.now()
        label.save(update_fields=["undone_at"])


@dataclass(frozen=True)
class Progress:
    same: int
    different: int
    unsure: int
    agreed: int  # of the last `judged` sure answers, how many the model agreed with
    judged: int

    @property
    def total(self) -> int:
        return self.same + self.different + self.unsure

    @property
    def enough(self) -> bool:
        """The suggested stopping point: the model agrees with nearly every answer."""
        return self.judged >= STOP_WINDOW and self.agreed >= STOP_AGREE


def progress(user: Any) -> Progress:
    """The editor's running counts and agreement with the model (the stopping point)."""
    labels = PairLabel.objects.filter(editor=user, undone_at__isnull=True)
    counts = dict.fromkeys(PairAnswer.values, 0)
    for answer in labels.values_list("answer", flat=True):
        counts[answer] += 1
    last = list(labels.exclude(answer=PairAnswer.UNSURE).order_by("-id")
                .values_list("answer", "probability", "threshold")[:STOP_WINDOW])
    agreed = sum(1 for answer, p, t in last if p is not None and t is not None
                 and (answer == PairAnswer.SAME) == (p >= t))
    return Progress(counts[PairAnswer.SAME], counts[PairAnswer.DIFFERENT],
                    counts[PairAnswer.UNSURE], agreed, len(last))


@dataclass(frozen=True)
class AuditEstimate:
    answers: int  # sure answers of the audit stream
    precision: float | None  # of "probability >= threshold", each answer weighed 1 / pi
    recall: float | None


def audit_estimate(rows: list[tuple[str, float | None, float | None, float | None]]
                   ) -> AuditEstimate:
    """Precision and recall of the engine's verdicts (at the threshold each pair was asked
    with) from the audit stream's answers ``(answer, probability, threshold, inclusion
    probability)``: each weighed by the inverse of its inclusion probability (a ratio of
    Horvitz-Thompson totals), so that the pairs a draw was less likely to pick count for
    the more pairs they stand for. "Not sure" answers are left out."""
    tp = fp = fn = 0.0
    answers = 0
    for answer, probability, threshold, inclusion in rows:
        if answer == PairAnswer.UNSURE or probability is None or threshold is None \
                or not inclusion:
            continue
        answers += 1
        weight = 1.0 / inclusion
        said, same = probability >= threshold, answer == PairAnswer.SAME
        tp += weight * (said and same)
        fp += weight * (said and not same)
        fn += weight * (same and not said)
    return AuditEstimate(answers, tp / (tp + fp) if tp + fp else None,
                         tp / (tp + fn) if tp + fn else None)


def audit_of(model_version: str | None = None) -> AuditEstimate:
    """:func:`audit_estimate` of every audit answer standing (of one model version)."""
    labels = PairLabel.objects.filter(audit=True, undone_at__isnull=True)
    if model_version is not None:
        labels = labels.filter(model_version=model_version)
    return audit_estimate(list(labels.values_list("answer", "probability", "threshold",
                                                  "inclusion_probability")))
