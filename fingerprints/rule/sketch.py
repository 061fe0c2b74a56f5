"""Compact shingle sketches for verifying SimHash candidates.

A sketch is a hash-threshold sample of an article's character shingles: every
shingle whose 32-bit hash has its top ``level`` bits clear is kept. ``level`` is the
smallest that keeps at most :data:`MAX_SAMPLES` distinct shingles, so short texts keep
*all* their shingles (exact comparison) and a typical 700-character news article keeps
~160 (about 650 bytes). Two sketches are compared at the larger of their two levels;
below that threshold both samples are complete, so the shared fraction is an unbiased
estimate of Jaccard similarity and of containment (unlike MinHash, whose containment
must be derived from Jaccard and the set sizes).

Shingles are the reference measures of the corpora: 5 consecutive characters
(punctuation, symbols and white space removed) when the text is mostly CJK, 5
consecutive words when it is alphabetic. Shorter shingles make different write-ups of
one event look alike (English rewrites share many two-word phrases).
"""

from __future__ import annotations

import re
import struct
import unicodedata
from dataclasses import dataclass
from typing import Any

import mmh3
import numpy as np
import numpy.typing as npt

from fingerprints.rule.ids import splitmix64_finalize
from fingerprints.rule.kernel import kernel
from fingerprints.rule.simhash import _run_starts

MAX_SAMPLES = 192
CJK_SHINGLE = 5  # characters
WORD_SHINGLE = 5  # words
_WORD = re.compile(r"[^\W_]+")
_SEED = np.uint64(0x9E3779B97F4A7C15)
_MUL = np.uint64(0x100000001B3)


def _build_keep_table() -> npt.NDArray[np.bool_]:
    table = np.zeros(0x10000, dtype=np.bool_)
    for cp in range(0x10000):
        table[cp] = unicodedata.category(chr(cp))[0] in "LN"
    return table


_KEEP = _build_keep_table()


def _is_cjk(cps: npt.NDArray[np.uint32]) -> npt.NDArray[np.bool_]:
    return ((cps >= 0x3400) & (cps <= 0x9FFF)) | ((cps >= 0x20000) & (cps <= 0x3FFFF))


def kept_codepoints(text: str) -> npt.NDArray[np.uint32]:
    """Code points of letters and digits (the characters shingles are built from)."""
    cps = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")
    if len(cps) == 0:
        return cps
    keep = np.ones(len(cps), dtype=np.bool_)
    bmp = cps < 0x10000
    keep[bmp] = _KEEP[cps[bmp]]
    return cps[keep]


_word_ids: dict[str, int] = {}


def _word_units(text: str) -> npt.NDArray[np.uint32]:
    """One 32-bit unit per word (a stable id from mmh3, memoized)."""
    get = _word_ids.get
    units = []
    for word in _WORD.findall(text):
        unit = get(word)
        if unit is None:
            if len(_word_ids) > 1_000_000:
                _word_ids.clear()
            unit = _word_ids[word] = mmh3.hash(word, seed=0x51E7C4, signed=False)
        units.append(unit)
    return np.array(units, dtype=np.uint32)


def char_shingled(text: str) -> bool:
    """Does the sketch of this normalized text use character shingles (mostly CJK)?"""
    cps = kept_codepoints(text)
    return len(cps) > 0 and bool(_is_cjk(cps).mean() >= 0.3)


def shingle_hashes(text: str) -> npt.NDArray[np.uint32]:
    """Distinct 32-bit hashes of the normalized text's shingles (sorted)."""
    cps = kept_codepoints(text)
    if len(cps) == 0:
        return np.zeros(0, dtype=np.uint32)
    if _is_cjk(cps).mean() >= 0.3:
        return _shingles(cps, CJK_SHINGLE)
    return _shingles(_word_units(text), WORD_SHINGLE)


def _shingles(cps: npt.NDArray[np.uint32], width: int) -> npt.NDArray[np.uint32]:
    n = len(cps)
    if n == 0:
        return np.zeros(0, dtype=np.uint32)
    if n < width:
        width = n  # a text shorter than one shingle is one shingle
    h = _window_hashes(cps.astype(np.uint64), width, n - width + 1)
    return _sorted_unique((h >> np.uint64(32)).astype(np.uint32))


def _window_hashes(x: npt.NDArray[np.uint64], width: int, m: int) -> npt.NDArray[np.uint64]:
    """64-bit hashes of the ``m`` windows of ``width`` code points of ``x``."""
    with np.errstate(over="ignore"):
        h = np.full(m, _SEED, dtype=np.uint64)
        for j in range(width):
            h = (h ^ x[j : j + m]) * _MUL
    # the finalizer spreads the FNV-style state over all bits
    return splitmix64_finalize(h)


@dataclass(frozen=True)
class Sketch:
    level: int  # samples are the shingle hashes with their top `level` bits clear
    shingles: int  # number of distinct shingles in the full text
    samples: bytes  # sorted little-endian uint32

    @classmethod
    def from_hashes(cls, hashes: npt.NDArray[np.uint32]) -> Sketch:
        n = len(hashes)
        level = 0
        while (n >> level) > MAX_SAMPLES:
            level += 1
        # For level L the cut is top L bits clear, i.e. hash < 2**(32-L).
        sample = hashes if level == 0 else hashes[hashes < np.uint32(1 << (32 - level))]
        return cls(level, n, np.ascontiguousarray(sample, dtype="<u4").tobytes())

    @classmethod
    def from_text(cls, normalized_text: str) -> Sketch:
        return cls.from_hashes(shingle_hashes(normalized_text))

    def values(self) -> npt.NDArray[np.uint32]:
        return np.frombuffer(self.samples, dtype="<u4")

    def to_bytes(self) -> bytes:
        return struct.pack("<BIH", self.level, self.shingles, len(self.samples) // 4) + self.samples

    @classmethod
    def from_bytes(cls, data: bytes, offset: int = 0) -> tuple[Sketch, int]:
        level, shingles, count = struct.unpack_from("<BIH", data, offset)
        start = offset + 7
        end = start + 4 * count
        return cls(level, shingles, bytes(data[start:end])), end


@dataclass(frozen=True)
class Overlap:
    jaccard: float  # |A∩B| / |A∪B|
    containment: float  # |A∩B| / min(|A|, |B|): how much of the smaller is in the larger
    shared: int  # sampled shingles in common
    compared: int  # sampled shingles of the smaller side at the common level


def compare(a: Sketch, b: Sketch) -> Overlap:
    """Estimate Jaccard and containment of two texts' shingle sets: through the C
    kernel when it is built (a merge of the two sorted samples, no arrays; identical
    results: tested), else :func:`compare_py`."""
    return _overlap(*overlap_counts(a, b))


def compare_py(a: Sketch, b: Sketch) -> Overlap:
    """:func:`compare` with NumPy (the reference; any samples, sorted or not)."""
    return _overlap(*_overlap_counts_py(a, b))


def overlap_counts(a: Sketch, b: Sketch) -> tuple[int, int, int]:
    """(sampled shingles in common, samples of ``a``, samples of ``b``), both sides at
    the larger of their two levels: what :func:`compare` estimates from, and what the
    comparison vector reads the containment of the larger side from."""
    if kernel is not None:
        counts = kernel.overlap(a.samples, a.level, b.samples, b.level)
        if counts is not None:
            shared, na, nb = counts
            return int(shared), int(na), int(nb)
    return _overlap_counts_py(a, b)


def _overlap_counts_py(a: Sketch, b: Sketch) -> tuple[int, int, int]:
    level = max(a.level, b.level)
    va, vb = a.values(), b.values()
    if level:
        cut = np.uint32(1 << (32 - level))
        if a.level < level:
            va = va[va < cut]
        if b.level < level:
            vb = vb[vb < cut]
    na, nb = len(va), len(vb)
    if na == 0 or nb == 0:
        return 0, na, nb
    return len(np.intersect1d(va, vb, assume_unique=True)), na, nb


def _overlap(shared: int, na: int, nb: int) -> Overlap:
    if na == 0 or nb == 0:
        return Overlap(0.0, 0.0, 0, min(na, nb))
    return Overlap(shared / (na + nb - shared), shared / min(na, nb), shared, min(na, nb))


def _sorted_unique(values: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    # np.unique's hash-table path is ~100x slower than sorting here (NumPy 2.4)
    values = np.sort(values)
    return values[_run_starts(values)] if len(values) else values


def _levels(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Per text, the smallest level L with ``count >> L <= MAX_SAMPLES``."""
    levels = np.zeros(len(counts), dtype=np.int64)
    while True:
        over = (counts >> levels) > MAX_SAMPLES
        if not over.any():
            return levels
        levels += over


def sketch_one(text: str) -> Sketch:
    """The sketch of one normalized text: through the C kernel when it is built (the
    bytes :func:`sketch_many` gives, character or word shingles), else
    :meth:`Sketch.from_text`."""
    return sketch_and_kind(text)[0]


_instance: Any = kernel.instance if kernel is not None else None
_SKETCH_FIELDS = ("level", "shingles", "samples")


def sketch_and_kind(text: str) -> tuple[Sketch, bool]:
    """(:func:`sketch_one`, :func:`char_shingled`) of one normalized text, in one pass
    over it when the C kernel is built."""
    if kernel is not None:
        found = kernel.sketch(text, _KEEP)
        if found is not None:
            level, shingles, samples, kind = found
            # Sketch(level, shingles, samples), set from C (kernel.instance: not through
            # the frozen dataclass's three object.__setattr__ calls): the same instance
            made: Sketch = _instance(Sketch, _SKETCH_FIELDS, level, shingles, samples)
            return made, kind
    return Sketch.from_text(text), char_shingled(text)


def sketch_many(texts: list[str]) -> list[Sketch]:
    """``Sketch.from_text`` for many normalized texts, vectorized for CJK texts
    (identical results)."""
    n = len(texts)
    if n <= 2:  # the vectorized path only pays off over several texts
        return [Sketch.from_text(text) for text in texts]
    cps = np.frombuffer("".join(texts).encode("utf-32-le"), dtype="<u4")
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    doc = np.repeat(np.arange(n, dtype=np.int64), lengths)
    keep = np.ones(len(cps), dtype=np.bool_)
    bmp = cps < 0x10000
    keep[bmp] = _KEEP[cps[bmp]]
    cps, doc = cps[keep], doc[keep]
    kept = np.bincount(doc, minlength=n)
    cjk = np.bincount(doc, weights=_is_cjk(cps), minlength=n)
    char_docs = (kept >= CJK_SHINGLE) & (cjk >= 0.3 * kept)
    out: list[Sketch | None] = [None] * n
    m = len(cps) - CJK_SHINGLE + 1
    if char_docs.any() and m > 0:
        h = _window_hashes(cps.astype(np.uint64), CJK_SHINGLE, m)
        start_doc = doc[:m]
        valid = (start_doc == doc[CJK_SHINGLE - 1 :]) & char_docs[start_doc]
        keys = start_doc[valid].astype(np.uint64) << np.uint64(32) | (h[valid] >> np.uint64(32))
        keys = np.sort(keys)
        keys = keys[_run_starts(keys)]
        key_doc = (keys >> np.uint64(32)).astype(np.int64)
        values = (keys & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        counts = np.bincount(key_doc, minlength=n)
        levels = _levels(counts)
        cut = (np.uint64(1) << (np.uint64(32) - levels[key_doc].astype(np.uint64)))
        sampled = values.astype(np.uint64) < cut
        values, key_doc = values[sampled], key_doc[sampled]
        bounds = np.searchsorted(key_doc, np.arange(n + 1))
        data = np.ascontiguousarray(values, dtype="<u4").tobytes()
        for d in np.flatnonzero(char_docs).tolist():
            out[d] = Sketch(int(levels[d]), int(counts[d]), data[4 * bounds[d] : 4 * bounds[d + 1]])
    return [s if s is not None else Sketch.from_text(t) for s, t in zip(out, texts, strict=True)]
