"""Pictures as evidence in the match decision (docs/engine.md, "Pictures").

An article's pictures are 64-bit perceptual hashes (``Features.pictures``,
articles/images/). Two pictures are *one picture* when their hashes differ in at most
``picture_bits`` bits. Pictures arrive after the text (a job fetches them): an article
is decided on its text first and decided again when they are read.

*Stock pictures* — a logo, a site banner, a default thumbnail — appear under many
unrelated stories. A picture hash already seen in ``boilerplate_min_docs`` other
stories (docIds) is stock: the caller removes it from both sides of every comparison
(:func:`without_stock`) before the decision, so it is evidence neither for nor
against. Online the count is read from MySQL at the decision; the batch engines keep
the same count as they replay (:class:`PictureStories`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from fingerprints.rule.features import Features


def nearest_picture(a: Features, b: Features, bits: int) -> int | None:
    """The smallest Hamming distance between a picture of ``a`` and one of ``b`` when it
    is at most ``bits`` (they share a picture), else None."""
    if not a.pictures or not b.pictures:
        return None
    best = min((x ^ y).bit_count() for x in a.pictures for y in b.pictures)
    return best if best <= bits else None


def without_stock(features: Features, stock: frozenset[int] | set[int]) -> Features:
    """``features`` without the stock picture hashes among its pictures."""
    if not stock or not features.pictures or stock.isdisjoint(features.pictures):
        return features
    return replace(features, pictures=tuple(p for p in features.pictures if p not in stock))


def stock_among(hashes: Iterable[int], stories: Mapping[int, int], min_docs: int
                ) -> frozenset[int]:
    """The hashes whose count of stories (``stories``: hash -> docIds it was seen in, the
    article being decided not counted) reaches ``min_docs``; 0 turns stock off."""
    if not min_docs:
        return frozenset()
    return frozenset(h for h in hashes if stories.get(h, 0) >= min_docs)


class PictureStories:
    """In memory (the batch engines): for each picture hash, the docs it was seen in."""

    def __init__(self) -> None:
        self._docs: dict[int, set[str]] = {}

    def counts(self, hashes: Iterable[int]) -> dict[int, int]:
        return {h: len(self._docs[h]) for h in hashes if h in self._docs}

    def add(self, hashes: Iterable[int], doc_key: str) -> None:
        for h in hashes:
            self._docs.setdefault(h, set()).add(doc_key)
