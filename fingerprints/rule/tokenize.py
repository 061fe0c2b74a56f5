"""Word segmentation, pinned: jieba's precise mode, computed by the C segmenter or rjieba.

With ``hmm=False`` rjieba (a Rust port of jieba) returns exactly jieba's precise-mode
tokens (the test ``tests/fingerprints/rule/test_tokenize.py`` checks this on real articles)
about 20 times faster, so "rjieba" is the default backend. For that default with no
user words, the segmenter cuts with the C segmenter (:mod:`fingerprints.rule.segment_c`),
which gives the same tokens (0 mismatched documents on the five corpora,
docs/results/segment.md) 1.4-2x faster; rjieba cuts when the extension is not built,
when jieba's dictionary is not installed, with the HMM on, with user words (the two
differ on a user word without a frequency), and everywhere with ``DEDUP_C_SEGMENTER=0``.
The features are the same bytes either way (``tests/fingerprints/rule/test_tokenize_segmenter.py``).

Fingerprints depend on the segmenter, its dictionary and its HMM flag: the three are
part of :class:`SegmenterSpec` and must be the same wherever fingerprints are compared
(web workers, batch jobs, Spark).
"""

from __future__ import annotations

import os
import threading
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fingerprints.rule import segment_c

#: (word, frequency or None, part-of-speech tag or None), as jieba's ``add_word``.
UserWord = tuple[str, int | None, str | None]


@dataclass(frozen=True)
class SegmenterSpec:
    backend: str = "rjieba"  # "rjieba" or "jieba"
    hmm: bool = False
    user_words: tuple[UserWord, ...] = ()

    def __post_init__(self) -> None:
        if self.backend not in ("rjieba", "jieba"):
            raise ValueError(f"backend must be 'rjieba' or 'jieba', not {self.backend!r}")


def c_segmenter_enabled() -> bool:
    """False when ``DEDUP_C_SEGMENTER`` is 0 (or false, no, off): rjieba then cuts for
    the default backend too (a baseline for benchmarks, a way out if the C segmenter
    ever misbehaves). Read when a :class:`Segmenter` is made."""
    value = os.environ.get("DEDUP_C_SEGMENTER", "1").strip().lower()
    return value not in ("0", "false", "no", "off")


class Segmenter:
    """One tokenizer instance with its own dictionary (user words do not leak into
    other configurations).

    ``use_c`` (default: :func:`c_segmenter_enabled`) lets the default backend cut with
    the C segmenter when the spec is one whose tokens it is proven to share with rjieba:
    backend "rjieba", HMM off, no user words. :attr:`uses_c` says whether it does."""

    def __init__(self, spec: SegmenterSpec = SegmenterSpec(), *, use_c: bool | None = None) -> None:
        self.spec = spec
        if use_c is None:
            use_c = c_segmenter_enabled()
        self.uses_c = (
            use_c and spec.backend == "rjieba" and not spec.hmm and not spec.user_words
            and segment_c.available()
        )
        self._impl: Any
        if self.uses_c:
            # shared by every such Segmenter: nothing adds words to it
            self._impl = segment_c.get()
        elif spec.backend == "rjieba":
            import rjieba

            self._impl = rjieba.Jieba()
        else:
            import jieba

            self._impl = jieba.Tokenizer()
            self._impl.initialize()
        for word, freq, tag in spec.user_words:
            self._impl.add_word(word, freq, tag)

    def cut(self, text: str) -> list[str]:
        """Precise-mode tokens, white space and punctuation included (callers filter)."""
        if self.uses_c:
            c_tokens: list[str] = self._impl.cut(text)
            return c_tokens
        if self.spec.backend == "rjieba":
            tokens: list[str] = self._impl.cut(text, self.spec.hmm)
            return tokens
        return list(self._impl.cut(text, HMM=self.spec.hmm))

    def cut_ids(self, text: str) -> array[int]:
        """The tokens of :meth:`cut` as flat (start, end) code-point offsets, with no str
        per token: the C segmenter only (:attr:`uses_c`)."""
        if not self.uses_c:
            raise RuntimeError("cut_ids needs the C segmenter (Segmenter.uses_c)")
        spans: array[int] = self._impl.cut_ids(text)
        return spans

    def cut_nodes(self, text: str) -> tuple[array[int], array[int]]:
        """:meth:`cut_ids`, and each token's node in the segmenter's trie (0 for none):
        the same token, the same node, in this process. The C segmenter only."""
        if not self.uses_c:
            raise RuntimeError("cut_nodes needs the C segmenter (Segmenter.uses_c)")
        found: tuple[array[int], array[int]] = self._impl.cut_nodes(text)
        return found

    @property
    def trie(self) -> Any:
        """The C segmenter this one cuts with (:attr:`uses_c`): what its trie nodes
        (:meth:`cut_nodes`) are nodes of."""
        if not self.uses_c:
            raise RuntimeError("only the C segmenter has trie nodes")
        return self._impl


_cache: dict[SegmenterSpec, Segmenter] = {}
_lock = threading.Lock()


def get_segmenter(spec: SegmenterSpec = SegmenterSpec()) -> Segmenter:
    """A shared segmenter per spec (dictionary loading takes ~0.3 s, C or rjieba)."""
    seg = _cache.get(spec)
    if seg is None:
        with _lock:
            seg = _cache.get(spec)
            if seg is None:
                seg = Segmenter(spec)
                _cache[spec] = seg
    return seg


def segment(text: str, *, hmm: bool = False, user_words: Sequence[UserWord] = ()) -> list[str]:
    """Tokens of ``text`` with the default backend (C segmenter or rjieba)."""
    return get_segmenter(SegmenterSpec(hmm=hmm, user_words=tuple(user_words))).cut(text)
