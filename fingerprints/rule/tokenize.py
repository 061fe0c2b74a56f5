"""Word segmentation, pinned: rjieba (a Rust port of jieba) in precise mode.

With ``hmm=False`` rjieba returns exactly jieba's precise-mode tokens (the test
``tests/fingerprints/test_tokenize.py`` checks this on real articles) about 20 times
faster, so it is the default backend. Fingerprints depend on the segmenter, its
dictionary and its HMM flag: the three are part of :class:`SegmenterSpec` and must be
the same wherever fingerprints are compared (web workers, batch jobs, Spark).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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


class Segmenter:
    """One tokenizer instance with its own dictionary (user words do not leak into
    other configurations)."""

    def __init__(self, spec: SegmenterSpec = SegmenterSpec()) -> None:
        self.spec = spec
        self._impl: Any
        if spec.backend == "rjieba":
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
        if self.spec.backend == "rjieba":
            tokens: list[str] = self._impl.cut(text, self.spec.hmm)
            return tokens
        return list(self._impl.cut(text, HMM=self.spec.hmm))


_cache: dict[SegmenterSpec, Segmenter] = {}
_lock = threading.Lock()


def get_segmenter(spec: SegmenterSpec = SegmenterSpec()) -> Segmenter:
    """A shared segmenter per spec (dictionary loading takes ~0.3 s for rjieba)."""
    seg = _cache.get(spec)
    if seg is None:
        with _lock:
            seg = _cache.get(spec)
            if seg is None:
                seg = Segmenter(spec)
                _cache[spec] = seg
    return seg


def segment(text: str, *, hmm: bool = False, user_words: Sequence[UserWord] = ()) -> list[str]:
    """Tokens of ``text`` with the default (rjieba) backend."""
    return get_segmenter(SegmenterSpec(hmm=hmm, user_words=tuple(user_words))).cut(text)
