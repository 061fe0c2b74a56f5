from __future__ import annotations

import numpy as np
import pytest

from fingerprints.rule.ids import (
    MASK64,
    make_doc_id,
    splitmix64_finalize,
    to_signed,
    to_unsigned,
    url_hash,
)


@pytest.mark.parametrize("value", [0, 1, (1 << 63) - 1, 1 << 63, MASK64, 0x8000_0000_0000_0001])
def test_signed_and_unsigned_keep_the_bits(value: int) -> None:
    signed = to_signed(value)
    assert -(1 << 63) <= signed < 1 << 63
    assert signed & MASK64 == value
    assert to_unsigned(signed) == value


def test_the_sign_bit_decides_the_sign() -> None:
    assert to_signed(1 << 63) == -(1 << 63)
    assert to_signed(MASK64) == -1
    assert to_unsigned(-1) == MASK64


def test_doc_ids_are_two_hex_words_and_salted_on_request() -> None:
    doc_id = make_doc_id("nid-1")
    high, low = doc_id.split("-")
    assert len(high) == len(low) == 16 and int(high, 16) >= 0 and int(low, 16) >= 0
    assert make_doc_id("nid-1") == doc_id
    assert make_doc_id("nid-1", "#1") not in (doc_id, make_doc_id("nid-2"))


@pytest.mark.parametrize("nid, salt",
                         [("nid-1", ""), ("nid-1", "#1"), ("", ""), ("新华社-7", "#12")])
def test_a_doc_id_is_the_128_bit_hash_in_32_hex_digits(nid: str, salt: str) -> None:
    import mmh3

    from fingerprints.rule.ids import DOC_ID_SEED

    digits = f"{mmh3.hash128((nid + salt).encode(), seed=DOC_ID_SEED, signed=False):032x}"
    assert make_doc_id(nid, salt) == f"{digits[:16]}-{digits[16:]}"


def test_url_hashes_follow_the_canonical_url() -> None:
    assert url_hash("https://News.example/a?utm_source=x&b=2") == url_hash(
        "https://news.example/a?b=2")
    assert url_hash("https://news.example/a") != url_hash("https://news.example/b")
    assert 0 <= url_hash("https://news.example/a") <= MASK64


def test_splitmix64_matches_the_reference_and_leaves_its_input_alone() -> None:
    def reference(x: int) -> int:
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9 & MASK64
        x = (x ^ (x >> 27)) * 0x94D049BB133111EB & MASK64
        return x ^ (x >> 31)

    values = np.array([0, 1, 2, 12345, MASK64, 1 << 63], dtype=np.uint64)
    before = values.copy()
    mixed = splitmix64_finalize(values)
    assert mixed.tolist() == [reference(int(v)) for v in before]
    assert values.tolist() == before.tolist()


def test_an_unused_doc_id_is_salted_only_while_taken() -> None:
    from fingerprints.rule.ids import unused_doc_id

    assert unused_doc_id("n", lambda _doc_id: False) == make_doc_id("n")
    taken = {make_doc_id("n"), make_doc_id("n", "#1")}
    assert unused_doc_id("n", taken.__contains__) == make_doc_id("n", "#2")
