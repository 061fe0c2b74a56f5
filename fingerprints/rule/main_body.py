"""What a body is made of, beyond its words: codes, chrome and the main body.

Three per-article measures of engine v4's comparison vector
(:mod:`fingerprints.rule.comparison`), computed from the normalized body after the
learned boilerplate is removed, the same way whichever path cut the words (the C
kernel or the NumPy reference), so both give the same bytes:

* **codes in context**: phone numbers, order numbers and other runs of at least
  :data:`MIN_CODE_DIGITS` digits (separators inside kept together), and model codes
  (a run of letters and digits with a letter before a digit, at least
  :data:`MIN_CODE_CHARS` long: "99th" or "200m" is a quantity),
  each with the two characters before it and compared by its digits: the one thing a
  template for another company, contact person or product model changes. Addresses (``http://...``,
  ``www...``) are left out: a repost on another site carries another one.
* **lead and tail chrome**: the clauses at the body's start and end that carry a
  marker of a site's furniture (a "follow us" header, a source or editor line, a
  copyright footer: :data:`CHROME_MARKERS`), at most half of the body. What remains is
  the *main body*: a cut repost under a WeChat header and footer is contained in its
  original once the header and footer are set aside.
* **chrome share**: the share of the normalized body's characters that is chrome
  (learned boilerplate removed before, lead and tail chrome here), in permille.

The C kernel (``kernel.body_parts``, :mod:`fingerprints.rule.kernel`) computes the
same bytes in one pass when it is built (the code scan, the clause walk, the sketches of
the lead and the tail and the sample bits; tests/fingerprints/rule/test_kernel.py
compares them on the five corpora and on generated texts); :func:`body_parts_py` is
the reference and the fallback.

Pure: no I/O, no state.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import mmh3
import numpy as np

from fingerprints.rule.kernel import kernel
from fingerprints.rule.sketch import _KEEP, CJK_SHINGLE, Sketch

MAX_CODES = 32  # codes kept per article (the smallest values)
MIN_CODE_DIGITS = 7  # a run of digits this long is a code (phone, order or case number)
MIN_CODE_CHARS = 4  # a run of letters and digits with both, this long, is a model code
CODE_SEED = 0xC0DE5
# clauses that mark a site's furniture when they stand at the start or the end of a body
CHROME_MARKERS = (
    "关注", "点击", "原标题", "来源", "作者", "编辑", "记者", "转载", "公众号", "微信",
    "订阅", "置顶", "星标", "阅读", "推荐", "版权", "声明", "扫码", "二维码", "长按",
    "分享", "来自", "摘要", "导读", "粉丝", "回复", "微博", "广告", "投稿", "热线",
    "侵权", "免责",
    "http", "www", ".com", ".cn",
)
MAX_CHROME_SHARE = 0.5  # lead and tail chrome never take more than half of a body ...
SHORT_BODY = 60  # ... unless the body is this short: a stub can be chrome through
MAX_CHROME_CLAUSE = 60  # a longer clause is the article, whatever it mentions
LABEL_CHARS = 8  # a clause this short next to a chrome clause is its label or value
REACH = LABEL_CHARS + MAX_CHROME_CLAUSE  # the first chrome clause ends within this

CHROME_WINDOW = 600  # characters read at each end of a body for its lead and tail chrome

_ADDRESS = re.compile(r"https?://|www\.|[a-z0-9.-]+\.(?:com|cn|net|org)\b")
# a run of MIN_CODE_DIGITS digits or more (one separator between two), or a run of
# letters, digits and hyphens in which a letter and a digit meet
_CODE = re.compile(rf"(?P<digits>(?<![a-z0-9])\d(?:[-= ]?\d){{{MIN_CODE_DIGITS - 1},}}(?![a-z0-9]))"
                   r"|(?P<model>(?<![a-z0-9-])[a-z0-9-]*(?:[a-z]-?\d|\d-?[a-z])[a-z0-9-]*)")
_SEPARATORS = re.compile(r"[-= ]")
# a code is compared by its digits: a repost re-spaces the latin words around a code and
# glues them on ("mwc2018 barcelona", "mwc2018barcelona"; "2018e pb", "2018ep/b"), a
# template for another item, contact or company changes its number
_NOT_DIGIT = re.compile(r"[^0-9]")
# a date or a time stamp written as one number: yyyymmdd, then the hour, minutes and
# seconds, each optional after the one before ("2018-12-26 02:40" gives 2018122602)
_DATE = re.compile(r"(?:19|20)\d\d[01]\d[0-3]\d(?:[0-2]\d(?:[0-5]\d(?:[0-5]\d)?)?)?")
_MARKER = re.compile("|".join(re.escape(marker) for marker in CHROME_MARKERS))
_MARKER_REVERSED = re.compile("|".join(re.escape(marker[::-1]) for marker in CHROME_MARKERS))
# a run of letters, digits and separators; crawled text keeps a line break as the two
# characters "\\n" (or "\\r", "\\t"): that letter is matched alone (no code in it), so
# that "\\n2018" is not the model code "n2018"
_RUN = re.compile(r"(?<=\\)[nrt](?=[a-z0-9])|[a-z0-9][a-z0-9=\- ]{3,}")
_LETTER = re.compile(r"[a-z]")
# a model code has a letter before a digit (hd-2000, yh-35gw, mh370); digits followed by
# letters alone are a quantity, a number with its unit or ordinal (99th, 200m, 30million,
# 2018e), which the numbers in context compare
_LETTER_DIGIT = re.compile(r"[a-z]-?\d")
# clauses end at a sentence's or a phrase's punctuation, white space or a "\n" left
# as two characters in crawled text
# a clause: letters and the like up to a sentence's or a phrase's punctuation, white
# space or a backslash (crawled text keeps "\n" as two characters); the same read
# backwards for the tail
_ENDS = r"。！？!?；;，,：:\s\\"
_CLAUSE = re.compile(f"[^{_ENDS}]*[{_ENDS}]+|[^{_ENDS}]+")
_CLAUSE_REVERSED = re.compile(f"[{_ENDS}]*[^{_ENDS}]+|[{_ENDS}]+")


class BodyParts(NamedTuple):
    """The per-article measures of this module (see the module's docstring)."""

    codes: bytes  # sorted uint32: hash16(context) << 16 | hash16(code), the smallest kept
    chrome: int  # permille of the normalized body that is chrome
    main_bits: bytes  # one bit per sketch sample, set when it is a shingle of the main
    # body (little-endian bit order); b"" when the main body is the whole body


def codes_in_context(body: str) -> bytes:
    """The body's codes in context, packed and sorted (see the module's docstring)."""
    values = set()
    for run in _RUN.finditer(body):  # a cheap scan first: most bodies have few runs
        text = run.group()
        if len(text) < MIN_CODE_DIGITS and _LETTER.search(text) is None:
            continue  # a short number (a year, a count): no code in it
        for found in _CODE.finditer(text):
            if found.lastgroup == "digits":
                code = _SEPARATORS.sub("", found.group())
                if _DATE.fullmatch(code):
                    continue  # a date or a time stamp written as one number
            else:
                code = found.group().strip("-")
                if len(code) < MIN_CODE_CHARS or _LETTER_DIGIT.search(code) is None:
                    continue  # short, or a quantity: a number with its unit or ordinal
            start = run.start() + found.start()
            if _inside_address(body, start):
                continue
            # the context's UTF-8 bytes: a lone surrogate raises here (mmh3 5.3 given
            # such a str crashes the process)
            context = body[max(0, start - 2) : start].encode()
            values.add((mmh3.hash(context, seed=CODE_SEED, signed=False) & 0xFFFF) << 16
                       | (mmh3.hash(_NOT_DIGIT.sub("", code), seed=CODE_SEED, signed=False)
                          & 0xFFFF))
    return np.array(sorted(values)[:MAX_CODES], dtype="<u4").tobytes()


def _inside_address(body: str, at: int) -> bool:
    """Is ``at`` inside a web address (``http://...``, ``www...``, ``x.com/...``)?"""
    lo = at
    # printable ASCII before it; a colon ends the walk unless "//" follows it ("来自:" in
    # front of "tieba.baidu.com/p/..." is a label, "http://" an address)
    while lo > 0 and "!" <= body[lo - 1] <= "~" and not (
            body[lo - 1] == ":" and not body.startswith("//", lo)):
        lo -= 1
    return _ADDRESS.match(body, lo) is not None


def main_span(body: str) -> tuple[int, int]:
    """(start, end) of the main body: ``body`` without its lead and tail clauses that
    carry a chrome marker, at most :data:`MAX_CHROME_SHARE` of it (all of a body of
    at most :data:`SHORT_BODY` characters). Only the first and the last
    :data:`CHROME_WINDOW` characters are read, clause by clause from each end until
    one is not chrome."""
    n = len(body)
    if not n:
        return 0, 0
    budget = n if n <= SHORT_BODY else MAX_CHROME_SHARE * n
    # no marker where the first chrome clause would have one: no lead (the common case)
    start = (_chrome_run(body[:CHROME_WINDOW], _CLAUSE, _MARKER, budget)
             if _MARKER.search(body, 0, REACH) else 0)
    if not _MARKER.search(body, max(start, n - REACH)):
        return start, n
    tail = body[max(start, n - CHROME_WINDOW) :][::-1]
    end = n - _chrome_run(tail, _CLAUSE_REVERSED, _MARKER_REVERSED, budget - start)
    return start, max(start, end)


def _chrome_run(text: str, clause: re.Pattern[str], marker: re.Pattern[str], budget: float
                ) -> int:
    """How many characters at the start of ``text`` are chrome clauses (a marked
    clause, or a few characters next to one: "来自:" "百度贴吧"), within ``budget``."""
    clauses = clause.finditer(text)
    previous_marked = False
    end = 0
    current = next(clauses, None)
    while current is not None and current.end() <= budget:
        following = next(clauses, None)
        size = current.end() - current.start()
        marked = size <= MAX_CHROME_CLAUSE and marker.search(current.group()) is not None
        if not marked and not (size <= LABEL_CHARS and (
                previous_marked or (following is not None
                                    and following.end() - following.start() <= MAX_CHROME_CLAUSE
                                    and marker.search(following.group()) is not None))):
            break
        if following is None and len(text) == CHROME_WINDOW:
            break  # the window's last clause may go on beyond it
        end, previous_marked, current = current.end(), marked, following
    return end


def body_parts(normalized: str, body: str, sketch: Sketch) -> BodyParts:
    """:func:`body_parts_py` through the C kernel when it is built (the same bytes)."""
    if kernel is not None:
        return BodyParts(*kernel.body_parts(body, len(normalized), sketch.samples, _KEEP))
    return body_parts_py(normalized, body, sketch)


def body_parts_py(normalized: str, body: str, sketch: Sketch) -> BodyParts:
    """:class:`BodyParts` of a body (``body``: the normalized text ``normalized``
    without its learned boilerplate; ``sketch``: the body's sketch). A sample is of the
    chrome when its shingle is one of the lead's or the tail's (each with the
    :data:`CJK_SHINGLE` - 1 characters next to it): their sketches hold every sampled
    shingle of theirs, their levels being at most the body's. The reference: NumPy and
    :meth:`Sketch.from_text`, no kernel."""
    start, end = main_span(body)
    removed = len(normalized) - len(body) + start + len(body) - end
    chrome = round(1000 * removed / len(normalized)) if normalized else 0
    bits = b""
    if (start or end < len(body)) and sketch.samples:
        edge = CJK_SHINGLE - 1
        samples = sketch.values()
        main = np.ones(len(samples), dtype=np.bool_)
        for piece in (body[: start + edge] if start else "",
                      body[max(0, end - edge) :] if end < len(body) else ""):
            chrome_samples = Sketch.from_text(piece).values() if piece else samples[:0]
            if len(chrome_samples):  # both sorted: a sample of the chrome is found in place
                at = np.minimum(np.searchsorted(chrome_samples, samples), len(chrome_samples) - 1)
                main &= chrome_samples[at] != samples
        bits = np.packbits(main, bitorder="little").tobytes()
    return BodyParts(codes_in_context(body), min(1000, max(0, chrome)), bits)


def main_mask(bits: bytes, count: int) -> np.ndarray:
    """The boolean mask of the ``count`` sketch samples that are of the main body."""
    if not bits:
        return np.ones(count, dtype=np.bool_)
    return np.unpackbits(np.frombuffer(bits, dtype=np.uint8), bitorder="little",
                         count=count).astype(np.bool_)
