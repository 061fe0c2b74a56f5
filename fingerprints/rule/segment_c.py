"""jieba's precise-mode segmentation (HMM off) in C: ``fingerprints/rule/_segment.c``.

The tokens are exactly those of ``jieba.Tokenizer().cut(text, HMM=False)``, which are
also rjieba's with ``hmm=False`` (the engine's default backend,
:mod:`fingerprints.rule.tokenize`); ``tests/fingerprints/rule/test_segment_c.py`` and
``bench/segment.py`` check the three agree. Beside ``cut(text) -> list[str]`` the C
segmenter has ``cut_ids(text)``: the tokens as (start, end) code-point offsets, a flat
``array('I')``, with no Python string made per token.

The engine cuts with it: :class:`fingerprints.rule.tokenize.Segmenter` uses the
shared segmenter (:func:`get`) for the default spec (backend "rjieba", HMM off, no user
words) and rjieba otherwise, or everywhere with ``DEDUP_C_SEGMENTER=0``.

The dictionary is jieba's own ``dict.txt``, read from the installed ``jieba`` package
(a runtime dependency of the project) with jieba's parsing rules; nothing is copied into
the project. Without jieba, or when the extension was not built, :func:`available` is
False and :func:`get` raises :class:`RuntimeError`.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

try:
    from fingerprints.rule._segment import Segmenter
except ImportError:  # not built
    Segmenter = None

_shared: Any = None
_lock = threading.Lock()


def dictionary_path() -> Path | None:
    """jieba's ``dict.txt`` in the installed package (found without importing jieba, whose
    import loads its HMM tables), or None when jieba is not installed."""
    spec = importlib.util.find_spec("jieba")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "dict.txt"
    return path if path.is_file() else None


def read_dictionary(path: Path) -> Iterator[tuple[str, int]]:
    """(word, freq) per line, parsed as jieba's ``gen_pfdict`` parses: the line stripped,
    split on single spaces, the first two fields; a malformed line is a ValueError."""
    with path.open("rb") as handle:
        for lineno, raw in enumerate(handle, 1):
            line = raw.strip().decode("utf-8")
            try:
                word, freq = line.split(" ")[:2]
                yield word, int(freq)
            except ValueError:
                raise ValueError(
                    f"invalid dictionary entry in {path} at line {lineno}: {line}"
                ) from None


def available() -> bool:
    """Whether the extension is built and jieba's dictionary is installed."""
    return Segmenter is not None and dictionary_path() is not None


def new() -> Any:
    """A fresh segmenter over jieba's dictionary (add_word on it changes only it)."""
    path = dictionary_path()
    if Segmenter is None or path is None:
        raise RuntimeError(
            "the C segmenter needs the built extension (pip install -e .) and jieba's "
            "dictionary (pip install jieba)"
        )
    return Segmenter(read_dictionary(path))


def get() -> Any:
    """The shared segmenter over jieba's dictionary, loaded once per process. Do not
    add_word on it: make your own with :func:`new`."""
    global _shared
    if _shared is None:
        with _lock:
            if _shared is None:
                _shared = new()
    return _shared


def cut(text: str) -> list[str]:
    """jieba's ``cut(text, HMM=False)`` tokens with the shared segmenter."""
    tokens: list[str] = get().cut(text)
    return tokens


__all__ = ["available", "cut", "dictionary_path", "get", "new", "read_dictionary"]
