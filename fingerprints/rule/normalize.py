"""Text normalization shared by every fingerprint: the same input text must give the
same normalized text on every machine (no locale, no Python ``hash()``)."""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache

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


def has_text(text: str) -> bool:
    """Something is left after removing markup, white space and invisible format
    characters (zero-width spaces and joiners, direction marks, BOMs)."""
    return any(not ch.isspace() and unicodedata.category(ch) != "Cf" for ch in normalize(text))
