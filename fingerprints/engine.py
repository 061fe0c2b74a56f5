"""The near-duplicate engine: features per article and the docId decision.

``extract`` turns (title, content) into :class:`Features` — two 64-bit SimHash
fingerprints (title, content) over IDF-weighted jieba words with stopwords and
punctuation dropped, a character-shingle sketch and the article's numbers — and
``decide`` picks the docId a new article joins among index candidates, verifying
every candidate with the sketch (see :mod:`fingerprints.verify` and docs/engine.md).

Nothing here imports Django: the same code runs in web workers, RQ jobs and Spark.

Content candidates come from the content block index looked up with the content
fingerprint *and* its multi-probe fingerprints (:func:`content_probes`). How a caller
(online worker, batch engine, Spark) must use them — the same everywhere, so that the
engines agree:

1. ``probes = content_probes(features, config)`` (a list of ints; empty for an empty
   text, ``config.probe_bits == 0`` or features read from a version-1 row).
2. Look up the content index with ``[features.content_fp, *probes]``, every one with
   ``max_distance=config.content_radius`` (``RedisBlockIndex.query_many`` does it in one
   round trip); the content candidates are the union of the hits. The title lookup is
   unchanged.
3. Hand the candidates to :func:`decide` as before — the hits plus, for every doc among
   them, that doc's anchor row. ``decide`` recomputes the probes and accepts a content
   candidate within ``content_radius`` of the fingerprint or of a probe; the
   ``Decision.distance`` it reports is the true distance to ``content_fp`` (up to
   ``content_radius + probe_bits``).
4. Index only ``features.content_fp`` (never a probe; remove it the same way).
5. Lock the bucket keys of the probes too (the online engine: ``articles.locks.multi_lock``)
   (``index.bucket_keys(p)`` for ``p`` in ``[content_fp, *probes]``, plus the title
   buckets): a pair found through a probe shares the probe's bucket, so locking it
   serializes the two decisions.

There is no second fingerprint index (no ``extra_index_keys``): probing closes the gap
measured in docs/engine.md.
"""

from __future__ import annotations

import math
import re
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from itertools import chain, combinations

import mmh3
import numpy as np
import numpy.typing as npt

from .index import block_layout
from .kernel import kernel
from .normalize import normalize
from .simhash import FEATURE_SEED, _append, _prepend, _run_starts, hamming
from .sketch import Sketch, sketch_many, sketch_one
from .stopwords import build_stopwords, is_punctuation_or_space
from .tokenize import Segmenter, SegmenterSpec, UserWord, get_segmenter
from .verify import Verification, verify

__all__ = [
    "Candidate",
    "Decision",
    "EngineConfig",
    "Features",
    "Verification",
    "content_probes",
    "decide",
    "extract",
    "extract_many",
    "verify",
]

MAX_K = 8
FEATURES_VERSION = 2  # 1: no weak bits (still read)
MAX_NUMBERS = 48
WEAK_BITS = 24  # content-fingerprint bit positions kept, least confident first


@dataclass(frozen=True)
class EngineConfig:
    """Every tunable of the engine. Defaults are the measured choices (docs/engine.md).

    Changing a field marked *fingerprint* changes stored features: reindex after it.
    """

    k: int = 3  # content Hamming threshold: the index finds *every* fingerprint within k
    title_k: int = 3  # title Hamming threshold of the title rule
    # Candidates farther than k but sharing a pigeonhole block with the query come out of
    # the same buckets at no cost; they are verified like the others when within this
    # radius (pass it as ``max_distance`` to ``BlockIndex.query``). See docs/engine.md.
    candidate_radius: int = 8
    hmm: bool = False  # fingerprint: jieba HMM for unknown words (off: rjieba == jieba)
    extra_stopwords: frozenset[str] = frozenset()  # fingerprint
    user_words: tuple[UserWord, ...] = ()  # fingerprint: (word, freq, pos)
    backend: str = "rjieba"  # fingerprint: "rjieba" or "jieba" (identical tokens, HMM off)
    # verification (not fingerprint: change freely)
    jaccard: float = 0.6
    copy_containment: float = 0.8
    containment: float = 0.9
    containment_min_shingles: int = 60
    short_shingles: int = 30
    short_jaccard: float = 0.9
    guard_conflicts: float = 0.2
    guard_min_conflicts: int = 1
    title_min_tokens: int = 2  # a title with fewer informative words has no title_fp
    # Multi-probe content lookups (see :func:`content_probes`): in each pigeonhole block
    # of the content fingerprint, the ``probe_bits`` least confident bits are flipped,
    # every non-empty subset of them: 4 * (2**probe_bits - 1) extra fingerprints at
    # k=3 (28 at the default 3). 0 turns probing off. Not fingerprint: applies to the
    # next lookup (features need their weak bits: version 2).
    probe_bits: int = 3

    def __post_init__(self) -> None:
        for name in ("k", "title_k"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_K:
                raise ValueError(f"{name} must be an integer from 0 to {MAX_K}, not {value!r}")
        if not 0 <= self.candidate_radius <= 64:
            raise ValueError(
                f"candidate_radius must be from 0 to 64, not {self.candidate_radius!r}"
            )
        for name in (
            "jaccard", "copy_containment", "containment", "short_jaccard", "guard_conflicts"
        ):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, not {value!r}")
        if not isinstance(self.probe_bits, int) or not 0 <= self.probe_bits <= 4:
            raise ValueError(f"probe_bits must be an integer from 0 to 4, not {self.probe_bits!r}")
        if self.backend not in ("rjieba", "jieba"):
            raise ValueError(f"backend must be 'rjieba' or 'jieba', not {self.backend!r}")

    @property
    def content_radius(self) -> int:
        """``max_distance`` for content lookups: max(k, candidate_radius)."""
        return max(self.k, self.candidate_radius)

    @property
    def title_radius(self) -> int:
        """``max_distance`` for title lookups: max(title_k, candidate_radius)."""
        return max(self.title_k, self.candidate_radius)

    @property
    def segmenter(self) -> SegmenterSpec:
        return SegmenterSpec(self.backend, self.hmm, self.user_words)


@dataclass(frozen=True)
class Features:
    """Everything stored per article (serialize with :meth:`to_bytes`)."""

    title_fp: int  # unsigned 64-bit, 0 when the title has no informative words
    content_fp: int  # unsigned 64-bit, 0 when the content has none
    token_count: int  # informative content words (stopwords and punctuation excluded)
    sketch: Sketch = field(default_factory=lambda: Sketch(0, 0, b""))
    numbers: bytes = b""  # sorted uint32 hashes of the content's numbers (smallest kept)
    number_count: int = 0  # distinct numbers in the content
    # positions (0-63) of the content fingerprint's least confident bits, weakest first
    # (smallest |vote sum|): the bits a light edit flips. Empty in version-1 rows.
    weak_bits: bytes = b""

    def to_bytes(self) -> bytes:
        """Version 2: the version-1 layout followed by ``<B count>`` and the weak-bit
        positions (one byte each)."""
        head = struct.pack(
            "<BQQIIH",
            FEATURES_VERSION,
            self.title_fp,
            self.content_fp,
            self.token_count,
            self.number_count,
            len(self.numbers) // 4,
        )
        tail = struct.pack("<B", len(self.weak_bits)) + self.weak_bits
        return head + self.numbers + self.sketch.to_bytes() + tail

    @classmethod
    def from_bytes(cls, data: bytes) -> Features:
        """Reads version 2 and version 1 (rows written before multi-probe lookups: no
        weak bits, so :func:`content_probes` returns nothing for them)."""
        data = bytes(data)
        version = data[0] if data else None
        if version not in (1, FEATURES_VERSION):
            raise ValueError(f"unknown features version {version!r}")
        _, title_fp, content_fp, tokens, number_count, n = struct.unpack_from("<BQQIIH", data)
        offset = struct.calcsize("<BQQIIH")
        numbers = data[offset : offset + 4 * n]
        sketch, end = Sketch.from_bytes(data, offset + 4 * n)
        weak = b""
        if version == FEATURES_VERSION:
            (count,) = struct.unpack_from("<B", data, end)
            weak = data[end + 1 : end + 1 + count]
            if len(weak) != count or any(bit > 63 for bit in weak):
                raise ValueError("truncated or invalid features (weak bits)")
        return cls(title_fp, content_fp, tokens, sketch, numbers, number_count, weak)


# --- weights -----------------------------------------------------------------------


@lru_cache(maxsize=1)
def idf_table() -> tuple[dict[str, float], float]:
    """jieba's IDF table (``jieba/analyse/idf.txt``, pinned with jieba 0.42.1) and
    its median, the weight of words it does not list (as jieba's own TF-IDF does)."""
    text = resources.files("jieba.analyse").joinpath("idf.txt").read_text(encoding="utf-8")
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
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return h


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
        self.hashes = np.zeros(1 << 16, dtype=np.uint64)
        self.weights = np.zeros(1 << 16, dtype=np.int64)
        self.skip = np.zeros(1 << 16, dtype=np.bool_)  # white space or punctuation
        self.number = np.zeros(1 << 16, dtype=np.bool_)  # all digits
        self.number_hash = np.zeros(1 << 16, dtype=np.uint64)  # 16 bits, leading 0s dropped
        self.month = np.zeros(1 << 16, dtype=np.bool_)  # "月" or a month name
        self.size = 0
        self.table_keys = np.zeros(1 << 17, dtype=np.uint64)  # hash table: token key -> id
        self.table_ids = np.full(1 << 17, -1, dtype=np.int64)
        self.lock = threading.Lock()
        self._tables: object | None = None  # kernel.Tables over the arrays above

    def _add(self, key: int, token: str) -> int:
        i = self.size
        if i == len(self.hashes):
            for name in ("hashes", "weights", "skip", "number", "number_hash", "month"):
                array = getattr(self, name)
                setattr(self, name, np.concatenate([array, np.zeros_like(array)]))
            self._tables = None
        word = token.strip()
        skip = not word or is_punctuation_or_space(word)
        if word.isdigit() and word.isascii():
            self.number[i] = True
            digits = word.lstrip("0") or "0"
            self.number_hash[i] = mmh3.hash(digits, seed=FEATURE_SEED, signed=False) & 0xFFFF
        self.skip[i] = skip
        self.month[i] = word.lower() in _MONTHS
        if skip or word in self.stopwords:
            weight = 0
        else:
            weight = max(1, round(self.idf.get(word, self.default_idf) * WEIGHT_SCALE))
        self.hashes[i] = mmh3.hash64(word, seed=FEATURE_SEED, signed=False)[0]
        self.weights[i] = weight
        self.size = i + 1
        return i

    def _insert(self, key: int, item: int) -> None:
        """Open addressing, linear probing; key 0 marks an empty slot."""
        mask = len(self.table_keys) - 1
        slot = key & mask
        while self.table_keys[slot] != 0:
            slot = (slot + 1) & mask
        self.table_keys[slot] = key
        self.table_ids[slot] = item

    def _grow(self) -> None:
        keys, ids = self.table_keys, self.table_ids
        used = keys != 0
        self.table_keys = np.zeros(2 * len(keys), dtype=np.uint64)
        self.table_ids = np.full(2 * len(keys), -1, dtype=np.int64)
        for key, item in zip(keys[used].tolist(), ids[used].tolist(), strict=True):
            self._insert(key, item)
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
                self.table_keys, self.table_ids, self.hashes, self.weights, self.skip,
                self.number, self.number_hash, self.month, _TF_FACTOR,
            )
        return tables

    def fingerprint(
        self, tokens: list[str], tf: bool, weak_bits: int, with_numbers: bool
    ) -> tuple[int, int, bytes, int, bytes]:
        """One text's (fingerprint, informative count, numbers, number count, weak
        bits) through the C kernel: what :func:`_fingerprints` computes for it."""
        assert kernel is not None
        found = kernel.fingerprint(tokens, self.kernel_tables(), tf, weak_bits, with_numbers)
        if found is None:  # new tokens: add them, then nothing can change under the lock
            with self.lock:
                self._lookup_locked(tokens)
                found = kernel.fingerprint(
                    tokens, self.kernel_tables(), tf, weak_bits, with_numbers
                )
                if found is None:  # tables built from a half-replaced vocabulary
                    self._tables = None
                    found = kernel.fingerprint(
                        tokens, self.kernel_tables(), tf, weak_bits, with_numbers
                    )
            if found is None:
                raise RuntimeError("vocabulary lookup failed after adding the tokens")
        return found

    def _lookup_locked(self, tokens: list[str]) -> npt.NDArray[np.int64]:
        keys = _token_keys(tokens)
        keys[keys == 0] = 1  # 0 marks empty slots
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
        missing = np.flatnonzero(ids < 0)
        if len(missing):
            added: dict[int, int] = {}
            for i, key in zip(missing.tolist(), keys[missing].tolist(), strict=True):
                known = added.get(key)
                if known is None:
                    known = added[key] = self._add(key, tokens[i])
                    # load <= 1/4 keeps probe chains short
                    if 4 * self.size > len(self.table_keys):
                        self._grow()
                    self._insert(key, known)
                ids[i] = known
        return ids


_MONTHS = frozenset(
    {
        "月", "january", "february", "march", "april", "may", "june", "july", "august",
        "september", "october", "november", "december", "jan", "feb", "mar", "apr", "jun",
        "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    }
)

_vocabularies: dict[frozenset[str], _Vocabulary] = {}


def _vocabulary(extra_stopwords: frozenset[str]) -> _Vocabulary:
    vocab = _vocabularies.get(extra_stopwords)
    if vocab is None:
        vocab = _Vocabulary(build_stopwords(extra_stopwords))
        vocab = _vocabularies.setdefault(extra_stopwords, vocab)
    return vocab


# --- extraction ---------------------------------------------------------------------

# A leading column tag such as "（国际）", "【独家】", "[video]" is a desk label, not the story.
_TITLE_TAG = re.compile(r"^\s*(?:[(\[【〔][^()\[\]【】〔〕]{1,12}[)\]】〕]\s*)+")


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


def extract(title: str, content: str, config: EngineConfig = EngineConfig()) -> Features:
    """Features of one article. Deterministic: same text, same config -> same bytes."""
    return extract_many([(title, content)], config)[0]


def extract_many(
    items: Sequence[tuple[str, str]], config: EngineConfig = EngineConfig(), batch: int = 256,
    *, compiled: bool | None = None,
) -> list[Features]:
    """``extract`` over (title, content) pairs: article by article through the C kernel
    (:mod:`fingerprints.kernel`) when it is built, else vectorized with NumPy per
    ``batch`` articles. Both give identical bytes; ``compiled=False`` forces NumPy,
    ``compiled=True`` requires the kernel."""
    if compiled is None:
        compiled = kernel is not None
    elif compiled and kernel is None:
        raise RuntimeError("the C kernel fingerprints._kernel is not built")
    segmenter = get_segmenter(config.segmenter)
    vocab = _vocabulary(config.extra_stopwords)
    if compiled:
        return [_extract_compiled(title, content, segmenter, vocab, config)
                for title, content in items]
    out: list[Features] = []
    for start in range(0, len(items), batch):
        chunk = items[start : start + batch]
        bodies = [normalize(content) for _, content in chunk]
        heads = [_TITLE_TAG.sub("", normalize(title)) if title else "" for title, _ in chunk]
        body_tokens = [segmenter.cut(body) for body in bodies]
        head_tokens = [segmenter.cut(head) if head else [] for head in heads]
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
                    weak_bits=weak[i],
                )
            )
    return out


def _extract_compiled(
    title: str, content: str, segmenter: Segmenter, vocab: _Vocabulary, config: EngineConfig
) -> Features:
    body = normalize(content)
    head = _TITLE_TAG.sub("", normalize(title)) if title else ""
    content_fp, token_count, numbers, number_count, weak = vocab.fingerprint(
        segmenter.cut(body), True, WEAK_BITS, True
    )
    title_fp = 0
    if head:
        title_fp, title_count, _, _, _ = vocab.fingerprint(segmenter.cut(head), False, 0, False)
        if title_count < config.title_min_tokens:
            title_fp = 0
    return Features(
        title_fp, content_fp, token_count, sketch_one(body), numbers, number_count,
        weak_bits=weak,
    )


# --- multi-probe lookups -------------------------------------------------------------


@lru_cache(maxsize=16)
def _block_masks(k: int) -> tuple[int, ...]:
    return tuple(((1 << width) - 1) << shift for shift, width in block_layout(k))


def content_probes(features: Features, config: EngineConfig = EngineConfig()) -> list[int]:
    """Extra fingerprints to look up in the *content* block index besides
    ``features.content_fp`` (possibly none): multi-probe queries.

    A light edit moves a SimHash mostly in its least confident bits — those whose vote
    sum was nearest zero. For each of the ``k + 1`` pigeonhole blocks of the content
    fingerprint, the ``config.probe_bits`` weakest bits that fall in that block are
    flipped, every non-empty subset of them, one block at a time. A stored copy whose
    differing bits in some block are all among that block's flipped ones now shares that
    block exactly with a probe, so the probe's lookup returns it when it is within
    ``config.content_radius`` of the probe. Each probe changes one block only: its
    lookup reads one new bucket (the other ``k`` are the original query's).

    Deterministic (exact integer votes, ties by bit position); empty when probing is off,
    the content is empty, or the features predate weak bits (version 1).
    Caller contract (online and batch alike; docs/engine.md):

    * query the content index with ``features.content_fp`` *and* every probe, each with
      ``max_distance=config.content_radius``; the union of the hits are the content
      candidates (plus, as always, each hit doc's anchor row for :func:`decide`);
    * index only ``features.content_fp`` — probes are never added or removed;
    * lock the buckets of the probes too (``bucket_keys`` of each), so that two
      articles that can find each other through a probe are serialized.
    """
    fp = features.content_fp
    if not fp or not features.weak_bits or config.probe_bits <= 0:
        return []
    probes: list[int] = []
    for mask in _block_masks(config.k):
        bits = [1 << b for b in features.weak_bits if (1 << b) & mask][: config.probe_bits]
        for size in range(1, len(bits) + 1):
            for subset in combinations(bits, size):
                probes.append(fp ^ sum(subset))
    return probes


def content_reach(new: Features, other_fp: int, config: EngineConfig,
                  probes: Sequence[int] | None = None) -> int:
    """Smallest Hamming distance from ``other_fp`` to ``new.content_fp`` or to one of
    its probes: a content candidate is one with reach <= ``config.content_radius``."""
    if probes is None:
        probes = content_probes(new, config)
    return min(hamming(p, other_fp) for p in (new.content_fp, *probes))


# --- the docId decision -------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    article_id: int
    doc_key: str  # the docId the candidate belongs to
    features: Features
    is_anchor: bool  # the doc's anchor: its founding (oldest) member


@dataclass(frozen=True)
class Decision:
    doc_key: str
    article_id: int  # the member whose fingerprint matched
    matched_by: str  # "title" or "content"
    distance: int  # Hamming distance of the compared fingerprints (title or content);
    # content: up to content_radius + probe_bits when found through a probe
    similarity: float  # verified shingle Jaccard with the doc's anchor (or the member)
    containment: float = 0.0
    reason: str = ""


def decide(
    new: Features,
    candidates: Sequence[Candidate],
    config: EngineConfig = EngineConfig(),
    *,
    forbidden_docs: frozenset[str] = frozenset(),
) -> Decision | None:
    """The docId ``new`` joins, or None for a new docId.

    A candidate doc is accepted only when ``new`` verifies directly against the doc's
    anchor *and* against the member that the index found (when that member is not the
    anchor). Membership is therefore a star around the anchor, never a chain.
    When the anchor row is missing, the member alone must verify with the stricter
    thresholds of :func:`_strict`. The caller supplies the index hits plus, for each
    doc among them, the doc's anchor row (``is_anchor=True``).

    Title rule first (title fingerprints within ``config.title_k``), then content
    (within ``config.content_radius`` of ``new.content_fp`` or of one of its
    :func:`content_probes`, so candidates found through probes are accepted); within a
    rule the highest verified similarity (max of Jaccard and containment) wins, ties
    going to the oldest doc (smallest anchor id). Docs in ``forbidden_docs`` (editor
    cannot-links) are never joined.
    """
    by_doc: dict[str, list[Candidate]] = {}
    for cand in candidates:
        if cand.doc_key in forbidden_docs:
            continue
        by_doc.setdefault(cand.doc_key, []).append(cand)

    strict = _strict(config)
    probes = content_probes(new, config)
    ranked: list[tuple[tuple[int, float, int], Decision]] = []
    for doc_key, members in by_doc.items():
        members.sort(key=lambda c: c.article_id)
        anchor = next((c for c in members if c.is_anchor), None)
        doc_age = anchor.article_id if anchor else members[0].article_id
        found = _match_doc(new, doc_key, members, anchor, config, strict, probes)
        if found is not None:
            rule_rank = 0 if found.matched_by == "title" else 1
            score = max(found.similarity, found.containment)
            ranked.append(((rule_rank, -score, doc_age), found))
    if not ranked:
        return None
    return min(ranked, key=lambda item: item[0])[1]


def _match_doc(
    new: Features,
    doc_key: str,
    members: list[Candidate],
    anchor: Candidate | None,
    config: EngineConfig,
    strict: EngineConfig,
    probes: Sequence[int] = (),
) -> Decision | None:
    checked: dict[int, Verification] = {}

    def check(c: Candidate, cfg: EngineConfig) -> Verification:
        v = checked.get(c.article_id)
        if v is None:
            v = checked[c.article_id] = verify(new, c.features, cfg)
        return v

    for rule in ("title", "content"):
        for member in members:
            if rule == "title":
                if not new.title_fp or not member.features.title_fp:
                    continue
                distance = hamming(new.title_fp, member.features.title_fp)
                if distance > config.title_k:
                    continue
            else:
                if not new.content_fp or not member.features.content_fp:
                    continue
                distance = hamming(new.content_fp, member.features.content_fp)
                if distance > config.content_radius and (
                    not probes
                    or content_reach(new, member.features.content_fp, config, probes)
                    > config.content_radius
                ):
                    continue
            if anchor is None:
                v = check(member, strict)
            else:
                v = check(anchor, config)
                if v.ok and member is not anchor and not check(member, config).ok:
                    continue
            if v.ok:
                return Decision(
                    doc_key, member.article_id, rule, distance, v.similarity, v.containment,
                    v.reason,
                )
    return None


def _strict(config: EngineConfig) -> EngineConfig:
    """Thresholds for a member whose doc anchor was not supplied."""
    from dataclasses import replace

    return replace(
        config,
        jaccard=max(config.jaccard, 0.8),
        copy_containment=max(config.copy_containment, 0.9),
        containment=max(config.containment, 0.95),
    )

