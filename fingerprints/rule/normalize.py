"""Text normalization shared by every fingerprint: the same input text must give the
same normalized text on every machine (no locale, no Python ``hash()``)."""

from __future__ import annotations

import html
import re
import unicodedata
from array import array
from functools import lru_cache

from fingerprints.rule.kernel import kernel

# Script and style bodies are code, not article text: drop them with their tags.
_SCRIPT_STYLE = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
# A tag is "<" followed by a letter, "/" or "!" — so "a < b" in plain text survives.
_TAG = re.compile(r"<[a-zA-Z/!][^<>]*>")
_BLOCK_TAG = re.compile(r"<(?:br|p|/p|div|/div|li|tr|h[1-6])\b[^<>]*>", re.IGNORECASE)
# Control characters other than white space carry nothing (and NUL separates tokens
# internally): they are removed.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
# The characters that make most Chinese news text non-NFKC: full-width ASCII forms,
# the ideographic space, the ellipsis and NBSP. Mapping them first (each to its own
# NFKC form, so the result is identical) lets most articles skip the slow full NFKC.
_FAST_NFKC = {chr(cp): unicodedata.normalize("NFKC", chr(cp)) for cp in range(0xFF01, 0xFF5F)}
_FAST_NFKC.update({"\u3000": " ", "\u2026": "...", "\xa0": " "})
# One regex scan finds which of them occur, then one str.replace (a C scan) per
# character found: far faster than a callback per match or str.translate.
_MOST_COMMON = tuple((c, _FAST_NFKC[c]) for c in "，（）：；？！")
_FAST_CHARS = re.compile("[" + re.escape("".join(_FAST_NFKC)) + "]")


def strip_html(text: str) -> str:
    """Remove tags, comments, scripts and styles; unescape entities (twice, for
    double-escaped feeds such as ``&amp;nbsp;``)."""
    if "<" in text:
        text = _SCRIPT_STYLE.sub(" ", text)
        text = _COMMENT.sub(" ", text)
        text = _BLOCK_TAG.sub("\n", text)
        text = _TAG.sub(" ", text)
    if "&" in text:
        text = html.unescape(html.unescape(text))
    return text


#: Texts up to this many characters have their normalized form remembered (the last
#: 512 of them): a worker normalizes a new story's body for its features and again,
#: after the decision, to count its clauses. Longer ones (rare) are normalized again.
CACHED_CHARS = 32_768


def normalize(text: str) -> str:
    """NFKC, HTML removed, lower case, every run of white space collapsed to one space.

    NFKC folds full-width letters, digits and punctuation (``２０１５`` -> ``2015``,
    ``（`` -> ``(``), so reposts that differ only in character width normalize alike.
    """
    if len(text) <= CACHED_CHARS:
        return _normalize_recent(text)
    return _normalize(text)


def _normalize(text: str) -> str:
    if not text:
        return ""
    if kernel is not None:
        table, pool = simple_table()
        found: str | None = kernel.normalize(text, table, pool)
        if found is not None:
            return found
    return normalize_py(text)


def normalize_py(text: str) -> str:
    """:func:`normalize` in Python: the reference, and the path of texts with markup,
    entities, controls, combining marks or characters outside the BMP (the kernel's
    ``normalize`` gives the same string for the others: tested)."""
    if not text:
        return ""
    text = strip_html(text)
    for char, replacement in _MOST_COMMON:
        text = text.replace(char, replacement)
    if not unicodedata.is_normalized("NFKC", text):
        for char in set(_FAST_CHARS.findall(text)):
            text = text.replace(char, _FAST_NFKC[char])
        if not unicodedata.is_normalized("NFKC", text):
            text = unicodedata.normalize("NFKC", text)
    # str.split() splits on exactly the characters regex \s matches, several times faster
    text = " ".join(text.lower().split())
    if not text.isprintable():
        text = " ".join(_CONTROL.sub("", text).split())
    return text


_normalize_recent = lru_cache(maxsize=512)(_normalize)

_WHITE_SPACE = 0xFFFFFFFF
# Hangul vowel and trailing jamo: they compose with the jamo or syllable before them
# (algorithmically, with no decomposition listed)
_HANGUL_SECONDS = {*range(0x1161, 0x1176), *range(0x11A8, 0x11C3)}


@lru_cache(maxsize=1)
def simple_table() -> tuple[bytes, bytes]:
    """What the kernel's ``normalize`` maps each BMP character to: (65,536 uint32 of
    0 = the Python path, ``0xFFFFFFFF`` = white space, or ``start << 8 | length`` into the
    pool; the pool's uint32 code points), built once per process (~0.15 s, on the first text).

    A character is mapped alone only when NFKC and lower case of a whole text are those
    of its characters one by one: it is not markup (``<``, ``&``), a control that
    normalization removes, a combining mark, a character that composes with the one
    before it (the second of any canonical pair, the Hangul jamo), the capital sigma
    (lower case depends on the next character), nor does its NFKC form hold any of
    those; and its form is white space or has none."""
    seconds = set(_HANGUL_SECONDS)
    for cp in range(0x20000):
        parts = unicodedata.decomposition(chr(cp)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            seconds.add(int(parts[1], 16))

    def movable(ch: str) -> bool:
        return ord(ch) in seconds or unicodedata.combining(ch) != 0 or ch == "\u03a3"

    table = array("I", bytes(4 * 0x10000))
    pool = array("I")
    for cp in range(0x10000):
        ch = chr(cp)
        if 0xD800 <= cp < 0xE000 or ch in "<&" or _CONTROL.match(ch) or movable(ch):
            continue
        if ch.isspace():
            table[cp] = _WHITE_SPACE
            continue
        form = unicodedata.normalize("NFKC", ch)
        if any(movable(c) or ord(c) > 0xFFFF for c in form):
            continue
        lower = form.lower()
        if len(lower) > 255 or any(c.isspace() or _CONTROL.match(c) for c in lower):
            continue
        table[cp] = len(pool) << 8 | len(lower)
        pool.extend(map(ord, lower))
    return table.tobytes(), pool.tobytes()


def has_text(text: str) -> bool:
    """Something is left after removing markup, white space and invisible format
    characters (zero-width spaces and joiners, direction marks, BOMs)."""
    return any(not ch.isspace() and unicodedata.category(ch) != "Cf" for ch in normalize(text))
