"""The vocabulary the fingerprints are made of: each token's 64-bit feature hash and its
integer weight (jieba's IDF x :data:`WEIGHT_SCALE`; 0 for stopwords, punctuation and white
space), and its hash "in context" for the template guards (numbers and dictionary names).

A token is found by a vectorized 64-bit key in an open-addressing hash table held in NumPy
arrays (:class:`Vocabulary`); the C kernel reads the same tables (``kernel_tables``).
One vocabulary per stopword set and process (:func:`vocabulary_for`), built once.
"""

from __future__ import annotations

import gc
import math
import re
import threading
from array import array
from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from importlib import resources
from itertools import chain
from typing import Any, cast

import mmh3
import numpy as np
import numpy.typing as npt

from fingerprints.rule.ids import splitmix64_finalize
from fingerprints.rule.kernel import kernel
from fingerprints.rule.shorttext import KIND_OTHER, MAX_RARITY, dictionary, name_kinds, name_words
from fingerprints.rule.simhash import FEATURE_SEED, _append, _prepend
from fingerprints.rule.stopwords import build_stopwords, is_punctuation_or_space

MAX_NUMBERS = 48
NAME_FLAG = 0x8000  # numbers in context: the top bit of the value's hash marks a name
NUMBER_MASK = 0x7FFF
# the kernel's fingerprint: (fingerprint, informative count, numbers, number count, weak
# bits, names, name count)
Fingerprinted = tuple[int, int, bytes, int, bytes, bytes, int]
# RECORD's ``number`` flags: IN_CONTEXT a number or a name in the numbers in context
# (the template guards'); NAMED a name by kind (features version 7: name_info holds its
# rarity and kind); RUN a single CJK character that is not a stopword (a run of 2-4 of
# them is a name outside the dictionary, KIND_OTHER)
IN_CONTEXT, NAMED, RUN = 1, 2, 4
MAX_NAMES = 32  # names in context kept per article (the smallest values)
RUN_INFO = MAX_RARITY | KIND_OTHER << 4  # a name outside the dictionary: other, rarest

@lru_cache(maxsize=1)
def idf_table() -> tuple[dict[str, float], float]:
    """jieba's IDF table (``jieba/analyse/idf.txt``, pinned with jieba 0.42.1) and
    its median, the weight of words it does not list (as jieba's own TF-IDF does)."""
    # read through the jieba package: importing jieba.analyse would load its
    # part-of-speech tables and its own IDF table (~0.9 s of a fresh process)
    text = resources.files("jieba").joinpath("analyse", "idf.txt").read_text(encoding="utf-8")
    table: dict[str, float] = {}
    for line in text.splitlines():
        word, _, value = line.rpartition(" ")
        if word:
            table[word] = float(value)
    values = sorted(table.values())
    return table, values[len(values) // 2]


WEIGHT_SCALE = 100  # IDF to integer weight: exact sums, identical on every machine
TF_SCALE = 256
MAX_TF = 4096
# (1 + ln tf) as integers, computed once; capped at MAX_TF occurrences.
TF_FACTOR = np.array(
    [0] + [round((1.0 + math.log(c)) * TF_SCALE) for c in range(1, MAX_TF + 1)], dtype=np.int64
)


_KEY_BASE = 0x100000001B3  # odd, so invertible modulo 2**64
_KEY_BASE_INV = pow(_KEY_BASE, -1, 1 << 64)
_powers = np.ones(1, dtype=np.uint64)
_inverse_powers = np.ones(1, dtype=np.uint64)


def _power_tables(length: int) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """BASE**i and BASE**-i modulo 2**64 for i < length (grown on demand)."""
    global _powers, _inverse_powers
    if len(_powers) < length:
        size = max(length, 2 * len(_powers), 1 << 16)
        with np.errstate(over="ignore"):
            powers = np.full(size, _KEY_BASE, dtype=np.uint64)
            powers[0] = 1
            inverse = np.full(size, _KEY_BASE_INV, dtype=np.uint64)
            inverse[0] = 1
            _powers, _inverse_powers = np.cumprod(powers), np.cumprod(inverse)
    return _powers, _inverse_powers


def _token_keys(flat: list[str]) -> npt.NDArray[np.uint64]:
    """A 64-bit key per token, computed for all tokens at once: a polynomial hash of
    the code points (prefix sums modulo 2**64), finished with the splitmix64 mixer.
    Only used to find a token's vocabulary entry; the SimHash feature hash is mmh3."""
    if not flat:
        return np.zeros(0, dtype=np.uint64)
    cps = np.frombuffer("\x00".join(flat).encode("utf-32-le"), dtype="<u4")
    separators = np.flatnonzero(cps == 0)
    starts = _prepend(0, separators + 1)
    ends = _append(separators, len(cps))
    powers, inverse = _power_tables(len(cps) + 1)
    with np.errstate(over="ignore"):
        prefix = np.empty(len(cps) + 1, dtype=np.uint64)
        prefix[0] = 0
        np.cumsum(cps.astype(np.uint64) * powers[: len(cps)], out=prefix[1:])
        h = (prefix[ends] - prefix[starts]) * inverse[starts]
        h ^= (ends - starts).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    return splitmix64_finalize(h)


# A token's columns as the kernel reads them (its Record): one cache line per token
# rather than one per column. Weights fit 32 bits (IDF x 100 is at most a few thousand),
# number hashes 16 (NUMBER_MASK and NAME_FLAG).
RECORD = np.dtype([("hashes", "<u8"), ("weights", "<i4"), ("number_hash", "<u2"),
                   ("skip", "?"), ("number", "u1")])
assert RECORD.itemsize == 16

_MONTHS = frozenset(
    {
        "月", "january", "february", "march", "april", "may", "june", "july", "august",
        "september", "october", "november", "december", "jan", "feb", "mar", "apr", "jun",
        "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    }
)

_PLAIN = re.compile(r"[a-z0-9]+")  # what the kernel's is_plain accepts


def _is_cjk(character: str) -> bool:
    """The kernel's is_cjk: a CJK ideograph (the segmenter's unknown-word pieces)."""
    return "\u3400" <= character <= "\u9fff" or "\U00020000" <= character <= "\U0003ffff"


def _span_tokens(text: str, spans: array[int]) -> list[str]:
    """The tokens ``text[s:e]`` of flat (start, end) offsets (the C segmenter's cut_ids)."""
    return [text[s:e] for s, e in zip(spans[::2], spans[1::2], strict=True)]


class Vocabulary:
    """Token -> id, with per-id 64-bit feature hash and integer weight in NumPy arrays;
    stopwords, punctuation and white space get weight 0.

    Tokens are found by a vectorized 64-bit key (:func:`_token_keys`) in an
    open-addressing hash table held in NumPy arrays, so a document's ~400 tokens cost a
    few NumPy calls rather than ~400 Python dict lookups; tokens seen for the first time
    go through Python once.
    """

    def __init__(self, stopwords: frozenset[str]) -> None:
        self.stopwords = stopwords
        self.idf, self.default_idf = idf_table()
        self.names = name_words()
        # a token's columns, one 16-byte record per id (RECORD): the attributes
        # hashes, weights, number_hash, skip and number are views of its fields
        self.records = np.zeros(1 << 16, dtype=RECORD)
        self.month = np.zeros(1 << 16, dtype=np.bool_)  # "月" or a month name
        # a name's rarity | kind << 4 (features version 7), read only for NAMED tokens
        self.name_info = np.zeros(1 << 16, dtype=np.uint8)
        self.kinds = name_kinds()
        self.size = 0
        self.table_keys = np.zeros(1 << 17, dtype=np.uint64)  # hash table: token key -> id
        self.table_ids = np.full(1 << 17, -1, dtype=np.int64)
        self.lock = threading.Lock()
        self._tables: object | None = None  # kernel.Tables over the arrays above
        # per C segmenter (kept alive here, so that its id is not reused): its trie
        # nodes' vocabulary ids, -1 until the kernel first looks the token up
        self._node_ids: dict[int, tuple[object, npt.NDArray[np.int32]]] = {}
        # the weight the kernel gives a plain token it does not find (-1: it hands such
        # tokens back instead): set by enable_defaults
        self.default_weight = -1

    def _describe(self, tokens: Sequence[str]) -> dict[str, npt.NDArray[Any]]:
        """The per-id columns of ``tokens``: skip (white space or punctuation), number
        (all ASCII digits, or a name) and its 16-bit hash, month, weight and feature
        hash, a column at a time (so preloading a dictionary stays fast)."""
        words = [token.strip() for token in tokens]
        skip = [not w or (not w.isalnum() and is_punctuation_or_space(w)) for w in words]
        digits = [w.isdigit() and w.isascii() for w in words]
        names, kinds = self.names, self.kinds
        named = [not d and len(w) >= 2 and w in names
                 for w, d in zip(words, digits, strict=True)]
        # version 7: a name by kind (jieba's tag, NAME_TAGS and nz) of two characters or more
        info = [kinds.get(w) if not d and len(w) >= 2 else None
                for w, d in zip(words, digits, strict=True)]
        seed = FEATURE_SEED
        # a number's hash ignores leading zeros; a name's carries the top bit
        # (NAME_FLAG: "in context" like a number, checked by the name guard of verify)
        number_hash = [
            (mmh3.hash(w.lstrip("0") or "0", seed=seed, signed=False) & NUMBER_MASK) if d
            else (NAME_FLAG | mmh3.hash(w, seed=seed, signed=False) & NUMBER_MASK)
            if n or i is not None
            else 0
            for w, d, n, i in zip(words, digits, named, info, strict=True)]
        stopwords, idf, default = self.stopwords, self.idf, self.default_idf
        weights = [0 if k or w in stopwords else max(1, round(idf.get(w, default) * WEIGHT_SCALE))
                   for w, k in zip(words, skip, strict=True)]
        flags = [(IN_CONTEXT if d or n else 0) | (NAMED if i is not None else 0)
                 | (RUN if len(w) == 1 and _is_cjk(w) and weight > 0 else 0)
                 for w, d, n, i, weight in zip(words, digits, named, info, weights, strict=True)]
        return {
            "skip": np.array(skip, dtype=np.bool_),
            "number": np.array(flags, dtype=np.uint8),
            "name_info": np.array([0 if i is None else i[1] | i[0] << 4 for i in info],
                                  dtype=np.uint8),
            "number_hash": np.array(number_hash, dtype=np.uint16),
            "month": np.array([w.lower() in _MONTHS for w in words], dtype=np.bool_),
            "weights": np.array(weights, dtype=np.int32),
            "hashes": np.array([mmh3.hash64(w, seed=seed, signed=False)[0] for w in words],
                               dtype=np.uint64),
        }

    # the feature hash; the weight (IDF x 100, 0 for stopwords, punctuation and white
    # space); a number's 16-bit hash, leading 0s dropped (NAME_FLAG set for a name);
    # white space or punctuation; a number (all digits) or a name
    @property
    def hashes(self) -> npt.NDArray[np.uint64]:
        return cast(npt.NDArray[np.uint64], self.records["hashes"])

    @property
    def weights(self) -> npt.NDArray[np.int32]:
        return cast(npt.NDArray[np.int32], self.records["weights"])

    @property
    def number_hash(self) -> npt.NDArray[np.uint16]:
        return cast(npt.NDArray[np.uint16], self.records["number_hash"])

    @property
    def skip(self) -> npt.NDArray[np.bool_]:
        return cast(npt.NDArray[np.bool_], self.records["skip"])

    @property
    def number(self) -> npt.NDArray[np.uint8]:
        return cast(npt.NDArray[np.uint8], self.records["number"])

    _COLUMNS = ("records", "month", "name_info")

    def _reserve(self, extra: int) -> None:
        """Room for ``extra`` more entries in the per-id arrays (doubling)."""
        capacity = len(self.records)
        if self.size + extra <= capacity:
            return
        while capacity < self.size + extra:
            capacity *= 2
        for name in self._COLUMNS:
            array = getattr(self, name)
            grown = np.zeros(capacity, dtype=array.dtype)
            grown[: len(array)] = array
            setattr(self, name, grown)
        self._tables = None

    def preload(self, tokens: Sequence[str]) -> int:
        """Add ``tokens`` at once (jieba's dictionary when the vocabulary is made), so
        that the words of a text the process has never seen are already known and
        the kernel resolves them without coming back to Python. Returns how many were
        new. A token's id does not change its fingerprint contribution (its hash and
        weight do), so preloading changes no feature."""
        with self.lock:
            tokens = list(tokens)
            keys = _token_keys(tokens)
            keys[keys == 0] = 1
            before = self.size
            self._add_missing(tokens, keys, self._find(keys))
            return self.size - before

    def enable_defaults(self) -> None:
        """Let the kernel describe *plain* tokens (lower-case ASCII letters and digits:
        English words, numbers, ``10px``) it does not find, instead of handing them back
        to be added: such a token has the default columns (not skipped, the default
        IDF weight, its mmh3 hash, a number when all digits) unless it is a stopword,
        an IDF word, a name or a month, so those plain words are added first. A fresh
        English text then never leaves the kernel."""
        plain = [w for w in chain(self.stopwords, self.idf, self.names, _MONTHS)
                 if _PLAIN.fullmatch(w)]
        self.preload(plain)
        with self.lock:
            self.default_weight = max(1, round(self.default_idf * WEIGHT_SCALE))
            self._tables = None

    def _add_missing(self, tokens: Sequence[str], keys: npt.NDArray[np.uint64],
                     ids: npt.NDArray[np.int64]) -> None:
        """Give the tokens whose id is -1 an id (in place in ``ids``): one new entry per
        distinct key, its columns computed together (:meth:`_describe`)."""
        missing = np.flatnonzero(ids < 0)
        if not len(missing):
            return
        new_keys, first, inverse = np.unique(keys[missing], return_index=True,
                                             return_inverse=True)
        columns = self._describe([tokens[i] for i in missing[first].tolist()])
        start, added = self.size, len(new_keys)
        self._reserve(added)
        for name, column in columns.items():
            getattr(self, name)[start : start + added] = column
        self.size = start + added
        while 4 * self.size > len(self.table_keys):  # load <= 1/4: short probe chains
            self._grow()
        new_ids = np.arange(start, self.size, dtype=np.int64)
        # the columns are written before the keys: a kernel call reading the tables
        # meanwhile either misses a key (and asks again under the lock) or finds it whole
        self._insert_many(new_keys, new_ids)
        ids[missing] = new_ids[inverse.reshape(-1)]

    def _insert_many(self, keys: npt.NDArray[np.uint64], ids: npt.NDArray[np.int64]) -> None:
        """Insert keys not in the table (open addressing, linear probing; key 0 marks an
        empty slot), a probe step per round for all of them: of the keys finding the
        same free slot, the first takes it, the others probe on."""
        mask = np.uint64(len(self.table_keys) - 1)
        slots = keys & mask
        pending = np.arange(len(keys))
        while len(pending):
            at = slots[pending]
            free = self.table_keys[at] == 0
            taken, where = np.unique(at[free], return_index=True)
            winners = pending[free][where]
            self.table_keys[taken] = keys[winners]
            self.table_ids[taken] = ids[winners]
            placed = np.zeros(len(keys), dtype=np.bool_)
            placed[winners] = True
            pending = pending[~placed[pending]]
            slots[pending] = (slots[pending] + np.uint64(1)) & mask

    def _grow(self) -> None:
        keys, ids = self.table_keys, self.table_ids
        used = keys != 0
        self.table_keys = np.zeros(2 * len(keys), dtype=np.uint64)
        self.table_ids = np.full(2 * len(keys), -1, dtype=np.int64)
        self._insert_many(keys[used], ids[used])
        self._tables = None

    def lookup(self, tokens: list[str]) -> npt.NDArray[np.int64]:
        with self.lock:
            return self._lookup_locked(tokens)

    def kernel_tables(self) -> object:
        """The arrays as the C kernel reads them (``kernel.Tables``), rebuilt after the
        vocabulary replaced one. Built without the lock it may mix old and new arrays:
        the kernel then reports the tokens it cannot resolve as unknown, and
        :meth:`fingerprint` retries under the lock with fresh tables."""
        tables = self._tables
        if tables is None:
            assert kernel is not None
            tables = self._tables = kernel.Tables(
                self.table_keys, self.table_ids, self.records, self.month, TF_FACTOR,
                self.name_info, self.default_weight, FEATURE_SEED,
            )
        return tables

    def fingerprint(
        self, tokens: list[str], tf: bool, weak_bits: int, with_numbers: bool
    ) -> Fingerprinted:
        """One text's (fingerprint, informative count, numbers, number count, weak
        bits) through the C kernel: what :func:`_fingerprints` computes for it."""
        assert kernel is not None
        fingerprint = kernel.fingerprint
        tables = self._tables
        if tables is not None:  # the common case, with no closures
            found = fingerprint(tokens, tables, tf, weak_bits, with_numbers)
            if isinstance(found, tuple):
                return cast(Fingerprinted, found)
        return self._through_kernel(partial(fingerprint, tokens), (tf, weak_bits, with_numbers),
                                    partial(list, tokens))

    def fingerprint_spans(
        self, text: str, spans: array[int], tf: bool, weak_bits: int, with_numbers: bool
    ) -> Fingerprinted:
        """:meth:`fingerprint` of the tokens ``text[s:e]`` for the (s, e) pairs of
        ``spans`` (the C segmenter's ``cut_ids``): the kernel reads them in the text and
        makes a str only for the tokens it does not know."""
        assert kernel is not None
        fingerprint_spans = kernel.fingerprint_spans
        tables = self._tables
        if tables is not None:  # the common case, with no closures
            found = fingerprint_spans(text, spans, tables, tf, weak_bits, with_numbers)
            if isinstance(found, tuple):
                return cast(Fingerprinted, found)
        return self._through_kernel(partial(fingerprint_spans, text, spans),
                                    (tf, weak_bits, with_numbers),
                                    partial(_span_tokens, text, spans))

    def node_ids(self, trie: Any) -> npt.NDArray[np.int32]:
        """The node -> vocabulary id map the kernel fills for the C segmenter ``trie``
        (:attr:`~fingerprints.rule.tokenize.Segmenter.trie`): one int32 per node, -1
        until the node's token is first looked up. A node added to the trie later is
        beyond the map: its token is looked up by its hash, as without nodes."""
        entry = self._node_ids.get(id(trie))
        if entry is None:
            with self.lock:
                entry = self._node_ids.get(id(trie))
                if entry is None:
                    entry = (trie, np.full(trie.node_count, -1, dtype=np.int32))
                    self._node_ids[id(trie)] = entry
        return entry[1]

    def fingerprint_nodes(
        self, text: str, spans: array[int], nodes: array[int], trie: Any, tf: bool,
        weak_bits: int, with_numbers: bool,
    ) -> Fingerprinted:
        """:meth:`fingerprint_spans`, with each token's trie node (the C segmenter's
        ``cut_nodes``): a token whose node the kernel has seen is not hashed nor looked
        up in the vocabulary's hash table."""
        assert kernel is not None
        fingerprint_nodes = kernel.fingerprint_nodes
        node_ids = self.node_ids(trie)
        tables = self._tables
        if tables is not None:  # the common case, with no closures
            found = fingerprint_nodes(text, spans, nodes, node_ids, tables, tf, weak_bits,
                                      with_numbers)
            if isinstance(found, tuple):
                return cast(Fingerprinted, found)
        return self._through_kernel(partial(fingerprint_nodes, text, spans, nodes, node_ids),
                                    (tf, weak_bits, with_numbers),
                                    partial(_span_tokens, text, spans))

    def fingerprint_cut(
        self, text: str, trie: Any, tf: bool, weak_bits: int, with_numbers: bool,
    ) -> Fingerprinted:
        """:meth:`fingerprint_nodes` of the C segmenter ``trie``'s ``cut_nodes(text)``,
        the kernel calling the segmenter itself (no arrays handed through Python)."""
        assert kernel is not None
        fingerprint_cut = kernel.fingerprint_cut
        node_ids = self.node_ids(trie)
        tables = self._tables
        if tables is not None:  # the common case, with no closures
            found = fingerprint_cut(text, trie, node_ids, tables, tf, weak_bits, with_numbers)
            if isinstance(found, tuple):
                return cast(Fingerprinted, found)
        return self._through_kernel(partial(fingerprint_cut, text, trie, node_ids),
                                    (tf, weak_bits, with_numbers), partial(trie.cut, text))

    def _through_kernel(
        self, call: Callable[..., object], rest: tuple[object, ...],
        tokens: Callable[[], list[str]],
    ) -> Fingerprinted:
        """``call(tables, *rest)``, adding the tokens it hands back and asking again.
        (Partials, not closures: a closure's variables are cells from the start of the
        method that makes it, a cost on the common path too.)"""
        found = call(self.kernel_tables(), *rest)
        if not isinstance(found, tuple):
            # new tokens (the kernel lists them) or a table being replaced (None): add
            # them under the lock, where nothing can change, and ask again
            with self.lock:
                self._lookup_locked(tokens() if found is None else cast(list[str], found))
                found = call(self.kernel_tables(), *rest)
                if not isinstance(found, tuple):  # tables of a half-replaced vocabulary
                    self._tables = None
                    found = call(self.kernel_tables(), *rest)
            if not isinstance(found, tuple):
                raise RuntimeError("vocabulary lookup failed after adding the tokens")
        return cast(Fingerprinted, found)

    def _find(self, keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
        """The id of each key, -1 where it is not in the table."""
        ids = np.full(len(keys), -1, dtype=np.int64)
        mask = np.uint64(len(self.table_keys) - 1)
        pending = np.arange(len(keys))
        slots = keys & mask
        while len(pending):
            found = self.table_keys[slots]
            hit = found == keys[pending]
            ids[pending[hit]] = self.table_ids[slots[hit]]
            go_on = ~hit & (found != 0)
            pending, slots = pending[go_on], (slots[go_on] + np.uint64(1)) & mask
        return ids

    def _lookup_locked(self, tokens: list[str]) -> npt.NDArray[np.int64]:
        keys = _token_keys(tokens)
        keys[keys == 0] = 1  # 0 marks empty slots
        ids = self._find(keys)
        self._add_missing(tokens, keys, ids)
        return ids


_VOCABULARIES: dict[frozenset[str], Vocabulary] = {}
_VOCABULARIES_lock = threading.Lock()


def vocabulary_for(extra_stopwords: frozenset[str]) -> Vocabulary:
    """The shared vocabulary of a stopword set, built once per process (about 2 s): the
    threads that ask for it at the same moment (a gthread web worker's eight, after a
    stopword change) wait for one build instead of each making its own."""
    vocab = _VOCABULARIES.get(extra_stopwords)
    if vocab is None:
        with _VOCABULARIES_lock:
            vocab = _VOCABULARIES.get(extra_stopwords)
            if vocab is None:
                vocab = Vocabulary(build_stopwords(extra_stopwords))
                vocab.preload(start_vocabulary())
                vocab.enable_defaults()
                _VOCABULARIES[extra_stopwords] = vocab
                settle_tables()
    return vocab


def settle_tables() -> None:
    """Take what the process holds now out of the garbage collector's reach: collect
    once, then ``gc.freeze()``. Called after the engine's tables are loaded (jieba's
    dictionary, the IDF table, the vocabulary: hundreds of thousands of entries that
    live as long as the process). Unfrozen, every full pass of the collector walks them
    again while the stream allocates features (docs/results/log.md, "The per-article
    path: memory and the collector"). Objects alive now that later become cyclic
    garbage are not reclaimed: at a worker's start-up these are its modules and
    settings."""
    gc.collect()
    gc.freeze()


@lru_cache(maxsize=1)
def start_vocabulary() -> tuple[str, ...]:
    """What a vocabulary knows before its first text: jieba's dictionary (the
    segmenter's words, HMM off), every character of the Basic Multilingual Plane but
    NUL and the surrogates (the segmenter splits unknown words into ideographs and hands
    punctuation and symbols over one by one) and the numbers 0-9999 (years, counts,
    scores). Plain English words and longer numbers are described by the kernel
    itself (:meth:`Vocabulary.enable_defaults`)."""
    words, _names = dictionary()
    # NUL separates tokens in _token_keys (normalization removes it from texts)
    characters = tuple(chr(cp) for cp in range(1, 0x10000) if not 0xD800 <= cp < 0xE000)
    return words + characters + tuple(map(str, range(10_000)))

