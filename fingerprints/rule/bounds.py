"""Where the match model's levels begin and end (:class:`Bounds`).

Verification puts each comparison of a candidate pair at a level (``body: copy``,
``numbers: differ``...: :data:`fingerprints.rule.match_model.LEVELS`); these are the
lines between the levels: a share of shingles, a count, a title similarity. They are
part of the match model (:class:`~fingerprints.rule.match_model.MatchModel.bounds`),
versioned with its weights in the same JSON file, and fitted with them: the weights by
logistic regression, the bounds by cross-validation over a grid around the current
ones (:func:`fingerprints.rule.match_training.fit_bounds`, ``manage.py train_matcher
--bounds``). The defaults are the engine-v2 rule's, which the shipped model keeps
(docs/results/log.md has the runs that chose them and the fit that kept them).

docs/parameters.md lists every field with its default (scripts/parameters_doc.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Bounds:
    """The level boundaries verification reads (fingerprints/rule/verification.py)."""

    # body: copy: shingle Jaccard at least this ...
    jaccard: float = 0.6
    copy_containment: float = 0.8  # ... and containment of the smaller in the larger
    # body: contained (a cut or padded copy): the smaller side's containment in the
    # larger, when it has at least containment_min_shingles shingles
    containment: float = 0.9
    containment_min_shingles: int = 60  # shingles the smaller side needs for containment
    # body: cjk-contained: two CJK bodies (character 5-gram sketches): a partial copy
    # or a repost under other chrome keeps 60-90 % of the shorter text's 5-grams
    # (docs/results/log.md: 0.7 trades 7 false merges for 28 misses of 379 labelled pairs)
    cjk_containment: float = 0.7
    # body: cjk-partial: at least this containment when not one number and not one name
    # in context differs: a repost under chrome that is a third of the shorter text,
    # where templates and site listings show their other names and numbers
    # (docs/results/log.md, "The strict band"). 1.0 leaves the level unreached.
    cjk_strict_containment: float = 0.6
    # ... and at least this Jaccard: a text found inside a page ten times its length
    # (a statute quoted in a long complaint) is a quotation, which only the full
    # containment level can call a copy (docs/results/log.md, "The validation sample")
    cjk_strict_jaccard: float = 0.1
    # body: word-copy: two alphabetic bodies (word 5-gram sketches) at this Jaccard;
    # independent write-ups do not share 60 % of their five-word sequences
    word_jaccard: float = 0.6
    # body: word-contained: at least this containment of the smaller alphabetic body in
    # the larger (the shorter story kept word for word under a later version's new lead)
    word_containment: float = 0.7
    # body: headline-overlap: two long bodies under one headline sharing at least this
    # Jaccard (the seeds' title match confirmed by the content; docs/results/log.md,
    # "Same headline"). 1.0 leaves the level unreached.
    title_jaccard: float = 0.3
    short_shingles: int = 30  # under this many shingles on the smaller side, a short text
    short_jaccard: float = 0.9  # body: short-copy: Jaccard at least this (exact sketches)
    short_edit: float = 0.8  # body: short-edit: short bodies kept whole, edit similarity
    # title: same: title keys at least this alike (edit similarity), with no other
    # number or name
    title_only_similarity: float = 0.9
    title_only_min_chars: int = 6  # ... and both titles at least this many letters/digits
    # two bodies that share no word with their titles (Features.off_title) are compared
    # as bodies only when their titles are at least this similar; else the body
    # comparison is no-body and the titles decide
    off_title_similarity: float = 0.5
    # ... when the smaller body has fewer shingles than this (site chrome is a few
    # hundred characters; a long body under a site-name title is an article). A short
    # body (under short_shingles) is held to the same title test.
    off_title_max_shingles: int = 300
    # numbers: differ: more than this share of the number contexts both texts have
    # carry different numbers (so at least one) ...
    guard_conflicts: float = 0.2
    # ... and at least guard_part_min_conflicts when the pair's Jaccard is under this:
    # a report inside a digest several times its length, where one differing number in
    # a shared context is the digest's own (docs/results/log.md, "The number guard for
    # parts")
    guard_part_jaccard: float = 0.3
    guard_part_min_conflicts: int = 2  # the numbers comparison's count below guard_part_jaccard
    # names: differ: the same context followed by another person, place or
    # organisation name (jieba's dictionary tags) in more than this share of the
    # contexts both texts have, and at least name_guard_min_conflicts
    name_guard_conflicts: float = 0.3
    name_guard_min_conflicts: int = 2  # ... the names comparison's minimum count
    # title: other-number: titles this alike (edit similarity) with a stretch of digits
    # replaced are one frame with another number (item 3 and item 4 of a photo series)
    title_frame_similarity: float = 0.8
    # pictures: shared: a shared picture under titles at least this alike (edit
    # similarity, no other number or name); below it, shared-other-title
    picture_title_similarity: float = 0.6

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type == "float":
                if (not isinstance(value, int | float) or isinstance(value, bool)
                        or not 0.0 <= value <= 1.0):
                    raise ValueError(f"{f.name} must be between 0 and 1, not {value!r}")
            else:
                least = least_count(f.name)
                if not isinstance(value, int) or isinstance(value, bool) or value < least:
                    raise ValueError(f"{f.name} must be an integer of {least} or more, "
                                     f"not {value!r}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Bounds:
        """From :meth:`as_dict`'s form; a name it leaves out keeps its default (a model
        written before the bounds were part of it has the engine-v2 rule's)."""
        if data is None:
            return cls()
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown level bounds: {', '.join(unknown)}")
        return cls(**data)



def least_count(name: str) -> int:
    """The smallest value a count bound may take: 1 for a guard's minimum of conflicts
    (a veto needs one at least), else 0 (off)."""
    return 1 if name.endswith("min_conflicts") else 0


def share(name: str) -> bool:
    """Is this bound a share (0-1), not a count?"""
    return next(f for f in fields(Bounds) if f.name == name).type == "float"
