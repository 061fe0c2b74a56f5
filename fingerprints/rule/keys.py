"""Exact-match keys: a second candidate generator for what SimHash cannot reach.

A repost under another site's header, with an ad block or a cut paragraph, keeps
most of its sentences *verbatim* while its SimHash moves 9-16 bits (out of the block
index's reach). A short text (the seed paper's two 30-character lines) has a SimHash
of a few words, which is noise. Both share exact pieces of text with their original:

* **long bodies**: the clauses (fingerprints/rule/boilerplate.py, boilerplate removed) of
  at least :data:`MIN_KEY_CLAUSE` letters and digits, hashed to 32 bits; the
  :data:`QUERY_KEYS` smallest hashes are the article's keys (a consistent sample:
  a clause that is among the smallest of the original is among the smallest of a
  repost that kept it, unless the repost is many times longer);
* **short bodies** (kept whole in ``Features.short_text``): also a hash of their first
  and of their last :data:`EDGE` characters — an edit in the middle keeps one of them.

The :data:`STORED_KEYS` smallest keys of each article are indexed; a new article
looks up all of its keys. A hit is only a candidate: ``decide`` verifies it exactly
like a SimHash hit. The index itself is :mod:`fingerprints.stores.key_index`.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence

import mmh3
import numpy as np

from fingerprints.rule.features import MAX_KEY_CHARS

MIN_KEY_CLAUSE = 10  # letters and digits
QUERY_KEYS = 16
STORED_KEYS = 4
EDGE = 8  # characters of a short body's head and tail
EDGE_SEED = 0x5E06E
_EDGE_SEED = EDGE_SEED
_NOT_WORD = re.compile(r"[\W_]+")


def body_keys(short_text: str, hashed: tuple[Sequence[str], Sequence[int]]) -> bytes:
    """The keys of a normalized body (boilerplate already removed), as sorted uint32
    little-endian bytes: the smallest :data:`QUERY_KEYS` of its clause keys and, for a
    short body (``short_text``), of its head and tail keys. ``hashed``: the body's
    clauses and their hashes (:func:`fingerprints.rule.boilerplate.split_clauses`; this
    module does not import that one, which imports this)."""
    found = {h >> 32 for key, h in zip(*hashed, strict=True) if len(key) >= MIN_KEY_CLAUSE}
    if short_text and len(short_text) >= EDGE:
        # a short body also has its edges: an edit inside its one long clause keeps one;
        # and its clauses, shared with a longer repost (a byline added in front)
        found |= {mmh3.hash("^" + short_text[:EDGE], seed=_EDGE_SEED, signed=False),
                  mmh3.hash(short_text[-EDGE:] + "$", seed=_EDGE_SEED, signed=False)}
    if not found:
        return b""
    return np.array(sorted(found)[:QUERY_KEYS], dtype="<u4").tobytes()


def short_key(body: str, clauses: Sequence[str] | None = None) -> str:
    """The letters and digits of a body short enough to keep whole (at most
    :data:`~fingerprints.rule.features.MAX_KEY_CHARS` of them), else ``""``. The body's
    ``clauses`` (:func:`fingerprints.rule.boilerplate.clauses`), when given, are its
    letters and digits already: joined, they are the key, with no pass over the text
    (unless the body has a backslash: a literal ``\\n`` breaks clauses but its ``n``
    is a letter of the key)."""
    if clauses is not None and "\\" not in body:
        if sum(map(len, clauses)) > MAX_KEY_CHARS:
            return ""
        return "".join(clauses)
    key = _NOT_WORD.sub("", body) if body else ""
    return key if len(key) <= MAX_KEY_CHARS else ""


def query_keys(keys: bytes) -> list[int]:
    """Every key of an article (what it looks up)."""
    return list(_uint32s(len(keys) // 4).unpack(keys))


def stored_keys(keys: bytes) -> list[int]:
    """The keys an article is indexed under (its smallest)."""
    return list(_uint32s(min(len(keys) // 4, STORED_KEYS)).unpack_from(keys))


# little-endian uint32 arrays of each length an article's keys have, compiled once: a
# decision unpacks the keys of every candidate it weighs
_UINT32S = tuple(struct.Struct(f"<{count}I") for count in range(QUERY_KEYS + 1))


def _uint32s(count: int) -> struct.Struct:
    return _UINT32S[count] if count <= QUERY_KEYS else struct.Struct(f"<{count}I")
