"""The engine's tunables (:class:`EngineConfig`): candidates, segmenter, the match model.

Each field declares its *kind* in its metadata (:func:`kind_of`): ``fingerprint``
(stored features depend on it), ``layout`` (the index's block layout depends on it) or
``decision`` (applies to the next lookup). The reindex rule (:meth:`EngineConfig.index_shape`)
and docs/parameters.md (scripts/parameters_doc.py) both read it; the comments beside the
fields are the page's descriptions; docs/results/log.md has the runs that chose the defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Final

from fingerprints.rule.blocks import MAX_K
from fingerprints.rule.bounds import Bounds
from fingerprints.rule.match_model import MatchModel
from fingerprints.rule.tokenize import SegmenterSpec, UserWord
from fingerprints.rule.vector_model import KIND as VECTOR_KIND
from fingerprints.rule.vector_model import VectorModel, shipped_vector_model

DEFAULT_BOUNDS = Bounds()

# The picture index's largest pigeonhole k: every picture within this many bits is
# found; farther ones (up to picture_bits) when they share a block. A larger k reads
# far more records per lookup (k + 1 blocks of 64 / (k + 1) bits):
# docs/results/images.md, "Index reach", chose it.
PICTURE_INDEX_K = 4

FINGERPRINT: Final = "fingerprint"  # stored features depend on it: rebuild_index --recompute
LAYOUT: Final = "layout"  # the index's block layout depends on it: a new index generation
DECISION: Final = "decision"  # applies to the next lookup
KINDS = (FINGERPRINT, LAYOUT, DECISION)


def _fingerprint(default: Any) -> Any:
    return field(default=default, metadata={"kind": FINGERPRINT})


def _layout(default: Any) -> Any:
    return field(default=default, metadata={"kind": LAYOUT})


@dataclass(frozen=True)
class EngineConfig:
    """Every tunable of the engine. Defaults are the measured choices (docs/results/log.md).

    Changing a *fingerprint* field changes stored features, a *layout* field the
    index's blocks: both need a reindex (:meth:`index_shape`); fields without a kind in
    their metadata are *decision* fields.
    """

    k: int = _layout(3)  # content Hamming threshold: the index finds *every* fingerprint within k
    title_k: int = _layout(3)  # title Hamming threshold of the title rule
    # Candidates farther than k but sharing a pigeonhole block with the query come out of
    # the same buckets at no cost; they are verified like the others when within this
    # radius (pass it as ``max_distance`` to ``BlockIndex.query``); docs/engine.md, "Candidates".
    candidate_radius: int = 8
    hmm: bool = _fingerprint(False)  # jieba HMM for unknown words (off: rjieba == jieba)
    # words weighted 0, beside the shipped stopword lists
    extra_stopwords: frozenset[str] = _fingerprint(frozenset())
    user_words: tuple[UserWord, ...] = _fingerprint(())  # (word, freq, pos) for the segmenter
    backend: str = _fingerprint("rjieba")  # "rjieba" or "jieba" (identical tokens, HMM off)
    # a title with fewer informative words has no title fingerprint
    title_min_tokens: int = _fingerprint(2)
    # Multi-probe content lookups (see :func:`content_probes`): in each pigeonhole block
    # of the content fingerprint, the ``probe_bits`` least confident bits are flipped,
    # every non-empty subset of them: 4 * (2**probe_bits - 1) extra fingerprints at
    # k=3 (28 at the default 3). 0 turns probing off. Applies to the next lookup
    # (features need their weak bits: version 2).
    probe_bits: int = 3
    # Boilerplate learned from the stream (fingerprints/rule/boilerplate.py): a clause seen
    # in this many stories (docIds) is removed from every later body before its features
    # are extracted. 0 turns learning off (clauses already learned are still removed).
    # Stored features keep the boilerplate known when they were made: no reindex.
    boilerplate_min_docs: int = 5
    # --- pictures (Features.pictures: 64-bit perceptual hashes; docs/engine.md) ---
    # two pictures are one when a hash of one (of the picture, its mirror image or a part
    # of it: fingerprints/rule/picture.py, REGIONS) differs from a hash of the other in at
    # most this many bits (docs/results/images.md chose it). The picture index finds
    # every picture within picture_k bits, and those within picture_bits that share one of
    # its blocks. 0: only identical hashes. A picture seen in boilerplate_min_docs
    # stories (docIds) or more is stock (a logo, a banner, a default thumbnail): no
    # evidence for or against any pair. A change that moves picture_k (below
    # PICTURE_INDEX_K bits) changes the picture index's layout: a reindex.
    picture_bits: int = 8
    # --- the match model (fingerprints/rule/match_model.py; docs/engine.md) ---
    # a pair matches when its match probability under ``model`` is at least this, in
    # every language: raising it never adds a match, lowering it never removes one.
    # 0.5 is where the shipped models were measured (labels-1 decides there as the rule
    # did; vector-5's probability is calibrated: docs/results/match-model.md).
    match_threshold: float = 0.5
    # a candidate whose doc's anchor row the caller could not supply (the star rule
    # cannot be checked: fingerprints/rule/decision.py) joins that doc only when its own
    # match probability is at least this as well: a near-certain copy, in every
    # language. Raising it never adds a match, lowering it never removes one.
    anchorless_threshold: float = 0.99
    # the model on the comparison vector (engine v4: fingerprints/rule/vector_model.py;
    # data/vector_model.json, vector-5, or a version fitted to the editors' decisions), or
    # the rule's model: the weights of the rule walk's levels and the bounds where they
    # begin (engine v3: fingerprints/rule/bounds.py; data/match_model.json, labels-1, or
    # a model fitted by train_matcher). Applies to the next lookup.
    model: MatchModel | VectorModel = field(default_factory=shipped_vector_model)

    def __post_init__(self) -> None:
        for name, top in (("k", MAX_K), ("title_k", MAX_K), ("picture_bits", 32)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= top:
                raise ValueError(f"{name} must be an integer from 0 to {top}, not {value!r}")
        if not 0 <= self.candidate_radius <= 64:
            raise ValueError(
                f"candidate_radius must be from 0 to 64, not {self.candidate_radius!r}"
            )
        for name in ("match_threshold", "anchorless_threshold"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, not {value!r}")
        if not isinstance(self.probe_bits, int) or not 0 <= self.probe_bits <= 4:
            raise ValueError(f"probe_bits must be an integer from 0 to 4, not {self.probe_bits!r}")
        min_docs = self.boilerplate_min_docs
        if not isinstance(min_docs, int) or min_docs == 1 or not 0 <= min_docs <= 65535:
            raise ValueError("boilerplate_min_docs must be 0 (off) or from 2 to 65535, "
                             f"not {self.boilerplate_min_docs!r}")
        if self.backend not in ("rjieba", "jieba"):
            raise ValueError(f"backend must be 'rjieba' or 'jieba', not {self.backend!r}")

    @property
    def content_radius(self) -> int:
        """``max_distance`` for content lookups: max(k, candidate_radius)."""
        return max(self.k, self.candidate_radius)

    @property
    def title_radius(self) -> int:
        """``max_distance`` for title lookups: max(title_k, candidate_radius)."""
        return max(self.title_k, self.candidate_radius)

    @property
    def picture_k(self) -> int:
        """The picture index's pigeonhole ``k``: min(picture_bits, PICTURE_INDEX_K)."""
        return min(self.picture_bits, PICTURE_INDEX_K)

    @property
    def vector(self) -> VectorModel | None:
        """The model when it is one on the comparison vector (engine v4), else None."""
        return self.model if isinstance(self.model, VectorModel) else None

    @property
    def bounds(self) -> Bounds:
        """Where the model's levels begin: ``model.bounds`` (a vector model has cut
        points of its own: the rule's defaults, which only the rule reads)."""
        if isinstance(self.model, VectorModel):
            return DEFAULT_BOUNDS
        return self.model.bounds

    def with_bounds(self, **values: Any) -> EngineConfig:
        """This configuration with some of its model's level bounds moved."""
        if isinstance(self.model, VectorModel):
            raise ValueError("a vector model has no level bounds: its cut points are data")
        model = replace(self.model, bounds=replace(self.model.bounds, **values))
        return replace(self, model=model)

    @property
    def segmenter(self) -> SegmenterSpec:
        return SegmenterSpec(self.backend, self.hmm, self.user_words)

    def index_shape(self) -> tuple[Any, ...]:
        """What a stored index depends on: every *fingerprint* and *layout* field, and
        the picture index's ``picture_k``. Two configurations with another shape need a
        reindex between them (articles/tuning/state.py: ``needs_reindex``)."""
        return (*(getattr(self, f.name) for f in fields(self) if kind_of(f.name) != DECISION),
                self.picture_k)


def model_from_dict(data: Mapping[str, Any]) -> MatchModel | VectorModel:
    """A match model from its JSON: a model on the comparison vector (``"kind":
    "vector"``, engine v4) or weights of the rule's levels (engine v3)."""
    if data.get("kind") == VECTOR_KIND:
        return VectorModel.from_dict(data)
    return MatchModel.from_dict(data)


def kind_of(name: str) -> str:
    """The kind of the :class:`EngineConfig` field ``name``: ``fingerprint``, ``layout``
    or ``decision`` (the default)."""
    found = {f.name: f for f in fields(EngineConfig)}
    if name not in found:
        raise ValueError(f"EngineConfig has no field {name!r}")
    return str(found[name].metadata.get("kind", DECISION))
