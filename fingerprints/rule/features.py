"""What the engine stores per article (:class:`Features`) and its byte layout."""

from __future__ import annotations

import operator
import re
import struct
from dataclasses import dataclass, field, fields
from typing import Any

from fingerprints.rule.kernel import kernel
from fingerprints.rule.sketch import Sketch

FEATURES_VERSION = 7  # 6: no names by kind nor quoted keys; 5: no codes, chrome share or
# main body; 4: no pictures; 3: no flags; 2: no title key / short text; 1: no weak bits
# (all read). Every article is written as version 7.
MAX_PICTURES = 255  # picture hashes kept per article (the API allows far fewer)
OFF_TITLE = 1  # flags bit: the body shares no informative word with its title
CHAR_SHINGLES = 2  # flags bit: the sketch is of character shingles (a mostly-CJK body)
MAX_KEY_CHARS = 96  # letters and digits kept for the title key and a short body
# Each version's bytes, one code a value of to_bytes's call (pack_py says the codes):
# version, title and content fingerprints, token and number counts, the numbers; the
# sketch's level, shingles and samples; the weak bits, the title key, the short text,
# the keys, the flags; version 5: the pictures; version 6: the codes, the chrome share,
# the main body's bits; version 7: the names' count, the names kept, the quoted keys'
# bits. A version's layout begins with the one before it.
_V4 = "BQQIIh4" "BIh4" "b1h1h1b4B"
LAYOUTS = {4: _V4, 5: _V4 + "b8", 6: _V4 + "b8" "b4Hh1", 7: _V4 + "b8" "b4Hh1" "Hb4H"}


def pack_py(layout: str, *values: Any) -> bytes:
    """``values`` as ``layout`` says, one code each (values beyond its codes are not
    read): ``B H I Q`` an int as an unsigned little-endian integer of 1, 2, 4 or 8
    bytes; ``b1 b4 h1 h4`` bytes (a str: its UTF-8) after their count in units of 1 or
    4 bytes as a ``<B`` (b) or ``<H`` (h); ``b8`` a sequence of ints after its ``<B``
    count, each as a ``Q``. The reference of the kernel's ``pack`` (``_pack.h``), which
    gives the same bytes; a value that does not fit raises."""
    codes = re.findall(r"[BHIQ]|[bh][148]|.", layout)
    if len(codes) > len(values):
        raise TypeError(f"the layout {layout} has more codes than the {len(values)} values")
    parts = []
    for code, value in zip(codes, values, strict=False):
        if code in ("B", "H", "I", "Q"):
            parts.append(struct.pack("<" + code, value))
        elif code == "b8":
            parts.append(struct.pack(f"<B{len(value)}Q", len(value), *value))
        elif code in ("b1", "b4", "h1", "h4"):
            data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
            unit = int(code[1])
            if len(data) % unit:
                raise ValueError(f"{len(data)} bytes are not a count of {unit}-byte units")
            parts += [struct.pack("<" + code[0].upper(), len(data) // unit), data]
        else:
            raise ValueError(f"bad layout {layout!r}")
    return b"".join(parts)


_pack: Any = kernel.pack if kernel is not None else pack_py


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
    # The title's and a short body's letters and digits (normalized, desk tag removed;
    # at most MAX_KEY_CHARS; the body only when it is that short, else ""): what the
    # title-only and short-text rules compare character by character. Empty in v1/v2 rows.
    title_key: str = ""
    short_text: str = ""
    # Exact-match keys (fingerprints/stores/key_index.py): sorted uint32, the smallest clause
    # hashes of the body (or a short body's head and tail); the first few are indexed,
    # all are looked up. Empty in v1/v2 rows.
    keys: bytes = b""
    # The body shares no informative word with a title of at least two: a redirect
    # page, a site footer or a disclaimer crawled as the body (verify's title-only rule
    # decides two such pages). False in v1-v3 rows.
    off_title: bool = False
    # The sketch is of character 5-grams (the body is mostly CJK): verify's CJK
    # containment rule applies. False in v1-v3 rows.
    char_shingles: bool = False
    # The 64-bit perceptual hashes of the article's pictures that were read (sorted,
    # distinct; articles/images/): evidence in verify's picture rules. Empty for an
    # article without pictures, and until its pictures are fetched.
    pictures: tuple[int, ...] = ()
    # The body's codes in context, its chrome share (permille) and which sketch samples
    # are of its main body (fingerprints/rule/main_body.py). None for codes and chrome
    # in rows before version 6: the comparisons that read them are missing.
    codes: bytes | None = None
    chrome: int | None = None
    main_bits: bytes = b""
    # Version 7: the body's names in context by kind (sorted uint32 ``context << 16 |
    # kind << 14 | rarity << 10 | name hash``, the smallest vocabulary.MAX_NAMES kept),
    # how many distinct ones it has, and which of its keys are quoted (bit i: the i-th
    # key; boilerplate.quoted_keys). None in older rows: the comparisons are missing.
    names: bytes | None = None
    name_count: int = 0
    quoted: int | None = None

    @property
    def has_parts(self) -> bool:
        """Were the codes, the chrome share and the main body measured (version 6)?"""
        return self.codes is not None and self.chrome is not None

    @property
    def has_names(self) -> bool:
        """Were the names by kind and the quoted keys measured (version 7)?"""
        return self.names is not None and self.quoted is not None

    def to_bytes(self) -> bytes:
        """Version 7: version 6, then ``<H count>`` of the names in context, ``<B kept>``
        and the uint32 names kept, ``<H quoted>``. Version 6: version 5, then ``<B count>``
        and the uint32 codes, ``<H chrome>`` (permille) and ``<H length>`` + the main
        body's sample bits (features without the names: version 6; without the codes
        either: version 5 with pictures, else 4). Version 5: version 4, then ``<B count>``
        and the uint64 picture hashes. Version 4: the version-1 layout, ``<B count>`` and
        the weak-bit positions (one byte each; version 2 ends here), then the title key and
        the short text, each as ``<H length>`` + UTF-8, then ``<B count>`` and the uint32
        keys (version 3 ends here), then ``<B flags>`` (:data:`OFF_TITLE`,
        :data:`CHAR_SHINGLES`). :data:`LAYOUTS` says it code by code, one code a value
        below; one call of the kernel's ``pack`` joins them (:func:`pack_py` without it).

        The fields are read as attributes: the extraction's features hold them in their
        inline values (``features_of``), which ``field_values`` would first copy into a
        ``__dict__`` (2.5 thousand instructions an article of the batch command's writing,
        with the dict's 19 lookups)."""
        codes, chrome, names, quoted = self.codes, self.chrome, self.names, self.quoted
        pictures, sketch = self.pictures, self.sketch
        has_parts = codes is not None and chrome is not None
        version = (FEATURES_VERSION if has_parts and names is not None and quoted is not None
                   else 6 if has_parts else 5 if pictures else 4)
        return _pack(
            LAYOUTS[version], version, self.title_fp, self.content_fp, self.token_count,
            self.number_count, self.numbers, sketch.level, sketch.shingles, sketch.samples,
            self.weak_bits, self.title_key, self.short_text, self.keys,
            (OFF_TITLE if self.off_title else 0) | (CHAR_SHINGLES if self.char_shingles else 0),
            pictures[:MAX_PICTURES],  # version 5 on
            (codes or b"")[: 4 * 255], chrome, self.main_bits,  # version 6
            min(self.name_count, 0xFFFF), (names or b"")[: 4 * 255], quoted,  # version 7
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> Features:
        """Reads versions 7 (names by kind, quoted keys), 6 (codes, chrome, main body; no names by
        kind nor quoted keys: their comparisons are missing), 5 (pictures; no codes, chrome or
        main body: the comparisons that read them are missing), 4 (none), 3 (no flags: not
        off-title), 2 (no title key or short text: the title-only and short-text rules see
        nothing to compare) and 1 (rows written before multi-probe lookups: no weak bits, so
        :func:`content_probes` returns nothing for them)."""
        data = bytes(data)
        version = data[0] if data else None
        if version not in (1, 2, 3, 4, 5, 6, FEATURES_VERSION):
            raise ValueError(f"unknown features version {version!r}")
        _, title_fp, content_fp, tokens, number_count, n = struct.unpack_from("<BQQIIH", data)
        offset = struct.calcsize("<BQQIIH")
        numbers = data[offset : offset + 4 * n]
        sketch, end = Sketch.from_bytes(data, offset + 4 * n)
        weak = b""
        texts = ["", ""]
        keys = b""
        if version >= 2:
            (count,) = struct.unpack_from("<B", data, end)
            weak = data[end + 1 : end + 1 + count]
            if len(weak) != count or any(bit > 63 for bit in weak):
                raise ValueError("truncated or invalid features (weak bits)")
            end += 1 + count
        if version >= 3:
            for i in range(2):
                (size,) = struct.unpack_from("<H", data, end)
                raw = data[end + 2 : end + 2 + size]
                if len(raw) != size:
                    raise ValueError("truncated features (title key or short text)")
                texts[i] = raw.decode("utf-8")
                end += 2 + size
            (count,) = struct.unpack_from("<B", data, end)
            keys = data[end + 1 : end + 1 + 4 * count]
            if len(keys) != 4 * count:
                raise ValueError("truncated features (keys)")
            end += 1 + 4 * count
        flags = 0
        if version >= 4:
            if end >= len(data):
                raise ValueError("truncated features (flags)")
            flags = data[end]
            end += 1
        pictures: tuple[int, ...] = ()
        if version >= 5:
            if end >= len(data) or len(data) < end + 1 + 8 * data[end]:
                raise ValueError("truncated features (pictures)")
            pictures = struct.unpack_from(f"<{data[end]}Q", data, end + 1)
            end += 1 + 8 * data[end]
        codes, chrome, main_bits, names, name_count, quoted = _read_tail(data, end, version)
        return cls(title_fp, content_fp, tokens, sketch, numbers, number_count, weak,
                   texts[0], texts[1], keys, bool(flags & OFF_TITLE),
                   bool(flags & CHAR_SHINGLES), pictures, codes, chrome, main_bits,
                   names, name_count, quoted)


_FIELD_NAMES = tuple(f.name for f in fields(Features))
_values_of = operator.itemgetter(*_FIELD_NAMES)


def field_values(features: Features) -> tuple[Any, ...]:
    """The fields' values in field order, read from the instance's dict in one
    ``itemgetter`` call instead of 19 attribute reads (to_bytes's Python, round 6 of the
    batch command: results/log.md). Equal tuples for equal features (the dataclass's
    ``__eq__`` and ``__hash__`` compare this tuple), so it can stand for them as a key."""
    return _values_of(features.__dict__)


_instance: Any = kernel.instance if kernel is not None else None


def features_of(
    title_fp: int, content_fp: int, token_count: int, sketch: Sketch, numbers: bytes,
    number_count: int, weak_bits: bytes, title_key: str, short_text: str, keys: bytes,
    off_title: bool, char_shingles: bool, pictures: tuple[int, ...],
    codes: bytes | None = None, chrome: int | None = None, main_bits: bytes = b"",
    names: bytes | None = None, name_count: int = 0, quoted: int | None = None,
    _new: Any = object.__new__, _set: Any = object.__setattr__,
) -> Features:
    """``Features(...)`` with every field given, in field order: the same instance (equal,
    same hash, pickle, repr and bytes: a test compares them) without the frozen
    dataclass's ``__init__``, which sets each of the 19 fields through
    ``object.__setattr__``. With the kernel, its ``instance`` sets them from C in the
    instance's inline values (no dict per instance; 2k instructions an article against 11k
    for setting a dict of them as the ``__dict__``, the way without the kernel). The
    extraction's kernel path builds its features here; the NumPy reference and
    :meth:`Features.from_bytes` call the class."""
    if _instance is not None:
        made: Features = _instance(
            Features, _FIELD_NAMES, title_fp, content_fp, token_count, sketch, numbers,
            number_count, weak_bits, title_key, short_text, keys, off_title, char_shingles,
            pictures, codes, chrome, main_bits, names, name_count, quoted)
        return made
    new = _new(Features)
    _set(new, "__dict__", {
        "title_fp": title_fp, "content_fp": content_fp, "token_count": token_count,
        "sketch": sketch, "numbers": numbers, "number_count": number_count,
        "weak_bits": weak_bits, "title_key": title_key, "short_text": short_text,
        "keys": keys, "off_title": off_title, "char_shingles": char_shingles,
        "pictures": pictures, "codes": codes, "chrome": chrome, "main_bits": main_bits,
        "names": names, "name_count": name_count, "quoted": quoted,
    })
    return new


def _read_tail(data: bytes, end: int, version: int
               ) -> tuple[bytes | None, int | None, bytes, bytes | None, int, int | None]:
    """(codes, chrome, main bits, names, name count, quoted) of a row of ``version``
    from ``end``: what an older version lacks is None (b"" and 0 for the main bits and
    the name count)."""
    if version < 6:
        return None, None, b"", None, 0, None
    codes, chrome, main_bits, end = _read_parts(data, end)
    if version < 7:
        return codes, chrome, main_bits, None, 0, None
    return (codes, chrome, main_bits, *_read_names(data, end))


def _read_parts(data: bytes, end: int) -> tuple[bytes, int, bytes, int]:
    """(codes, chrome, main-body bits, where they end) of a version-6 row, read from
    ``end``."""
    if end >= len(data) or len(data) < end + 1 + 4 * data[end] + 4:
        raise ValueError("truncated features (codes, chrome)")
    codes = data[end + 1 : end + 1 + 4 * data[end]]
    end += 1 + 4 * data[end]
    chrome, size = struct.unpack_from("<HH", data, end)
    main_bits = data[end + 4 : end + 4 + size]
    if len(main_bits) != size:
        raise ValueError("truncated features (main body)")
    return codes, chrome, main_bits, end + 4 + size


_NAMES = struct.Struct("<HB")  # version 7: names counted, names kept
_QUOTED = struct.Struct("<H")  # version 7: the quoted keys' bits


def _read_names(data: bytes, end: int) -> tuple[bytes, int, int]:
    """(names in context, their count, the quoted keys' bits) of a version-7 row."""
    if len(data) < end + 3:
        raise ValueError("truncated features (names)")
    count, kept = _NAMES.unpack_from(data, end)
    names = data[end + 3 : end + 3 + 4 * kept]
    if len(names) != 4 * kept or len(data) < end + 3 + 4 * kept + 2:
        raise ValueError("truncated features (names, quoted keys)")
    (quoted,) = _QUOTED.unpack_from(data, end + 3 + 4 * kept)
    return names, count, quoted
