"""The engine's tunables (:class:`EngineConfig`): thresholds, segmenter and verification.

Which fields change stored fingerprints (reindex after them) and which apply to the
next lookup is marked on each field. docs/parameters.md is generated from this file
(scripts/parameters_doc.py); docs/results/log.md has the runs that chose the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fingerprints.rule.blocks import MAX_K
from fingerprints.rule.match_model import MatchModel, starting_model
from fingerprints.rule.tokenize import SegmenterSpec, UserWord

# The picture index's largest pigeonhole k: every picture within this many bits is
# found; farther ones (up to picture_bits) when they share a block. A larger k reads
# far more records per lookup (k + 1 blocks of 64 / (k + 1) bits):
# docs/results/images.md, "Index reach", chose it.
PICTURE_INDEX_K = 5


@dataclass(frozen=True)
class EngineConfig:
    """Every tunable of the engine. Defaults are the measured choices (docs/results/log.md).

    Changing a field marked *fingerprint* changes stored features: reindex after it.
    """

    k: int = 3  # content Hamming threshold: the index finds *every* fingerprint within k
    title_k: int = 3  # title Hamming threshold of the title rule
    # Candidates farther than k but sharing a pigeonhole block with the query come out of
    # the same buckets at no cost; they are verified like the others when within this
    # radius (pass it as ``max_distance`` to ``BlockIndex.query``); docs/engine.md, "Candidates".
    candidate_radius: int = 8
    hmm: bool = False  # fingerprint: jieba HMM for unknown words (off: rjieba == jieba)
    # fingerprint: words weighted 0, beside the shipped stopword lists
    extra_stopwords: frozenset[str] = frozenset()
    user_words: tuple[UserWord, ...] = ()  # fingerprint: (word, freq, pos) for the segmenter
    backend: str = "rjieba"  # fingerprint: "rjieba" or "jieba" (identical tokens, HMM off)
    # --- verification of a candidate pair (decision fields: change freely) ---
    # a copy: shingle Jaccard at least this ...
    jaccard: float = 0.6
    copy_containment: float = 0.8  # ... and containment of the smaller in the larger
    # a cut or padded copy: the smaller side's containment in the larger, when it has at
    # least containment_min_shingles shingles
    containment: float = 0.9
    containment_min_shingles: int = 60  # shingles the smaller side needs for containment
    # CJK bodies (character 5-gram sketches on both sides): a partial copy or a repost
    # under other chrome keeps 60-90 % of the shorter text's 5-grams; chosen on the
    # labelled crawled news (docs/results/log.md: 0.7 trades 7 false merges for 28 misses of
    # 379 pairs; 0.6 gives 11 and 19)
    cjk_containment: float = 0.7
    # ... or at least this containment when not one number and not one name in context
    # differs (no guard tolerance): a repost under chrome that is a third of the shorter
    # text, where templates and site listings show their other names and numbers
    # (docs/results/log.md, "The strict band"). 1.0 turns the band off.
    cjk_strict_containment: float = 0.6
    # ... and at least this Jaccard: a text found inside a page ten times its length
    # (a statute quoted in a long complaint) is a quotation, which only the full
    # containment rule can call a copy (docs/results/log.md, "The validation sample")
    cjk_strict_jaccard: float = 0.1
    # alphabetic bodies (word 5-gram sketches on both sides): a Jaccard this high is a
    # copy whatever copy_containment says (it implies containment >= 2J/(1+J), 0.75 at
    # 0.6); independent write-ups do not share 60 % of their five-word sequences
    # (docs/results/log.md: cnndm and bbc band recall)
    word_jaccard: float = 0.6
    # ... or at least this containment of the smaller in the larger: the shorter story
    # kept word for word under a later version's new lead, or inside a longer piece
    # (docs/results/log.md, "The silver pairs corrected by hand": cnndm and bbc). Word
    # 5-grams are a stricter unit than character 5-grams, so the threshold is the CJK
    # rule's.
    word_containment: float = 0.7
    # two bodies of at least containment_min_shingles under one headline (title keys at
    # least title_only_similarity alike, both title_only_min_chars long): a repost under
    # other chrome or with paragraphs cut needs only this Jaccard (the seeds' cascade:
    # a title match confirmed by the content; docs/results/log.md, "Same headline"). 1.0
    # turns the rule off.
    title_jaccard: float = 0.3
    short_shingles: int = 30  # under this many shingles on the smaller side, a short text
    short_jaccard: float = 0.9  # short texts: Jaccard at least this (the sketch is exact)
    short_edit: float = 0.8  # short bodies kept whole: character edit similarity
    title_only_similarity: float = 0.9  # empty or boilerplate-only body: title similarity
    title_only_min_chars: int = 6  # ... and both titles at least this many letters/digits
    # two bodies that share no word with their titles (Features.off_title) are compared
    # as bodies only when their titles are at least this similar; else as title-only
    off_title_similarity: float = 0.5
    # ... when the smaller body has fewer shingles than this (site chrome is a few
    # hundred characters; a long body under a site-name title is an article). A short
    # body (under short_shingles) is held to the same title test.
    off_title_max_shingles: int = 300
    # the number guard: a match is vetoed when more than this share of the number
    # contexts both texts have carry different numbers (so at least one) ...
    guard_conflicts: float = 0.2
    # ... and at least this many when the pair's Jaccard is under guard_part_jaccard: a
    # report inside a digest several times its length, where one differing number in a
    # shared context is the digest's own (docs/results/log.md, "The number guard for parts")
    guard_part_jaccard: float = 0.3
    guard_part_min_conflicts: int = 2  # the number guard's count below guard_part_jaccard
    # the name guard: the same context followed by another person, place or
    # organisation name (jieba's dictionary tags), in more than this share of the
    # contexts both texts have, and at least this many
    name_guard_conflicts: float = 0.3
    name_guard_min_conflicts: int = 2  # ... the name guard's minimum count
    title_min_tokens: int = 2  # fingerprint: a title with fewer informative words has no title_fp
    # Multi-probe content lookups (see :func:`content_probes`): in each pigeonhole block
    # of the content fingerprint, the ``probe_bits`` least confident bits are flipped,
    # every non-empty subset of them: 4 * (2**probe_bits - 1) extra fingerprints at
    # k=3 (28 at the default 3). 0 turns probing off. Not fingerprint: applies to the
    # next lookup (features need their weak bits: version 2).
    probe_bits: int = 3
    # Boilerplate learned from the stream (fingerprints/rule/boilerplate.py): a clause seen
    # in this many stories (docIds) is removed from every later body before its features
    # are extracted. 0 turns learning off (clauses already learned are still removed).
    # Not fingerprint: stored features keep the boilerplate known when they were made.
    boilerplate_min_docs: int = 5
    # --- pictures (Features.pictures: 64-bit perceptual hashes; docs/engine.md) ---
    # two pictures are one when their hashes differ in at most this many bits
    # (docs/results/images.md chose it). The picture index finds every picture within
    # picture_k bits, and those within picture_bits that share one of its blocks.
    # 0: only identical hashes. A picture seen in
    # boilerplate_min_docs stories (docIds) or more is stock (a logo, a banner, a default
    # thumbnail): no evidence for or against any pair. Decision field: change freely.
    picture_bits: int = 10
    # the same-picture rule: a pair that shares a picture joins when its titles are at
    # least this alike (character edit similarity, no other number or name) although
    # the text rules refused it (a title-only photo post, a repost with rewritten text).
    # 1.0 needs identical titles. (The other-picture rule has no setting: two short or
    # empty bodies with pictures, none of them shared, stay apart.)
    picture_title_similarity: float = 0.6
    # --- the match model (fingerprints/rule/match_model.py; docs/engine.md) ---
    # a pair matches when its match probability under ``model`` is at least this, in
    # every language: raising it never adds a match, lowering it never removes one.
    # 0.5 (a match weight of 0) is where the starting model decides as the rule did.
    match_threshold: float = 0.5
    # a candidate whose doc's anchor row the caller could not supply (the star rule
    # cannot be checked: fingerprints/rule/decision.py) joins that doc only when its own
    # match probability is at least this as well: a near-certain copy, in every
    # language. Raising it never adds a match, lowering it never removes one.
    anchorless_threshold: float = 0.99
    # the weights of the comparisons' levels (data: data/match_model.json or a model
    # fitted by train_matcher). Decision field: change freely.
    model: MatchModel = field(default_factory=starting_model)

    def __post_init__(self) -> None:
        for name, top in (("k", MAX_K), ("title_k", MAX_K), ("picture_bits", 32)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= top:
                raise ValueError(f"{name} must be an integer from 0 to {top}, not {value!r}")
        if not 0 <= self.candidate_radius <= 64:
            raise ValueError(
                f"candidate_radius must be from 0 to 64, not {self.candidate_radius!r}"
            )
        for name in (
            "jaccard", "copy_containment", "containment", "cjk_containment",
            "cjk_strict_containment", "cjk_strict_jaccard", "word_jaccard", "word_containment",
            "short_jaccard", "title_jaccard", "guard_part_jaccard",
            "guard_conflicts",
            "short_edit", "title_only_similarity", "off_title_similarity", "name_guard_conflicts",
            "picture_title_similarity", "match_threshold", "anchorless_threshold",
        ):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, not {value!r}")
        shingles = self.off_title_max_shingles
        if not isinstance(shingles, int) or isinstance(shingles, bool) or shingles < 0:
            raise ValueError("off_title_max_shingles must be a count of shingles (0 or more), "
                             f"not {shingles!r}")
        least = self.guard_part_min_conflicts
        if not isinstance(least, int) or isinstance(least, bool) or least < 1:
            raise ValueError("guard_part_min_conflicts must be an integer of 1 or more, "
                             f"not {least!r}")
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
    def segmenter(self) -> SegmenterSpec:
        return SegmenterSpec(self.backend, self.hmm, self.user_words)
