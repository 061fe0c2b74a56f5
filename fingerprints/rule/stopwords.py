"""Stopwords: shipped Chinese and English lists plus the admin's additions."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources


def _read_list(name: str) -> frozenset[str]:
    text = resources.files("fingerprints.rule.data").joinpath(name).read_text(encoding="utf-8")
    words = (line.strip() for line in text.splitlines())
    return frozenset(w for w in words if w and not w.startswith("#"))


@lru_cache(maxsize=1)
def default_stopwords() -> frozenset[str]:
    """The shipped lists (``fingerprints/data/stopwords_*.txt``), lower case."""
    return _read_list("stopwords_zh.txt") | _read_list("stopwords_en.txt")


def build_stopwords(extra: Iterable[str] = ()) -> frozenset[str]:
    """Shipped stopwords plus ``extra`` (normalized the way tokens are: NFKC, lower case)."""
    added = {unicodedata.normalize("NFKC", w).strip().lower() for w in extra}
    return default_stopwords() | frozenset(w for w in added if w)


def is_punctuation_or_space(token: str) -> bool:
    """True when every character is white space, punctuation or a symbol."""
    for ch in token:
        if ch.isspace():
            continue
        if unicodedata.category(ch)[0] not in "PSZC":
            return False
    return True
