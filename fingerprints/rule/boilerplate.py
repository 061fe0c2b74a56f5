"""Boilerplate learned from the stream: clauses that recur across many stories.

A crawled body carries site chrome around the article: a platform disclaimer
("特别声明：以上文章内容仅代表作者本人观点…"), a WeChat "follow us" header, a forum's
sign-in banner, a footer with licence numbers. They are the same words in thousands of
unrelated articles, so they pull unrelated articles together (a body that is *only*
chrome "contains" every other copy of that chrome) and push reposts apart (a repost
under another header moves its SimHash by 10+ bits).

The unit is the **clause**: the normalized body split at sentence and clause
punctuation, line breaks (also the two-character ``\\n`` that double-escaped feeds
leave) and spaces between CJK characters; only its letters and digits count, and a
clause shorter than :data:`MIN_CLAUSE` of them is never boilerplate. A clause is
boilerplate once it was seen in ``min_docs`` different **stories** (docIds): a
story's clauses are counted once, when the story is founded, so a story reposted a
hundred times counts once, while a footer under a hundred stories counts a hundred
times.

Counting is bounded: a table of ``2**slots_log2`` 32-bit slots (16 MiB at the default
22), each holding a 16-bit check of one clause hash and a 16-bit count. A clause whose
slot holds another clause *decrements* it and takes the slot when it reaches 0
("majority vote per slot"): frequent clauses keep their slot, rare ones churn. The
same arithmetic runs in :class:`MemoryCounter` (batch) and in the Redis script of
:class:`RedisCounter` (online), so both promote the same clauses for the same
sequence of stories.

Promoted clauses are removed from the body before fingerprints, sketch and numbers
are computed (:func:`strip`): they get no weight anywhere, and a body that is only
boilerplate becomes empty, so it is matched by URL and title only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import mmh3
import numpy as np

from fingerprints.rule.features import MAX_KEY_CHARS
from fingerprints.rule.kernel import kernel
from fingerprints.rule.keys import EDGE, EDGE_SEED, MIN_KEY_CLAUSE, QUERY_KEYS, body_keys, short_key
from fingerprints.rule.normalize import CACHED_CHARS

MIN_CLAUSE = 6  # letters and digits
CLAUSE_SEED = 0xB01E
DEFAULT_SLOTS_LOG2 = 22
MAX_CLAUSES = 256  # clauses counted per story (a 30k-character page has ~1,000)

# Clause breaks: sentence and clause punctuation (after NFKC: ASCII forms of the
# full-width ones), the ideographic full stop and comma, bullets, a literal "\n"
# left by double-escaped feeds, and a space between two CJK characters (a layout
# break in Chinese text; English words keep their spaces).
_CJK = "\u3400-\u9fff\U00020000-\U0003ffff"
_BREAK = re.compile(
    r"[.!?;:,。！？；：，、|•·]+|\\n|\\r|(?<=[" + _CJK + r"]) (?=[" + _CJK + r"])"
)
# The same breaks, faster for marking them all at once (no look-behind at every
# position: the CJK character before a break space is matched and put back).
_PUNCT_BREAK = re.compile(r"[.!?;:,。！？；：，、|•·]+|\\n|\\r")
_CJK_SPACE = re.compile(r"([" + _CJK + r"]) (?=[" + _CJK + r"])")
_NOT_WORD = re.compile(r"[\W_]+")


_NOT_WORD_NOR_BREAK = re.compile(r"[^\w\x00]+|_+")


def clauses(body: str) -> list[str]:
    """The clauses of a *normalized* body (``fingerprints.rule.normalize.normalize``), in
    order: each as its letters and digits only. Two passes over the whole text (breaks
    to NUL, then everything but letters, digits and NUL removed), not one per clause."""
    marked = _PUNCT_BREAK.sub("\x00", body.replace("\x00", ""))
    if " " in marked:
        marked = _CJK_SPACE.sub("\\1\x00", marked)
    marked = _NOT_WORD_NOR_BREAK.sub("", marked)
    return [key for key in marked.split("\x00") if key]


#: The starting list the project ships (scripts/ship_boilerplate.py): clause hashes only.
SHIPPED = Path(__file__).resolve().parent / "data" / "boilerplate.txt"


def shipped_hashes() -> list[int]:
    """The clause hashes of the shipped starting list (:data:`SHIPPED`), sorted."""
    return [int(line, 16) for line in SHIPPED.read_text(encoding="ascii").splitlines()
            if line and not line.startswith("#")]


def clause_hash(key: str) -> int:
    """Unsigned 64-bit hash of a clause's letters and digits (mmh3, fixed seed)."""
    return int(mmh3.hash64(key, seed=CLAUSE_SEED, signed=False)[0])


def hashed_clauses(found: Sequence[str]) -> list[int]:
    """:func:`clause_hash` of each clause long enough to count, 0 for the others
    (aligned with ``found``)."""
    h64 = mmh3.hash64
    return [h64(key, seed=CLAUSE_SEED, signed=False)[0] if len(key) >= MIN_CLAUSE else 0
            for key in found]


def split_clauses(body: str) -> tuple[list[str], list[int]]:
    """:func:`clauses` of a normalized body and their :func:`hashed_clauses`, in one
    pass through the C kernel when it is built (identical results: tested)."""
    if kernel is not None:
        found, hashes = kernel.clauses(body, MIN_CLAUSE, CLAUSE_SEED)
        return found, hashes
    found = clauses(body)
    return found, hashed_clauses(found)


def clause_hashes(body: str, limit: int | None = MAX_CLAUSES) -> list[int]:
    """Distinct hashes of the clauses of a normalized body long enough to count, in
    first-occurrence order (at most ``limit``)."""
    hashes = dict.fromkeys(h for h in split_clauses(body)[1] if h)
    return list(hashes)[:limit]


class Stripped(NamedTuple):
    """A normalized body without its boilerplate, and what the features, the key index
    and the counting read of its clauses, split and hashed once (a named tuple: made
    for every article, and a tuple is made in C where a frozen dataclass sets each
    field through a Python call)."""

    body: str
    # the distinct hashes of its clauses long enough to count (:func:`hashed_clauses`,
    # 0s left out), in first-occurrence order
    hashes: tuple[int, ...]
    short_text: str  # keys.short_key: its letters and digits when it is that short
    keys: bytes  # keys.body_keys
    # the bits of ``keys`` whose clause is quoted (:func:`quoted_keys_py`; bit i: the i-th)
    quoted: int


_new_tuple: Any = tuple.__new__  # a Stripped without its Python __new__ (_clause_keys)


def story_clauses(body: str, boilerplate: frozenset[int] | set[int]
                  ) -> tuple[str, list[int]]:
    """What a new story counts: its normalized ``body`` without the known boilerplate,
    and the distinct hashes of that body's clauses long enough to count (at most
    :data:`MAX_CLAUSES`)."""
    stripped = strip_with_clauses(body, boilerplate)
    return stripped.body, list(stripped.hashes[:MAX_CLAUSES])


def strip_with_clauses(body: str, boilerplate: frozenset[int] | set[int]) -> Stripped:
    """:func:`strip`, with what is read of the result's clauses (:class:`Stripped`),
    splitting the text once when nothing is removed (the common case). The last 512
    results for bodies of at most :data:`~fingerprints.rule.normalize.CACHED_CHARS`
    characters are kept: a worker counts a new story's clauses right after extracting
    its features, on the same body and boilerplate."""
    if isinstance(boilerplate, frozenset) and len(body) <= CACHED_CHARS:
        return _strip_cached(body, boilerplate)
    return _strip_with_clauses(body, boilerplate)


def _strip_with_clauses(body: str, boilerplate: frozenset[int] | set[int]) -> Stripped:
    # Only hashes of clauses long enough to count can be boilerplate (_rebuild_py), so
    # looking for it among the distinct non-zero ones finds what looking among all finds.
    found = _clause_keys(body)
    if boilerplate and not boilerplate.isdisjoint(found.hashes):
        found = _clause_keys(_rebuild(body, boilerplate))
    return found


def _clause_keys(body: str) -> Stripped:
    """:class:`Stripped` of a body with nothing to remove: in one pass through the C
    kernel when it is built (no str per clause; identical results: tested), else
    :func:`clause_keys_py`."""
    if kernel is not None:
        hashes, short, keys, quoted = kernel.clause_keys(
            body, MIN_CLAUSE, CLAUSE_SEED, MIN_KEY_CLAUSE, QUERY_KEYS, MAX_KEY_CHARS, EDGE,
            EDGE_SEED)
        # Stripped(...) as its class's __new__ makes it (tuple.__new__ of the fields), without
        # that Python __new__'s frame; hashes: a tuple already
        made: Stripped = _new_tuple(Stripped, (body, hashes, short, keys, quoted))
        return made
    return clause_keys_py(body)


def clause_keys_py(body: str) -> Stripped:
    """The reference of ``kernel.clause_keys``: :func:`clauses` and
    :func:`hashed_clauses`, ``keys.short_key``, ``keys.body_keys`` and
    :func:`quoted_keys_py` (the kernel tracks the quotes in the same walk)."""
    found = clauses(body)
    hashes = hashed_clauses(found)
    short = short_key(body, found)
    keys = body_keys(short, (found, hashes))
    return Stripped(body, tuple(dict.fromkeys(h for h in hashes if h)), short, keys,
                    quoted_keys_py(body, keys))


_strip_cached = lru_cache(maxsize=512)(_strip_with_clauses)


# --- quotations (features version 7) -------------------------------------------------
# A clause is *quoted* when one of its letters is inside quotation marks (“” 「」 『』 ‘’,
# and " which opens and closes; an opening mark not closed within MAX_QUOTE characters
# ends there), or when it is attributed: led by QUOTE_LEADS (据警方通报 ..., according to
# ...; the rest of its sentence too), or after a clause ending with QUOTE_ENDS (警方表示,
# ... 称, he said) up to the sentence's end (。！？!? a literal "\n", or ". "). Two
# write-ups of one event that share a police or fire-brigade bulletin share its quoted
# clauses, not a copy of each other.
QUOTE_OPENS = frozenset("\u201c\u300c\u300e\u2018")
QUOTE_CLOSES = frozenset("\u201d\u300d\u300f\u2019")
QUOTE_LEADS = ("据", "accordingto")
QUOTE_ENDS = ("表示", "称", "说", "指出", "通报", "介绍", "said", "says")
MAX_QUOTE = 500
_SENTENCE_ENDS = frozenset("。！？!?")
_CLAUSE_BREAKS = frozenset(".!?;:,|\u3002\uff01\uff1f\uff1b\uff1a\uff0c\u3001\u2022\u00b7")


def quoted_keys(body: str) -> int:
    """The bits of the keys of ``body`` (normalized, nothing to strip; its sorted uint32
    keys, ``Features.keys``) whose clause is quoted (bit i: the i-th key):
    :attr:`Stripped.quoted`, which ``kernel.clause_keys`` computes in its walk over the
    body (the same bits as :func:`quoted_keys_py`: tested on the five corpora)."""
    return _clause_keys(body).quoted


def _is_cjk(character: str) -> bool:
    return "\u3400" <= character <= "\u9fff" or "\U00020000" <= character <= "\U0003ffff"


def _break_at(body: str, i: int, ch: str, prev: str) -> tuple[bool, bool, int]:
    """(a clause ends at body[i], at a literal "\\n" or "\\r", where the walk goes on):
    the kernel's clause_break_at."""
    if ch in _CLAUSE_BREAKS:
        return True, False, i
    if ch == "\\" or (ch == " " and prev and _is_cjk(prev)):
        j = i + 1
        while j < len(body) and body[j] == "\x00":
            j += 1
        if ch == " ":
            return j < len(body) and _is_cjk(body[j]), False, i
        if j < len(body) and body[j] in "nr":
            return True, True, j
    return False, False, i


def quoted_keys_py(body: str, keys: bytes) -> int:
    """The reference of ``kernel.clause_keys``' quoted bits: the body walked character by
    character, split into clauses as :func:`clauses` splits it."""
    wanted = np.frombuffer(keys, dtype="<u4").tolist()
    mask = 0
    letters: list[str] = []
    in_quote = quoted = cue = False
    quote_len = 0
    prev = ""
    n = len(body)
    i = -1
    while wanted and i < n:
        i += 1
        cut = i == n
        sentence_end = False
        if not cut:
            ch = body[i]
            if ch == "\x00":
                continue
            if in_quote:
                quote_len += 1
                in_quote = quote_len <= MAX_QUOTE
            if ch.isalnum():
                letters.append(ch)
                quoted |= in_quote
                prev = ch
                continue
            in_quote, quote_len = _quote_mark(ch, in_quote, quote_len)
            cut, escaped, i = _break_at(body, i, ch, prev)
            sentence_end = escaped or ch in _SENTENCE_ENDS or (
                ch == "." and (i + 1 >= n or body[i + 1] == " "))
            if not cut:
                prev = ch
                cue = cue and not sentence_end
                continue
        if letters:  # a clause ends
            bits, cue = _clause_quoted("".join(letters), quoted, cue, wanted)
            mask |= bits
        letters, quoted, prev = [], False, ""
        cue = cue and not sentence_end
    return mask


def _quote_mark(ch: str, in_quote: bool, quote_len: int) -> tuple[bool, int]:
    """The quote's state after ``ch``: (inside quotation marks, characters since it
    opened)."""
    if ch in QUOTE_OPENS:
        return True, 0
    if ch in QUOTE_CLOSES:
        return False, quote_len
    if ch == '"':
        return not in_quote, 0
    return in_quote, quote_len


def _clause_quoted(clause: str, quoted: bool, cue: bool, wanted: list[int]) -> tuple[int, bool]:
    """(the bits of ``wanted`` that this clause's key is, when it is quoted; whether the
    clauses after it in its sentence are attributed)."""
    leads = clause.startswith(QUOTE_LEADS)
    bits = 0
    if (quoted or cue or leads) and len(clause) >= MIN_KEY_CLAUSE:
        key = clause_hash(clause) >> 32
        for k, value in enumerate(wanted):
            if value == key:
                bits |= 1 << k
    return bits, cue or leads or clause.endswith(QUOTE_ENDS)


def strip(body: str, boilerplate: frozenset[int] | set[int]) -> str:
    """``body`` (normalized) without its boilerplate clauses, and without the short
    clauses (fewer than :data:`MIN_CLAUSE` letters and digits) right before or after
    one: the label of a disclaimer (``特别声明:``), an editor's name after a removed
    footer. Break characters around a removed clause are kept as a space, so the words
    on either side never join into new shingles that neither text had."""
    if not boilerplate or not body:
        return body
    if boilerplate.isdisjoint(split_clauses(body)[1]):
        return body  # the common case: nothing to remove, no rebuilding
    return _rebuild(body, boilerplate)


def _rebuild(body: str, boilerplate: frozenset[int] | set[int]) -> str:
    """:func:`strip`'s work once a boilerplate clause was found: in one pass through the
    C kernel when it is built (identical results: tested), else :func:`_rebuild_py`."""
    if kernel is not None:
        rebuilt: str = kernel.rebuild(body, boilerplate, MIN_CLAUSE, CLAUSE_SEED)
        return rebuilt
    return _rebuild_py(body, boilerplate)


def _rebuild_py(body: str, boilerplate: frozenset[int] | set[int]) -> str:
    pieces: list[str] = []
    breaks: list[str] = []
    last = 0
    for match in _BREAK.finditer(body):
        pieces.append(body[last : match.start()])
        breaks.append(match.group())
        last = match.end()
    pieces.append(body[last:])
    if "\x00" in body:
        keys = [_NOT_WORD.sub("", piece) for piece in pieces]
    else:  # one substitution over the whole text, not one per piece
        keys = _NOT_WORD_NOR_BREAK.sub("", "\x00".join(pieces)).split("\x00")
    removed = [len(k) >= MIN_CLAUSE and clause_hash(k) in boilerplate for k in keys]
    if not any(removed):
        return body
    drop = list(removed)
    for i, key in enumerate(keys):
        if key and len(key) < MIN_CLAUSE and (
            (i > 0 and removed[i - 1]) or (i + 1 < len(keys) and removed[i + 1])
        ):
            drop[i] = True
    parts: list[str] = []
    for i, piece in enumerate(pieces):
        if not drop[i]:
            parts.append(piece)
        if i < len(breaks):
            parts.append(" " if drop[i] or breaks[i] == " " else breaks[i])
    return " ".join("".join(parts).split())


def is_only_boilerplate(body: str, boilerplate: frozenset[int] | set[int]) -> bool:
    """Was there text, and is none of it left once the boilerplate is removed?"""
    return bool(_NOT_WORD.sub("", body)) and not _NOT_WORD.sub("", strip(body, boilerplate))


# --- counting ----------------------------------------------------------------------


def _slot_of(clause: int, slots_log2: int) -> tuple[int, int]:
    """(slot index, 16-bit check) of a clause hash; the check is never 0 (0 = empty)."""
    return clause & ((1 << slots_log2) - 1), ((clause >> 48) & 0xFFFF) or 1


@dataclass(frozen=True)
class Observation:
    promoted: list[int]  # clause hashes whose count reached min_docs just now


class MemoryCounter:
    """The slot table in process memory (batch runs, benchmarks and tests): a NumPy
    array of ``2**slots_log2`` uint32 slots counted by the C kernel when it is built.
    Same arithmetic as the Redis script of :class:`RedisCounter`."""

    def __init__(self, min_docs: int, slots_log2: int = DEFAULT_SLOTS_LOG2) -> None:
        if min_docs < 2:
            raise ValueError(f"min_docs must be at least 2, not {min_docs!r}")
        if not 1 <= slots_log2 <= 30:
            raise ValueError(f"slots_log2 must be from 1 to 30, not {slots_log2!r}")
        self.min_docs = min_docs
        self.slots_log2 = slots_log2
        self._slots = np.zeros(1 << slots_log2, dtype=np.uint32)  # check << 16 | count

    def observe(self, hashes: Sequence[int]) -> Observation:
        """Count one new story's clauses; return those that became boilerplate."""
        if kernel is not None:
            return Observation(kernel.observe(self._slots, hashes, self.slots_log2,
                                              self.min_docs))
        promoted = []
        for clause in hashes:
            # an empty slot takes the clause, the same check counts up (to 0xFFFF),
            # another check counts the holder down and takes the slot at 0
            index, check = _slot_of(clause, self.slots_log2)
            value = int(self._slots[index])
            count = value & 0xFFFF
            if count == 0:
                new = check << 16 | 1
            elif value >> 16 == check:
                new = value if count == 0xFFFF else value + 1
            else:
                new = check << 16 | 1 if count == 1 else value - 1
            self._slots[index] = new
            if new >> 16 == check and (new & 0xFFFF) == self.min_docs:
                promoted.append(clause)
        return Observation(promoted)

    def observe_many(self, stories: Sequence[Sequence[int]]) -> list[Observation]:
        return [self.observe(hashes) for hashes in stories]

    def count(self, clause: int) -> int:
        index, check = _slot_of(clause, self.slots_log2)
        value = int(self._slots[index])
        return value & 0xFFFF if value >> 16 == check else 0


# KEYS[1] = the slot table (a string of 4-byte big-endian slots); ARGV = min_docs,
# then (slot index, check) pairs. Returns the positions (1-based pairs) promoted.
_OBSERVE = """
local min_docs = tonumber(ARGV[1])
-- every distinct slot read with one BITFIELD, counted in a Lua table (a slot may come
-- back several times: stories of one batch sharing a clause), written with one more
local slots = {}
local order = {}
for i = 2, #ARGV, 2 do
  local offset = '#' .. ARGV[i]
  if slots[offset] == nil then
    slots[offset] = false
    order[#order + 1] = offset
  end
end
local args = {}
for _, offset in ipairs(order) do
  args[#args + 1] = 'GET'
  args[#args + 1] = 'u32'
  args[#args + 1] = offset
end
local values = redis.call('BITFIELD', KEYS[1], unpack(args))
for n, offset in ipairs(order) do slots[offset] = values[n] end
local promoted = {}
for i = 2, #ARGV, 2 do
  local offset = '#' .. ARGV[i]
  local check = tonumber(ARGV[i + 1])
  local value = slots[offset]
  local count = value % 65536
  local owner = math.floor(value / 65536)
  local new
  if count == 0 then
    new = check * 65536 + 1
  elseif owner == check then
    if count == 65535 then new = value else new = value + 1 end
  else
    count = count - 1
    if count == 0 then new = check * 65536 + 1 else new = owner * 65536 + count end
  end
  slots[offset] = new
  if math.floor(new / 65536) == check and new % 65536 == min_docs then
    promoted[#promoted + 1] = (i - 2) / 2
  end
end
args = {}
for _, offset in ipairs(order) do
  args[#args + 1] = 'SET'
  args[#args + 1] = 'u32'
  args[#args + 1] = offset
  args[#args + 1] = slots[offset]
end
redis.call('BITFIELD', KEYS[1], unpack(args))
return promoted
"""


class RedisCounter:
    """The slot table in one Redis string (``{namespace}:slots``, 4 bytes per slot,
    allocated as it is written), updated by one script call per batch of stories, so
    every worker counts into the same table and exactly one of them sees a promotion."""

    def __init__(self, client: Any, min_docs: int, slots_log2: int = DEFAULT_SLOTS_LOG2,
                 namespace: str = "dd:bp") -> None:
        if min_docs < 2:
            raise ValueError(f"min_docs must be at least 2, not {min_docs!r}")
        self.client = client
        self.min_docs = min_docs
        self.slots_log2 = slots_log2
        self.key = f"{namespace}:slots:{slots_log2}"
        self._script = client.register_script(_OBSERVE)

    def observe(self, hashes: Sequence[int]) -> Observation:
        return self.observe_many([hashes])[0]

    def observe_many(self, stories: Sequence[Sequence[int]],
                     pairs_per_call: int = 1_500) -> list[Observation]:
        """:meth:`observe` for several stories, in order, in as few script calls as
        their clauses allow (a worker's batch: a few round trips, not one per story).
        A call takes at most ``pairs_per_call`` clauses: its two ``BITFIELD`` commands
        stay under Lua's 8,000 arguments per ``unpack``."""
        flat = [(n, clause) for n, hashes in enumerate(stories) for clause in hashes]
        promoted: list[list[int]] = [[] for _ in stories]
        for start in range(0, len(flat), pairs_per_call):
            chunk = flat[start:start + pairs_per_call]
            args: list[int] = [self.min_docs]
            for _n, clause in chunk:
                args.extend(_slot_of(clause, self.slots_log2))
            for p in self._script(keys=[self.key], args=args):
                n, clause = chunk[int(p)]
                promoted[n].append(clause)
        return [Observation(found) for found in promoted]

    def count(self, clause: int) -> int:
        index, check = _slot_of(clause, self.slots_log2)
        value = int(self.client.execute_command(
            "BITFIELD", self.key, "GET", "u32", f"#{index}")[0])
        return value & 0xFFFF if value >> 16 == check else 0

    def clear(self) -> None:
        self.client.delete(self.key)


def clause_texts(body: str, wanted: Iterable[int]) -> dict[int, str]:
    """The clause text (letters and digits) of each wanted hash found in ``body``: what
    the admin shows for a promoted clause."""
    wanted = set(wanted)
    found: dict[int, str] = {}
    for key, h in zip(*split_clauses(body), strict=True):
        if h in wanted and h not in found:
            found[h] = key
    return found
