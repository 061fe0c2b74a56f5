"""Feature extraction: (title, content) -> :class:`~fingerprints.rule.features.Features`.

Two 64-bit SimHash fingerprints (title, content) over IDF-weighted jieba words with
stopwords and punctuation dropped, the content fingerprint's least confident bits, a
character-shingle sketch and the article's numbers in context. The C kernel
(:mod:`fingerprints.rule.kernel`) computes the same bytes when it is built; this NumPy code
is the reference and the fallback.
"""


from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from itertools import chain

import numpy as np
import numpy.typing as npt

from fingerprints.rule.boilerplate import strip_with_clauses
from fingerprints.rule.config import EngineConfig
from fingerprints.rule.features import Features, features_of
from fingerprints.rule.headline import text_key, title_parts
from fingerprints.rule.ids import splitmix64_finalize
from fingerprints.rule.kernel import kernel
from fingerprints.rule.main_body import body_parts_py
from fingerprints.rule.normalize import normalize
from fingerprints.rule.simhash import _append, _run_starts
from fingerprints.rule.sketch import _KEEP, char_shingled, sketch_and_kind, sketch_many
from fingerprints.rule.tokenize import Segmenter, get_segmenter
from fingerprints.rule.vocabulary import (
    IN_CONTEXT,
    MAX_NAMES,
    MAX_NUMBERS,
    MAX_TF,
    NAMED,
    RUN,
    RUN_INFO,
    TF_FACTOR,
    Vocabulary,
    vocabulary_for,
)

WEAK_BITS = 24  # content-fingerprint bit positions kept, least confident first
# How the kernel reads the body's tokens when the C segmenter cut them: "nodes" finds a
# token's vocabulary id through its node in the segmenter's trie once that node was seen
# (kernel.fingerprint_nodes); "cut" is "nodes" with the kernel calling the segmenter
# itself, C to C (kernel.fingerprint_cut: no arrays of offsets and nodes made in
# between); "spans" reads the tokens in the body by their offsets and hashes them
# (kernel.fingerprint_spans); "strings" takes a list of str, as with any other
# segmenter. The four give the same bytes (the kernel's span tests compare them); "cut"
# is the fastest and the one production runs, the others are its references.
TOKEN_PATHS = ("cut", "nodes", "spans", "strings")
TOKEN_PATH = "cut"



# --- extraction ---------------------------------------------------------------------


def _fingerprints(
    vocab: Vocabulary, lengths: npt.NDArray[np.int64], ids: npt.NDArray[np.int64], tf: bool,
    weak_bits: int = 0, with_numbers: bool = True,
) -> tuple[list[int], list[int], list[tuple[bytes, int]], list[bytes], list[tuple[bytes, int]]]:
    """SimHash, informative-token count and numbers of each token list (given as the
    lists' ``lengths`` and the vocabulary ``ids`` of all their tokens), vectorized
    over the batch. Weights are integers (IDF x 100, times (1 + ln tf) x 256 for content), so
    the vote sums are exact: the fingerprint of a text does not depend on the batch,
    the NumPy build or the machine."""
    n = len(lengths)
    doc = np.repeat(np.arange(n, dtype=np.int64), lengths)
    numbers = (_numbers_in_context(vocab, ids, doc, n) if with_numbers
               else [(b"", 0)] * n)
    names = _names_in_context(vocab, ids, doc, n) if with_numbers else [(b"", 0)] * n
    informative = vocab.weights[ids] > 0
    ids, doc = ids[informative], doc[informative]
    counts_per_doc = np.bincount(doc, minlength=n)
    fps = [0] * n
    weak: list[bytes] = [b""] * n
    if len(ids) == 0:
        return fps, counts_per_doc.tolist(), numbers, weak, names
    keys = np.sort(doc << 32 | ids)
    first = np.flatnonzero(_run_starts(keys))
    tf_counts = np.diff(_append(first, len(keys)))
    unique = keys[first]
    unique_doc = unique >> 32
    unique_id = unique & 0xFFFFFFFF
    weights = vocab.weights[unique_id]
    if tf:
        weights = weights * TF_FACTOR[np.minimum(tf_counts, MAX_TF)]
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
    return fps, counts_per_doc.tolist(), numbers, weak, names


def _names_in_context(
    vocab: Vocabulary, ids: npt.NDArray[np.int64], doc: npt.NDArray[np.int64], n: int
) -> list[tuple[bytes, int]]:
    """Each text's names in context by kind (features version 7): every name jieba's
    dictionary tags (vocabulary.NAMED) with the word before it, packed as
    ``hash16(context) << 16 | kind << 14 | rarity << 10 | hash10(name)``; and each run of
    2-4 single CJK characters that are not stopwords (vocabulary.RUN; no white space or
    punctuation between them), a name outside the dictionary (other, the top rarity,
    its hash folded from its characters'). Sorted, the smallest :data:`MAX_NAMES` kept,
    with the count of distinct values. The kernel's fingerprint computes the same."""
    out: list[tuple[bytes, int]] = [(b"", 0)] * n
    if not len(ids):
        return out
    flags = vocab.number[ids]
    words = ~vocab.skip[ids]
    spoken = np.flatnonzero(words)  # the positions of the tokens that are not skipped
    mask64 = np.uint64(0xFFFFFFFFFFFFFFFF)

    def context_before(at: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64]:
        """hash16 of the word before each position in the same text (0 for none)."""
        before = np.searchsorted(spoken, at) - 1
        prev = spoken[np.maximum(before, 0)]
        has = (before >= 0) & (doc[prev] == doc[at])
        return np.where(has, vocab.hashes[ids[prev]] >> np.uint64(48), np.uint64(0))

    at = np.flatnonzero(words & ((flags & NAMED) != 0))
    values = [(doc[at].astype(np.uint64) << np.uint64(32)) | (context_before(at) << np.uint64(16))
              | (vocab.name_info[ids[at]].astype(np.uint64) << np.uint64(10))
              | (vocab.number_hash[ids[at]].astype(np.uint64) & np.uint64(0x3FF))]
    member = words & ((flags & RUN) != 0)
    if member.any():
        same = np.zeros(len(ids), dtype=np.bool_)
        same[1:] = member[:-1] & member[1:] & (doc[1:] == doc[:-1])
        starts = np.flatnonzero(member & ~same)
        ends = np.flatnonzero(member & ~np.append(same[1:], False)) + 1
        lengths = ends - starts
        keep = (lengths >= 2) & (lengths <= 4)
        starts, ends = starts[keep], ends[keep]
        if len(starts):
            folded = np.zeros(len(starts), dtype=np.uint64)
            hashes = vocab.hashes[ids]
            with np.errstate(over="ignore"):
                for step in range(4):
                    inside = starts + step < ends
                    at_step = np.minimum(starts + step, len(ids) - 1)
                    folded = np.where(inside, (folded * np.uint64(0x100000001B3)
                                               + hashes[at_step]) & mask64, folded)
            runs = ((doc[starts].astype(np.uint64) << np.uint64(32))
                    | (context_before(starts) << np.uint64(16))
                    | np.uint64(RUN_INFO << 10) | (splitmix64_finalize(folded) >> np.uint64(54)))
            values.append(runs)
    packed = np.unique(np.concatenate(values))
    if not len(packed):
        return out
    packed_doc = (packed >> np.uint64(32)).astype(np.int64)
    low = (packed & np.uint64(0xFFFFFFFF)).astype("<u4")
    bounds = np.searchsorted(packed_doc, np.arange(n + 1))
    for d in np.flatnonzero(bounds[1:] > bounds[:-1]).tolist():
        lo, hi = int(bounds[d]), int(bounds[d + 1])
        out[d] = (low[lo : min(hi, lo + MAX_NAMES)].tobytes(), hi - lo)
    return out


def _numbers_in_context(
    vocab: Vocabulary, ids: npt.NDArray[np.int64], doc: npt.NDArray[np.int64], n: int
) -> list[tuple[bytes, int]]:
    """Each text's numbers *in context*: every number token with the word before it
    (``报收 3012`` -> context ``报收``, number ``3012``), packed as
    ``hash16(context) << 16 | hash16(number)``; sorted, the smallest
    :data:`MAX_NUMBERS` kept, with the count of distinct values."""
    words = ~vocab.skip[ids]
    ids, doc = ids[words], doc[words]
    at = np.flatnonzero(vocab.number[ids] & IN_CONTEXT)
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
    vocab = vocabulary_for(config.extra_stopwords)
    if compiled:
        return [_extract_compiled(title, content, segmenter, vocab, config, boilerplate)
                for title, content in items]
    out: list[Features] = []
    for start in range(0, len(items), batch):
        chunk = items[start : start + batch]
        normalized = [normalize(content) for _, content in chunk]
        stripped = [strip_with_clauses(text, boilerplate) for text in normalized]
        bodies = [item.body for item in stripped]
        titles = [title_parts(title) for title, _ in chunk]
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
        content_fps, token_counts, numbers, weak, names = _fingerprints(
            vocab, body_lengths, ids[:split], tf=True, weak_bits=WEAK_BITS
        )
        title_fps, title_counts, _, _, _ = _fingerprints(
            vocab, head_lengths, ids[split:], tf=False, with_numbers=False
        )
        sketches = sketch_many(bodies)
        for i in range(len(chunk)):
            title_fp = title_fps[i] if title_counts[i] >= config.title_min_tokens else 0
            parts = body_parts_py(normalized[i], bodies[i], sketches[i])
            out.append(
                Features(
                    title_fp, content_fps[i], token_counts[i], sketches[i], *numbers[i],
                    weak_bits=weak[i], title_key=text_key(heads[i]),
                    short_text=stripped[i].short_text, keys=stripped[i].keys,
                    off_title=off_title(head_tokens[i], bodies[i], token_counts[i],
                                        vocab.stopwords, site_tokens[i]),
                    char_shingles=char_shingled(bodies[i]),
                    codes=parts.codes, chrome=parts.chrome, main_bits=parts.main_bits,
                    names=names[i][0], name_count=names[i][1],
                    quoted=stripped[i].quoted,
                )
            )
    return out


def _extract_compiled(
    title: str, content: str, segmenter: Segmenter, vocab: Vocabulary, config: EngineConfig,
    boilerplate: frozenset[int],
) -> Features:
    normalized = normalize(content)
    stripped = strip_with_clauses(normalized, boilerplate)
    body = stripped.body
    head, site = title_parts(title)
    path = TOKEN_PATH if segmenter.uses_c else "strings"
    if path == "cut":  # tokens found by their trie nodes, cut by the kernel's call
        found = vocab.fingerprint_cut(body, segmenter.trie, True, WEAK_BITS, True)
    elif path == "nodes":  # the same through cut_nodes' arrays
        spans, nodes = segmenter.cut_nodes(body)
        found = vocab.fingerprint_nodes(body, spans, nodes, segmenter.trie, True, WEAK_BITS, True)
    elif path == "spans":  # the body's tokens are never needed as str
        found = vocab.fingerprint_spans(body, segmenter.cut_ids(body), True, WEAK_BITS, True)
    else:
        found = vocab.fingerprint(segmenter.cut(body), True, WEAK_BITS, True)
    content_fp, token_count, numbers, number_count, weak, names, name_count = found
    title_fp = 0
    head_tokens: list[str] = []
    if head:
        head_tokens = segmenter.cut(head)
        title_fp, title_count, *_ = vocab.fingerprint(head_tokens, False, 0, False)
        if title_count < config.title_min_tokens:
            title_fp = 0
    sketch, char_kind = sketch_and_kind(body)
    # the kernel's (codes, chrome, main bits): main_body.body_parts without its named tuple
    assert kernel is not None  # the compiled path: extract_many checked it
    codes, chrome, main_bits = kernel.body_parts(body, len(normalized), sketch.samples, _KEEP)
    # features_of: Features(...) without the frozen dataclass's 19 setattr calls
    return features_of(
        title_fp, content_fp, token_count, sketch, numbers, number_count, weak,
        text_key(head), stripped.short_text, stripped.keys,
        off_title(head_tokens, body, token_count, vocab.stopwords,
                  partial(segmenter.cut, site) if site else ()),
        char_kind, (), codes, chrome, main_bits, names, name_count,
        stripped.quoted,
    )


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
    informative words, none in the body (the site's part is cut only then)."""
    if not body_words:
        return False
    # A headline word found in the body decides at once (most articles: the first or
    # second word), before the set of them is complete: a third of the instructions of
    # making the set, then looking its words up.
    words: set[str] = set()
    for token in head_tokens:
        if len(token) >= 2 and token[0].isalnum() and token not in stopwords:
            if token in body:
                return False
            words.add(token)
    if not words:
        return False
    if len(words) < 2:
        site = site_tokens() if callable(site_tokens) else site_tokens
        if len(words | _informative(site, stopwords)) < 2:
            return False
    return True


def _informative(tokens: Sequence[str], stopwords: frozenset[str]) -> set[str]:
    # the stopwords taken out in one set difference, not looked up token by token
    return {t for t in tokens if len(t) >= 2 and t[0].isalnum()} - stopwords


# --- multi-probe lookups -------------------------------------------------------------
