"""What is stored per article (fingerprints/rule/features.py): bytes that read back, and
stay small."""

from fingerprints.rule import Features, extract

from ..texts import STORY


def test_features_round_trip_through_bytes() -> None:
    features = extract("统计局：工业生产稳中有升", STORY)
    data = features.to_bytes()
    assert isinstance(data, bytes)
    assert Features.from_bytes(data) == features
    assert Features.from_bytes(memoryview(data)) == features


def test_features_stay_compact() -> None:
    assert len(extract("统计局：工业生产稳中有升", STORY * 4).to_bytes()) < 1200


def test_features_of_builds_the_same_instance_as_the_dataclass() -> None:
    import copy
    import pickle
    from dataclasses import astuple, fields, replace

    from fingerprints.rule.features import features_of

    for features in (
        extract("统计局：工业生产稳中有升", STORY),
        extract("", ""),
        replace(extract("标题", STORY), pictures=(3, 1 << 63)),
    ):
        values = [getattr(features, f.name) for f in fields(Features)]
        made, fast = Features(*values), features_of(*values)
        assert type(fast) is Features
        assert fast == made and hash(fast) == hash(made) and repr(fast) == repr(made)
        assert list(vars(fast).items()) == list(vars(made).items())  # order too
        assert pickle.dumps(fast) == pickle.dumps(made)
        assert fast.to_bytes() == made.to_bytes() and astuple(fast) == astuple(made)
        assert copy.copy(fast) == made and replace(fast, title_fp=1) == replace(made, title_fp=1)


def _former_bytes(features: Features) -> bytes:
    """The version 4-7 layout written field by field with struct, as to_bytes did before
    its values went through one pack call: the bytes must not change."""
    import struct

    f = features
    pictures = f.pictures[:255]
    version = 7 if f.has_parts and f.has_names else 6 if f.has_parts else 5 if pictures else 4
    title_key, short_text = f.title_key.encode(), f.short_text.encode()
    out = struct.pack("<BQQIIH", version, f.title_fp, f.content_fp, f.token_count,
                      f.number_count, len(f.numbers) // 4) + f.numbers
    out += struct.pack("<BIH", f.sketch.level, f.sketch.shingles,
                       len(f.sketch.samples) // 4) + f.sketch.samples
    out += struct.pack("<B", len(f.weak_bits)) + f.weak_bits
    out += struct.pack("<H", len(title_key)) + title_key
    out += struct.pack("<H", len(short_text)) + short_text
    out += struct.pack("<B", len(f.keys) // 4) + f.keys
    out += struct.pack("<B", f.off_title | f.char_shingles << 1)
    if version >= 5:
        out += struct.pack(f"<B{len(pictures)}Q", len(pictures), *pictures)
    if version >= 6:
        codes = (f.codes or b"")[:1020]
        out += struct.pack("<B", len(codes) // 4) + codes
        out += struct.pack("<HH", f.chrome, len(f.main_bits)) + f.main_bits
    if version >= 7:
        names = (f.names or b"")[:1020]
        out += struct.pack("<HB", min(f.name_count, 0xFFFF), len(names) // 4) + names
        out += struct.pack("<H", f.quoted)
    return out


def test_to_bytes_writes_the_layout_of_each_version() -> None:
    from dataclasses import replace

    from fingerprints.rule.features import pack_py

    full = extract("统计局：工业生产稳中有升", STORY)
    assert full.has_parts and full.has_names
    for features in (
        full, extract("", ""), extract("Budget vote", "The budget passed 52 to 48."),
        replace(full, pictures=(3, 1 << 63, 2**64 - 1)),
        replace(full, pictures=tuple(range(300))),  # kept: the first 255
        replace(full, names=None, quoted=None),  # version 6
        replace(full, names=b"\x01\x00\x00\x00" * 300, name_count=70_000),  # kept: 255
        replace(full, codes=None, chrome=None),  # version 5 with pictures, else 4
        replace(full, codes=None, chrome=None, pictures=(7,)),
        replace(full, title_key="标题ab", short_text="正文", off_title=True, keys=b""),
    ):
        data = features.to_bytes()
        assert data == _former_bytes(features)
        # the Python reference gives the same bytes as the kernel's pack
        values = _pack_values(features)
        assert pack_py(*values) == data
        again = Features.from_bytes(data)
        assert again.to_bytes() == data


def _pack_values(f: Features) -> tuple[object, ...]:
    from fingerprints.rule.features import LAYOUTS

    version = 7 if f.has_parts and f.has_names else 6 if f.has_parts else 5 if f.pictures else 4
    return (LAYOUTS[version], version, f.title_fp, f.content_fp, f.token_count,
            f.number_count, f.numbers, f.sketch.level, f.sketch.shingles, f.sketch.samples,
            f.weak_bits, f.title_key, f.short_text, f.keys,
            f.off_title | f.char_shingles << 1, f.pictures[:255], (f.codes or b"")[:1020],
            f.chrome, f.main_bits, min(f.name_count, 0xFFFF), (f.names or b"")[:1020],
            f.quoted)


def test_the_kernels_pack_gives_pack_pys_bytes_and_refusals() -> None:
    import random

    import numpy as np
    import pytest

    from fingerprints.rule.features import pack_py
    from fingerprints.rule.kernel import kernel

    if kernel is None:
        pytest.skip("the C kernel is not built")
    rng = random.Random(6)
    widths = {"B": 8, "H": 16, "I": 32, "Q": 64}
    for _ in range(300):
        layout, values = "", []
        for _ in range(rng.randrange(0, 12)):
            code = rng.choice(["B", "H", "I", "Q", "b1", "b4", "h1", "h4", "b8"])
            layout += code
            if code in widths:
                values.append(rng.getrandbits(widths[code]))
            elif code == "b8":
                values.append(tuple(rng.getrandbits(64) for _ in range(rng.randrange(4))))
            elif code.endswith("1") and rng.random() < 0.3:
                values.append("".join(rng.choice("ab标题😀") for _ in range(rng.randrange(5))))
            else:
                values.append(rng.randbytes(int(code[1]) * rng.randrange(6)))
        extra = [rng.getrandbits(8)] * rng.randrange(3)  # values beyond the layout: unread
        assert kernel.pack(layout, *values, *extra) == pack_py(layout, *values, *extra)
    # what struct.pack takes: __index__, bools, buffers, lists of ints
    odd = ("BQh1h4b8", np.uint8(7), True, bytearray(b"xy"), memoryview(b"abcd"), [1, 2])
    assert kernel.pack(*odd) == pack_py(*odd)
    for refused in (("B", 256), ("H", -1), ("Q", 2**64), ("b4", b"abc"), ("b1", bytes(256)),
                    ("h4", bytes(4 * 65536)), ("b8", tuple(range(256))), ("B",), ("x", 1),
                    ("h8", b""), ("B", "1")):
        for pack in (kernel.pack, pack_py):
            with pytest.raises((ValueError, OverflowError, TypeError, struct_error())):
                pack(*refused)


def struct_error() -> type[Exception]:
    import struct

    return struct.error
