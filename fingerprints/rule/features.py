"""What the engine stores per article (:class:`Features`) and its byte layout."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from fingerprints.rule.sketch import Sketch

FEATURES_VERSION = 7  # 6: no names by kind nor quoted keys; 5: no codes, chrome share or
# main body; 4: no pictures; 3: no flags; 2: no title key / short text; 1: no weak bits
# (all read). Every article is written as version 7.
MAX_PICTURES = 255  # picture hashes kept per article (the API allows far fewer)
OFF_TITLE = 1  # flags bit: the body shares no informative word with its title
CHAR_SHINGLES = 2  # flags bit: the sketch is of character shingles (a mostly-CJK body)
MAX_KEY_CHARS = 96  # letters and digits kept for the title key and a short body
_HEAD = struct.Struct("<BQQIIH")  # version, fingerprints, counts, numbers
_LENGTH = struct.Struct("<H")  # a text's UTF-8 length
_COUNT = struct.Struct("<B")  # a count or the flags
_PARTS = struct.Struct("<HH")  # version 6: the chrome share, the main bits' length
_NAMES = struct.Struct("<BH")  # version 7: names kept, names counted
_QUOTED = struct.Struct("<H")  # version 7: the quoted keys' bits


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
        """Version 7: version 6, then ``<B kept><H count>`` and the uint32 names in context,
        ``<H quoted>``. Version 6: version 5, then ``<B count>`` and the uint32 codes,
        ``<H chrome>`` (permille) and ``<H length>`` + the main body's sample bits (features
        without them: version 5 with pictures, else 4). Version 5: version 4, then ``<B count>``
        and the uint64 picture hashes. Version 4: the version-1 layout, ``<B count>`` and the
        weak-bit positions (one byte each; version 2 ends here), then the title key and the
        short text, each as ``<H length>`` + UTF-8, then ``<B count>`` and the uint32 keys
        (version 3 ends here), then ``<B flags>`` (:data:`OFF_TITLE`, :data:`CHAR_SHINGLES`)."""
        pictures = self.pictures[:MAX_PICTURES]
        title_key = self.title_key.encode("utf-8")
        short_text = self.short_text.encode("utf-8")
        count = _COUNT.pack
        version = (FEATURES_VERSION if self.has_parts and self.has_names
                   else 6 if self.has_parts else 5 if pictures else 4)
        # the parts joined once (the batch command writes every article's bytes)
        parts = [
            _HEAD.pack(version, self.title_fp, self.content_fp,
                       self.token_count, self.number_count, len(self.numbers) // 4),
            self.numbers, self.sketch.to_bytes(),
            count(len(self.weak_bits)), self.weak_bits,
            _LENGTH.pack(len(title_key)), title_key, _LENGTH.pack(len(short_text)), short_text,
            count(len(self.keys) // 4), self.keys,
            count((OFF_TITLE if self.off_title else 0)
                  | (CHAR_SHINGLES if self.char_shingles else 0)),
        ]
        if version >= 5:
            parts.append(struct.pack(f"<B{len(pictures)}Q", len(pictures), *pictures))
        if version >= 6:
            codes = (self.codes or b"")[: 4 * 255]
            parts += [count(len(codes) // 4), codes,
                      _PARTS.pack(self.chrome, len(self.main_bits)), self.main_bits]
        if version >= 7:
            names = (self.names or b"")[: 4 * 255]
            parts += [_NAMES.pack(len(names) // 4, min(self.name_count, 0xFFFF)), names,
                      _QUOTED.pack(self.quoted)]
        return b"".join(parts)

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
    ``object.__setattr__`` (1.8 µs an article). The instance's ``__dict__`` is set once,
    its keys in field order as ``__init__`` leaves them. The extraction's kernel path
    builds its features here; the NumPy reference and :meth:`Features.from_bytes` call
    the class."""
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


def _read_names(data: bytes, end: int) -> tuple[bytes, int, int]:
    """(names in context, their count, the quoted keys' bits) of a version-7 row."""
    if len(data) < end + 3:
        raise ValueError("truncated features (names)")
    kept, count = _NAMES.unpack_from(data, end)
    names = data[end + 3 : end + 3 + 4 * kept]
    if len(names) != 4 * kept or len(data) < end + 3 + 4 * kept + 2:
        raise ValueError("truncated features (names, quoted keys)")
    (quoted,) = _QUOTED.unpack_from(data, end + 3 + 4 * kept)
    return names, count, quoted
