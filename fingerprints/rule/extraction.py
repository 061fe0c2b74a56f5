"""Feature extraction: (title, content) -> :class:`~fingerprints.rule.features.Features`.

Two 64-bit SimHash fingerprints (title, content) over IDF-weighted jieba words with
stopwords and punctuation dropped, the content fingerprint's least confident bits, a
character-shingle sketch and the article's numbers in context. The C kernel
(:mod:`fingerprints.rule.kernel`) computes the same bytes when it is built; this NumPy code
is the reference and the fallback.
"""

from __future__ import annotations

import gc
import math
import re
import threading
from array import array
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib import resources
from itertools import chain
from typing import Any, cast

import mmh3
import numpy as np
import numpy.typing as npt

from fingerprints.rule.boilerplate import strip_with_clauses
from fingerprints.rule.config import EngineConfig
from fingerprints.rule.features import MAX_KEY_CHARS, Features
from fingerprints.rule.ids import splitmix64_finalize
from fingerprints.rule.kernel import kernel
from fingerprints.rule.normalize import normalize
from fingerprints.rule.shorttext import dictionary, name_words
from fingerprints.rule.simhash import FEATURE_SEED, _append, _prepend, _run_starts
from fingerprints.rule.sketch import char_shingled, sketch_and_kind, sketch_many
from fingerprints.rule.stopwords import build_stopwords, is_punctuation_or_space
from fingerprints.rule.tokenize import Segmenter, get_segmenter

MAX_NUMBERS = 48
NAME_FLAG = 0x8000  # numbers in context: the top bit of the value's hash marks a name
NUMBER_MASK = 0x7FFF
WEAK_BITS = 24  # content-fingerprint bit positions kept, least confident first
# With the C segmenter, the kernel reads the body's tokens in the body by their offsets
# (kernel.fingerprint_spans) instead of taking a list of str: the same bytes
# (tests/fingerprints/rule/test_kernel_spans.py), no str per token. False: the list of str.
SPAN_PATH = True
# ... and finds a token's vocabulary id through its node in the segmenter's trie once
# that node was seen (kernel.fingerprint_nodes), not through the vocabulary's hash
# table: the same bytes (tests/fingerprints/rule/test_kernel_spans.py). False: by hashing.
NODE_PATH = True


# --- weights -----------------------------------------------------------------------


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
_MAX_TF = 4096
# (1 + ln tf) as integers, computed once; capped at _MAX_TF occurrences.
_TF_FACTOR = np.array(
    [0] + [round((1.0 + math.log(c)) * TF_SCALE) for c in range(1, _MAX_TF + 1)], dtype=np.int64
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
                   ("skip", "?"), ("number", "?")])
assert RECORD.itemsize == 16

_MONTHS = frozenset(
    {
        "月", "january", "february", "march", "april", "may", "june", "july", "august",
        "september", "october", "november", "december", "jan", "feb", "mar", "apr", "jun",
        "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    }
)

_PLAIN = re.compile(r"[a-z0-9]+")  # what the kernel's is_plain accepts


class _Vocabulary:
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
        names = self.names
        named = [not d and len(w) >= 2 and w in names
                 for w, d in zip(words, digits, strict=True)]
        seed = FEATURE_SEED
        # a number's hash ignores leading zeros; a name's carries the top bit
        # (NAME_FLAG: "in context" like a number, checked by the name guard of verify)
        number_hash = [
            (mmh3.hash(w.lstrip("0") or "0", seed=seed, signed=False) & NUMBER_MASK) if d
            else (NAME_FLAG | mmh3.hash(w, seed=seed, signed=False) & NUMBER_MASK) if n
            else 0
            for w, d, n in zip(words, digits, named, strict=True)]
        stopwords, idf, default = self.stopwords, self.idf, self.default_idf
        weights = [0 if k or w in stopwords else max(1, round(idf.get(w, default) * WEIGHT_SCALE))
                   for w, k in zip(words, skip, strict=True)]
        return {
            "skip": np.array(skip, dtype=np.bool_),
            "number": np.logical_or(digits, named) if words else np.zeros(0, np.bool_),
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
    def number(self) -> npt.NDArray[np.bool_]:
        return cast(npt.NDArray[np.bool_], self.records["number"])

    _COLUMNS = ("records", "month")

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
                self.table_keys, self.table_ids, self.records, self.month, _TF_FACTOR,
                self.default_weight, FEATURE_SEED,
            )
        return tables

    def fingerprint(
        self, tokens: list[str], tf: bool, weak_bits: int, with_numbers: bool
    ) -> tuple[int, int, bytes, int, bytes]:
        """One text's (fingerprint, informative count, numbers, number count, weak
        bits) through the C kernel: what :func:`_fingerprints` computes for it."""
        assert kernel is not None
        fingerprint = kernel.fingerprint
        tables = self._tables
        if tables is not None:  # the common case, with no closures
            found = fingerprint(tokens, tables, tf, weak_bits, with_numbers)
            if isinstance(found, tuple):
                return cast(tuple[int, int, bytes, int, bytes], found)
        return self._through_kernel(
            lambda tables: fingerprint(tokens, tables, tf, weak_bits, with_numbers),
            lambda: tokens,
        )

    def fingerprint_spans(
        self, text: str, spans: array[int], tf: bool, weak_bits: int, with_numbers: bool
    ) -> tuple[int, int, bytes, int, bytes]:
        """:meth:`fingerprint` of the tokens ``text[s:e]`` for the (s, e) pairs of
        ``spans`` (the C segmenter's ``cut_ids``): the kernel reads them in the text and
        makes a str only for the tokens it does not know."""
        assert kernel is not None
        fingerprint_spans = kernel.fingerprint_spans
        tables = self._tables
        if tables is not None:  # the common case, with no closures
            found = fingerprint_spans(text, spans, tables, tf, weak_bits, with_numbers)
            if isinstance(found, tuple):
                return cast(tuple[int, int, bytes, int, bytes], found)
        return self._through_kernel(
            lambda tables: fingerprint_spans(text, spans, tables, tf, weak_bits, with_numbers),
            lambda: [text[s:e] for s, e in zip(spans[::2], spans[1::2], strict=True)],
        )

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
    ) -> tuple[int, int, bytes, int, bytes]:
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
                return cast(tuple[int, int, bytes, int, bytes], found)
        return self._through_kernel(
            lambda tables: fingerprint_nodes(text, spans, nodes, node_ids, tables, tf,
                                             weak_bits, with_numbers),
            lambda: [text[s:e] for s, e in zip(spans[::2], spans[1::2], strict=True)],
        )

    def _through_kernel(
        self, call: Callable[[object], object], tokens: Callable[[], list[str]]
    ) -> tuple[int, int, bytes, int, bytes]:
        """``call(tables)``, adding the tokens it hands back and asking again."""
        found = call(self.kernel_tables())
        if not isinstance(found, tuple):
            # new tokens (the kernel lists them) or a table being replaced (None): add
            # them under the lock, where nothing can change, and ask again
            with self.lock:
                self._lookup_locked(tokens() if found is None else cast(list[str], found))
                found = call(self.kernel_tables())
                if not isinstance(found, tuple):  # tables of a half-replaced vocabulary
                    self._tables = None
                    found = call(self.kernel_tables())
            if not isinstance(found, tuple):
                raise RuntimeError("vocabulary lookup failed after adding the tokens")
        return cast(tuple[int, int, bytes, int, bytes], found)

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


_vocabularies: dict[frozenset[str], _Vocabulary] = {}
_vocabularies_lock = threading.Lock()


def _vocabulary(extra_stopwords: frozenset[str]) -> _Vocabulary:
    """The shared vocabulary of a stopword set, built once per process (about 2 s): the
    threads that ask for it at the same moment (a gthread web worker's eight, after a
    stopword change) wait for one build instead of each making its own."""
    vocab = _vocabularies.get(extra_stopwords)
    if vocab is None:
        with _vocabularies_lock:
            vocab = _vocabularies.get(extra_stopwords)
            if vocab is None:
                vocab = _Vocabulary(build_stopwords(extra_stopwords))
                vocab.preload(start_vocabulary())
                vocab.enable_defaults()
                _vocabularies[extra_stopwords] = vocab
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
    itself (:meth:`_Vocabulary.enable_defaults`)."""
    words, _names = dictionary()
    # NUL separates tokens in _token_keys (normalization removes it from texts)
    characters = tuple(chr(cp) for cp in range(1, 0x10000) if not 0xD800 <= cp < 0xE000)
    return words + characters + tuple(map(str, range(10_000)))


# --- extraction ---------------------------------------------------------------------

# A leading column tag such as "（国际）", "【独家】", "[video]" is a desk label, not the story.
_TITLE_TAG = re.compile(r"^\s*(?:[(\[【〔][^()\[\]【】〔〕]{1,12}[)\]】〕]\s*)+")
_SERIES_TAG = re.compile(r"[(\[【〔]\s*(\d{1,3})\s*[)\]】〕]")


def _without_tags(title: str) -> str:
    """A normalized title without its leading desk tags (``（锐视角）``, ``【独家】``). A
    tag that is only a number, a photo series' ``（3）``, is kept (as the number, in
    front): it is which item of the series this is, and ``（3）`` against ``（4）`` is
    another item."""
    found = _TITLE_TAG.match(title)
    if not found:
        return title
    series = _SERIES_TAG.findall(found.group(0))
    rest = title[found.end():]
    return " ".join([*series, rest]) if series else rest


# A crawled page's title carries the site, channel or blog around the headline:
# "标题_搜狐汽车_搜狐网", "标题_手机网易网", "中国文艺网_标题", "标题 - 渭南市中级人民法院网".
# Only titles with Chinese characters are cut: in English a spaced dash belongs to the
# headline ("Choose hope over fear - Kennedy": the speaker), and the English corpora
# show no site names to learn from.
_SITE_SEPARATOR = re.compile(r"_+|\s+[-|—–]+\s+")
_CJK = re.compile(r"[\u3400-\u9fff]")
LATER_HEADLINE = 2  # a later part is the headline when this many times the first's length
# how a site's, channel's or forum's name ends ("搜狐网", "华声在线", "体育频道", "百度贴吧")
SITE_ENDINGS = ("网", "网站", "在线", "频道", "论坛", "贴吧", "博客", "社区", "新闻", "资讯",
                "门户")


def split_title(title: str) -> tuple[str, str]:
    """(headline, the rest) of a crawled page's title, cut at the site's separators.

    The headline is the first part that is not a site's name (:data:`SITE_ENDINGS`:
    ``中国文艺网_书法志愿服务走进…``), unless a later part that is not one either is at
    least :data:`LATER_HEADLINE` times as long (letters and digits, desk tags left out:
    ``打印_利川小河初中…``, ``百姓声音_陕西镇安县…_海角社区``); a site's name is never taken
    for the headline while another part is there (``【视频】刘翔_凤凰网体育频道``). So two
    sites' copies of one story (``…钱财_赤峰新闻网``, ``…钱财_手机网易网``) have one title,
    and two stories of one site (``…_投诉直通车_华声在线``) do not share the site's name.
    The rest (the other parts, space-joined) still counts for :func:`off_title`. A
    title without a separator or without Chinese characters is all headline."""
    if not _CJK.search(title):
        return title, ""
    parts = _SITE_SEPARATOR.split(title)
    if len(parts) == 1:  # no separator (most titles): no part's key is needed
        return title, ""
    keys = [text_key(_without_tags(part)) for part in parts]
    filled = [i for i, key in enumerate(keys) if key]
    if not filled:
        return title, ""
    named = [i for i in filled if not keys[i].endswith(SITE_ENDINGS)]
    best = named[0] if named else filled[0]
    longer = [i for i in named if len(keys[i]) >= LATER_HEADLINE * len(keys[best])]
    if longer:
        best = max(longer, key=lambda i: len(keys[i]))  # the first of ties
    return parts[best].strip(), " ".join(p.strip() for i, p in enumerate(parts)
                                         if i != best and p.strip())


def _fingerprints(
    vocab: _Vocabulary, lengths: npt.NDArray[np.int64], ids: npt.NDArray[np.int64], tf: bool,
    weak_bits: int = 0, with_numbers: bool = True,
) -> tuple[list[int], list[int], list[tuple[bytes, int]], list[bytes]]:
    """SimHash, informative-token count and numbers of each token list (given as the
    lists' ``lengths`` and the vocabulary ``ids`` of all their tokens), vectorized
    over the batch. Weights are integers (IDF x 100, times (1 + ln tf) x 256 for content), so
    the vote sums are exact: the fingerprint of a text does not depend on the batch,
    the NumPy build or the machine."""
    n = len(lengths)
    doc = np.repeat(np.arange(n, dtype=np.int64), lengths)
    numbers = (_numbers_in_context(vocab, ids, doc, n) if with_numbers
               else [(b"", 0)] * n)
    informative = vocab.weights[ids] > 0
    ids, doc = ids[informative], doc[informative]
    counts_per_doc = np.bincount(doc, minlength=n)
    fps = [0] * n
    weak: list[bytes] = [b""] * n
    if len(ids) == 0:
        return fps, counts_per_doc.tolist(), numbers, weak
    keys = np.sort(doc << 32 | ids)
    first = np.flatnonzero(_run_starts(keys))
    tf_counts = np.diff(_append(first, len(keys)))
    unique = keys[first]
    unique_doc = unique >> 32
    unique_id = unique & 0xFFFFFFFF
    weights = vocab.weights[unique_id]
    if tf:
        weights = weights * _TF_FACTOR[np.minimum(tf_counts, _MAX_TF)]
    hashes = np.ascontiguousarray(vocab.hashes[unique_id], dtype="<u8")
    bits = np.unpackbits(hashes.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    bits_f = bits.astype(np.float64)
    weights_f = weights.astype(np.float64)
    doc_start = np.flatnonzero(_run_starts(unique_doc))
    margins = np.zeros((n, 64) if weak_bits else (0, 64), dtype=np.float64)
    doc_end = _append(doc_start[1:], len(unique))
    # Integer weights summed in float64 stay exact (every partial sum < 2**53), so the
    # BLAS summation order cannot change a bit.
    for d, lo, hi in zip(unique_doc[doc_start].tolist(), doc_start.tolist(), doc_end.tolist(),
                         strict=True):
        w = weights_f[lo:hi]
        votes = 2.0 * (w @ bits_f[lo:hi]) - w.sum()
        fps[d] = int(np.packbits(votes > 0, bitorder="little").view("<u8")[0])
        if weak_bits:
            margins[d] = votes
    if weak_bits:
        # the least confident bits: smallest |vote|, ties by position (exact sums)
        order = np.argsort(np.abs(margins), axis=1, kind="stable")[:, :weak_bits]
        rows = order.astype(np.uint8)
        for d in unique_doc[doc_start].tolist():
            weak[d] = rows[d].tobytes()
    return fps, counts_per_doc.tolist(), numbers, weak


def _numbers_in_context(
    vocab: _Vocabulary, ids: npt.NDArray[np.int64], doc: npt.NDArray[np.int64], n: int
) -> list[tuple[bytes, int]]:
    """Each text's numbers *in context*: every number token with the word before it
    (``报收 3012`` -> context ``报收``, number ``3012``), packed as
    ``hash16(context) << 16 | hash16(number)``; sorted, the smallest
    :data:`MAX_NUMBERS` kept, with the count of distinct values."""
    words = ~vocab.skip[ids]
    ids, doc = ids[words], doc[words]
    at = np.flatnonzero(vocab.number[ids])
    out: list[tuple[bytes, int]] = [(b"", 0)] * n
    if len(at) == 0:
        return out
    before = np.maximum(at - 1, 0)
    has_context = (at > 0) & (doc[before] == doc[at])
    # The day of a date ("1月5日", "March 5") is left out: re-issuing a story the next
    # day changes only its dateline, while a bulletin for another day differs in its
    # body numbers too.
    keep = ~(has_context & vocab.month[ids[before]])
    at, before, has_context = at[keep], before[keep], has_context[keep]
    if len(at) == 0:
        return out
    context = np.where(has_context, vocab.hashes[ids[before]] >> np.uint64(48), 0)
    number = vocab.number_hash[ids[at]]
    packed = (doc[at].astype(np.uint64) << np.uint64(32)) | (context << np.uint64(16)) | number
    packed = np.sort(packed)
    packed = packed[_run_starts(packed)]
    packed_doc = (packed >> np.uint64(32)).astype(np.int64)
    values = (packed & np.uint64(0xFFFFFFFF)).astype("<u4")
    bounds = np.searchsorted(packed_doc, np.arange(n + 1))
    for d in np.flatnonzero(bounds[1:] > bounds[:-1]).tolist():
        lo, hi = int(bounds[d]), int(bounds[d + 1])
        out[d] = (values[lo : min(hi, lo + MAX_NUMBERS)].tobytes(), hi - lo)
    return out


def extract(title: str, content: str, config: EngineConfig = EngineConfig(), *,
            boilerplate: frozenset[int] = frozenset()) -> Features:
    """Features of one article. Deterministic: same text, same config and boilerplate
    -> same bytes."""
    return extract_many([(title, content)], config, boilerplate=boilerplate)[0]


def extract_many(
    items: Sequence[tuple[str, str]], config: EngineConfig = EngineConfig(), batch: int = 256,
    *, compiled: bool | None = None, boilerplate: frozenset[int] = frozenset(),
) -> list[Features]:
    """``extract`` over (title, content) pairs: article by article through the C kernel
    (:mod:`fingerprints.rule.kernel`) when it is built, else vectorized with NumPy per
    ``batch`` articles. Both give identical bytes; ``compiled=False`` forces NumPy,
    ``compiled=True`` requires the kernel. Clauses whose hash is in ``boilerplate``
    (:mod:`fingerprints.rule.boilerplate`) are removed from the body first."""
    if compiled is None:
        compiled = kernel is not None
    elif compiled and kernel is None:
        raise RuntimeError("the C kernel fingerprints.rule._kernel is not built")
    segmenter = get_segmenter(config.segmenter)
    vocab = _vocabulary(config.extra_stopwords)
    if compiled:
        return [_extract_compiled(title, content, segmenter, vocab, config, boilerplate)
                for title, content in items]
    out: list[Features] = []
    for start in range(0, len(items), batch):
        chunk = items[start : start + batch]
        stripped = [strip_with_clauses(normalize(content), boilerplate) for _, content in chunk]
        bodies = [item.body for item in stripped]
        titles = [_title_parts(title) for title, _ in chunk]
        heads = [head for head, _ in titles]
        body_tokens = [segmenter.cut(body) for body in bodies]
        head_tokens = [segmenter.cut(head) if head else [] for head in heads]
        site_tokens = [segmenter.cut(site) if site else [] for _, site in titles]
        # one vocabulary lookup for bodies and titles (per-call cost matters for one article)
        body_lengths = np.fromiter(map(len, body_tokens), dtype=np.int64, count=len(chunk))
        head_lengths = np.fromiter(map(len, head_tokens), dtype=np.int64, count=len(chunk))
        ids = vocab.lookup(list(chain(chain.from_iterable(body_tokens),
                                      chain.from_iterable(head_tokens))))
        split = int(body_lengths.sum())
        content_fps, token_counts, numbers, weak = _fingerprints(
            vocab, body_lengths, ids[:split], tf=True, weak_bits=WEAK_BITS
        )
        title_fps, title_counts, _, _ = _fingerprints(
            vocab, head_lengths, ids[split:], tf=False, with_numbers=False
        )
        sketches = sketch_many(bodies)
        for i in range(len(chunk)):
            title_fp = title_fps[i] if title_counts[i] >= config.title_min_tokens else 0
            out.append(
                Features(
                    title_fp, content_fps[i], token_counts[i], sketches[i], *numbers[i],
                    weak_bits=weak[i], title_key=text_key(heads[i]),
                    short_text=stripped[i].short_text, keys=stripped[i].keys,
                    off_title=off_title(head_tokens[i], bodies[i], token_counts[i],
                                        vocab.stopwords, site_tokens[i]),
                    char_shingles=char_shingled(bodies[i]),
                )
            )
    return out


def _extract_compiled(
    title: str, content: str, segmenter: Segmenter, vocab: _Vocabulary, config: EngineConfig,
    boilerplate: frozenset[int],
) -> Features:
    stripped = strip_with_clauses(normalize(content), boilerplate)
    body = stripped.body
    head, site = _title_parts(title)
    if NODE_PATH and segmenter.uses_c:  # tokens found by their trie nodes
        spans, nodes = segmenter.cut_nodes(body)
        content_fp, token_count, numbers, number_count, weak = vocab.fingerprint_nodes(
            body, spans, nodes, segmenter.trie, True, WEAK_BITS, True
        )
    elif SPAN_PATH and segmenter.uses_c:  # the body's tokens are never needed as str
        content_fp, token_count, numbers, number_count, weak = vocab.fingerprint_spans(
            body, segmenter.cut_ids(body), True, WEAK_BITS, True
        )
    else:
        content_fp, token_count, numbers, number_count, weak = vocab.fingerprint(
            segmenter.cut(body), True, WEAK_BITS, True
        )
    title_fp = 0
    head_tokens: list[str] = []
    if head:
        head_tokens = segmenter.cut(head)
        title_fp, title_count, _, _, _ = vocab.fingerprint(head_tokens, False, 0, False)
        if title_count < config.title_min_tokens:
            title_fp = 0
    sketch, char_kind = sketch_and_kind(body)
    return Features(
        title_fp, content_fp, token_count, sketch, numbers, number_count,
        weak_bits=weak, title_key=text_key(head), short_text=stripped.short_text,
        keys=stripped.keys,
        off_title=off_title(head_tokens, body, token_count, vocab.stopwords,
                            lambda: segmenter.cut(site) if site else ()),
        char_shingles=char_kind,
    )


def _title_parts(title: str) -> tuple[str, str]:
    """(headline, the site's part) of a raw title: the headline (:func:`split_title`)
    without its desk tags is what the title fingerprint and the title key are made of."""
    if not title:
        return "", ""
    head, site = split_title(normalize(title))
    return _without_tags(head), site


def off_title(head_tokens: list[str], body: str, body_words: int,
              stopwords: frozenset[str],
              site_tokens: Sequence[str] | Callable[[], Sequence[str]] = ()) -> bool:
    """Is the body about something else than its headline: a title of at least two
    informative words (two characters or more, not stopwords), none of the headline's
    occurring in a body that has informative words of its own (``body_words``: its
    count)? The site's part of the title (``site_tokens``, :func:`split_title`) counts
    towards the two words but is not looked for: a site's channel description names the
    site. True for a redirect page, a site footer or a disclaimer crawled as the body;
    0.06 % of Xinhua articles, 5 % of the crawled web news corpus. ``site_tokens`` may
    be a function giving them: it is called only when the headline has fewer than two
    informative words (the site's part is cut only then)."""
    if not body_words:
        return False
    words = _informative(head_tokens, stopwords)
    if not words:
        return False
    if len(words) < 2:
        site = site_tokens() if callable(site_tokens) else site_tokens
        if len(words | _informative(site, stopwords)) < 2:
            return False
    return not any(word in body for word in words)


def _informative(tokens: Sequence[str], stopwords: frozenset[str]) -> set[str]:
    # the stopwords taken out in one set difference, not looked up token by token
    return {t for t in tokens if len(t) >= 2 and t[0].isalnum()} - stopwords


_NOT_WORD = re.compile(r"[\W_]+")


def text_key(text: str) -> str:
    """A normalized text's letters and digits, at most ``MAX_KEY_CHARS`` of them."""
    return _NOT_WORD.sub("", text)[:MAX_KEY_CHARS] if text else ""


# --- multi-probe lookups -------------------------------------------------------------
