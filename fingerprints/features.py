"""What the engine stores per article (:class:`Features`) and its byte layout."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .sketch import Sketch

FEATURES_VERSION = 2  # 1: no weak bits (still read)


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
