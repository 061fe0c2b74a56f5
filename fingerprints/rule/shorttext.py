"""Character-level comparison for texts too short for shingles: short bodies and the
titles of title-only articles.

A short bulletin and its repost differ by a word or two; a short bulletin repeated
for another day, number or place differs by a word or two as well. Edit similarity
cannot tell them apart; *what* was replaced can: :func:`compare_short` accepts a pair
when the texts are similar enough (``difflib``'s ratio, 2 x matched characters /
total) and no replaced stretch touches a number or a proper name (a word jieba's
dictionary tags as a person, place or organisation name: ``nr``, ``ns``, ``nt``,
``nrt``, ``nrfg``). Inserted or deleted words (``这是一段相似的测试文本``) are edits;
``北京`` -> ``上海`` or ``30`` -> ``31`` is another bulletin.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from importlib import resources
from operator import itemgetter

from fingerprints.rule.kernel import kernel

NAME_TAGS = frozenset({"nr", "ns", "nt", "nrt", "nrfg"})


@lru_cache(maxsize=1)
def dictionary() -> tuple[tuple[str, ...], frozenset[str]]:
    """jieba's dictionary (``jieba/dict.txt``, pinned with jieba): its words, in file
    order, and those it tags as names."""
    text = resources.files("jieba").joinpath("dict.txt").read_text(encoding="utf-8")
    words: list[str] = []
    names = set()
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        words.append(parts[0])
        if len(parts) == 3 and parts[2] in NAME_TAGS:
            names.add(parts[0])
    return tuple(words), frozenset(names)


def name_words() -> frozenset[str]:
    """Words jieba's dictionary tags as names."""
    return dictionary()[1]


# Names by kind (features version 7): the tag jieba's dictionary carries for a word
# (``nr``, ``nrt``, ``nrfg`` a person, ``ns`` a place, ``nt`` an organisation, ``nz``
# another proper noun), not posseg, whose re-segmentation differs from the pinned
# precise mode. KIND_OTHER also holds the names outside the dictionary
# (vocabulary.RUN: a run the segmenter leaves as single characters).
KIND_PERSON: int = 0
KIND_PLACE: int = 1
KIND_ORGANISATION: int = 2
KIND_OTHER: int = 3
KIND_NAMES = ("person", "place", "organisation", "other")
KIND_OF_TAG = {"nr": KIND_PERSON, "nrt": KIND_PERSON, "nrfg": KIND_PERSON,
               "ns": KIND_PLACE, "nt": KIND_ORGANISATION, "nz": KIND_OTHER}
# A name's rarity: floor(log2(total / frequency)) of jieba's dictionary counts less
# RARITY_BASE, in 1-15 (integers: every path computes the same bytes): 中国 and 北京 1,
# 上海 2, 公安局 7, a name seen a few times 14-15; a name outside the dictionary 15.
RARITY_BASE = 9
MAX_RARITY = 15


@lru_cache(maxsize=1)
def name_kinds() -> dict[str, tuple[int, int]]:
    """Each word jieba's dictionary tags as a name of a kind (:data:`KIND_OF_TAG`) ->
    (kind, rarity)."""
    text = resources.files("jieba").joinpath("dict.txt").read_text(encoding="utf-8")
    total = 0
    tagged: list[tuple[str, int, int]] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        total += int(parts[1])
        if len(parts) == 3 and parts[2] in KIND_OF_TAG:
            tagged.append((parts[0], max(1, int(parts[1])), KIND_OF_TAG[parts[2]]))
    return {word: (kind, rarity_of(total, frequency)) for word, frequency, kind in tagged}


def rarity_of(total: int, frequency: int) -> int:
    """floor(log2(total / frequency)) - RARITY_BASE in 1..MAX_RARITY, in integers."""
    bits = (total // max(1, frequency)).bit_length() - 1
    return min(MAX_RARITY, max(1, bits - RARITY_BASE))


@dataclass(frozen=True)
class ShortComparison:
    similarity: float  # 2 x matched characters / total characters
    conflict: str  # "" or what was replaced: "number" or "name"
    # a replaced stretch itself holds a digit on either side (the conflict's "number"
    # also looks one character beyond the stretch): "(1)" against "(4)", not "常熟3"
    # against "本市3"
    number_replaced: bool = False


Block = tuple[int, int, int]  # (i, j, size): a[i:i + size] == b[j:j + size]
_SIZE = itemgetter(2)  # a block's size


def matching_blocks(a: str, b: str) -> list[Block]:
    """``difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()``
    (its sentinel last): the kernel's when it is built (the same blocks, without
    difflib's dictionaries), else difflib's."""
    if kernel is not None:
        found: list[Block] = kernel.matching_blocks(a, b)
        return found
    return [tuple(block) for block in  # type: ignore[misc]
            SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()]


def ratio(a: str, b: str, blocks: list[Block]) -> float:
    """difflib's ratio: 2 x matched characters / total characters."""
    total = len(a) + len(b)
    return 2.0 * sum(map(_SIZE, blocks)) / total if total else 1.0


def replaced(blocks: list[Block]) -> list[tuple[int, int, int, int]]:
    """The (i1, i2, j1, j2) of difflib's ``replace`` opcodes of ``blocks``: where
    both sides have something between two matching blocks."""
    out = []
    i = j = 0
    for ai, bj, size in blocks:
        if i < ai and j < bj:
            out.append((i, ai, j, bj))
        i, j = ai + size, bj + size
    return out


def compare_short(a: str, b: str) -> ShortComparison:
    """Edit similarity of two keys (letters and digits) and whether a replaced
    stretch holds a number or a name."""
    return ShortComparison(*short_measures(a, b))


def short_measures(a: str, b: str) -> tuple[float, str, bool]:
    """:class:`ShortComparison`'s fields of two keys: the kernel's (one call, the same
    figures) when it is built, else :func:`compare_short_py`'s."""
    if not a or not b:
        return 0.0, "", False
    if kernel is not None:
        found: tuple[float, str, bool] = kernel.compare_short(a, b, name_words())
        return found
    short = compare_short_py(a, b)
    return short.similarity, short.conflict, short.number_replaced


def compare_short_py(a: str, b: str) -> ShortComparison:
    """:func:`compare_short` in Python: the reference the kernel's is tested against."""
    if not a or not b:
        return ShortComparison(0.0, "")
    blocks = matching_blocks(a, b)
    similarity = ratio(a, b, blocks)
    replaced_ = replaced(blocks)
    number = any(ch.isdigit() for i1, i2, j1, j2 in replaced_ for ch in a[i1:i2] + b[j1:j2])
    for i1, i2, j1, j2 in replaced_:
        for text, lo, hi in ((a, i1, i2), (b, j1, j2)):
            kind = _conflict(text, lo, hi)
            if kind:
                return ShortComparison(similarity, kind, number)
    return ShortComparison(similarity, "", number)


def _conflict(text: str, lo: int, hi: int) -> str:
    """"number" or "name" when text[lo:hi], widened to the words around it, holds one."""
    if any(ch.isdigit() for ch in text[max(0, lo - 1) : hi + 1]):
        return "number"
    names = name_words()
    # every dictionary word of up to 4 characters that overlaps the replaced stretch
    for start in range(max(0, lo - 3), hi):
        for end in range(max(start + 1, lo + 1), min(len(text), start + 4) + 1):
            if text[start:end] in names:
                return "name"
    return ""
