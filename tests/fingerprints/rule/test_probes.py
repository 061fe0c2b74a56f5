"""Multi-probe content lookups: ``content_probes`` and ``decide`` on the hits they add."""

import struct
from dataclasses import replace

import pytest

from fingerprints.rule import (
    Candidate,
    EngineConfig,
    Features,
    content_probes,
    decide,
    extract,
    verify,
)
from fingerprints.rule.blocks import block_layout
from fingerprints.rule.simhash import hamming
from fingerprints.stores.block_index import MemoryBlockIndex

from ..texts import BULLETIN_1, BULLETIN_2, OTHER, STORY

CONFIG = EngineConfig()
OLD_REACH = EngineConfig(probe_bits=0)  # the index lookups before multi-probe

# A repost of STORY with a few words inserted (an editor's touch-up): its SimHash is 8 bits
# away and shares no 16-bit block with STORY's, so the plain lookup never proposes it.
EDITED = STORY.replace("今年前两个月", "首次今年前持续两个持续月").replace("高技术", "高技进一步术")


def _lookup(index: MemoryBlockIndex, features: Features, config: EngineConfig) -> set[int]:
    """What the online engine does: the content fingerprint and every probe."""
    hits: set[int] = set()
    for fp in (features.content_fp, *content_probes(features, config)):
        hits.update(item for item, _fp, _d in index.query(fp, config.content_radius))
    return hits


def test_probes_flip_the_weakest_bits_one_block_at_a_time() -> None:
    features = extract("", STORY)
    probes = content_probes(features, CONFIG)
    assert len(probes) == 4 * (2**CONFIG.probe_bits - 1) == len(set(probes))
    assert features.content_fp not in probes
    masks = [((1 << width) - 1) << shift for shift, width in block_layout(CONFIG.k)]
    weak = set(features.weak_bits)
    for probe in probes:
        flipped = probe ^ features.content_fp
        assert 1 <= flipped.bit_count() <= CONFIG.probe_bits
        assert sum(1 for mask in masks if flipped & mask) == 1  # one block only
        assert all(bit in weak for bit in range(64) if flipped >> bit & 1)
    assert content_probes(extract("", STORY), CONFIG) == probes  # deterministic


def test_weak_bits_are_the_smallest_vote_margins_and_batch_independent() -> None:
    features = extract("", STORY)
    assert len(features.weak_bits) == len(set(features.weak_bits)) == 24
    assert all(0 <= bit < 64 for bit in features.weak_bits)


def test_no_probes_when_off_empty_or_from_version_1_rows() -> None:
    assert content_probes(extract("", STORY), OLD_REACH) == []
    assert content_probes(extract("", ""), CONFIG) == []
    with pytest.raises(ValueError, match="probe_bits"):
        EngineConfig(probe_bits=5)


def _before_version_6(features: Features) -> Features:
    """The features as a row written before codes, chrome and the main body existed."""
    return replace(_before_version_7(features), codes=None, chrome=None, main_bits=b"")


def _before_version_7(features: Features) -> Features:
    """The features as a row written before names by kind and quoted keys existed."""
    return replace(features, names=None, name_count=0, quoted=None)


def test_version_7_carries_names_and_quoted_keys_and_version_6_rows_read_as_missing() -> None:
    features = extract("统计局：工业生产稳中有升", "据北京市统计局通报，" + STORY)
    data = features.to_bytes()
    assert data[0] == 7 and features.has_names and features.names and features.name_count
    assert Features.from_bytes(data) == features
    with pytest.raises(ValueError, match="truncated features"):
        Features.from_bytes(data[:-1])
    older = _before_version_7(features)
    assert older.to_bytes()[0] == 6 and data.startswith(b"\x07" + older.to_bytes()[1:])
    assert Features.from_bytes(older.to_bytes()) == older and not older.has_names


def test_version_6_carries_codes_chrome_and_the_main_body_and_older_rows_read_as_missing(
) -> None:
    features = extract("统计局：工业生产稳中有升", "关注我们。" + STORY + " 热线:010-6520-1234")
    features = _before_version_7(features)
    data = features.to_bytes()
    assert data[0] == 6 and features.has_parts and features.codes and features.chrome
    assert Features.from_bytes(data) == features
    pictured = replace(features, pictures=(3, 2**64 - 1))
    assert Features.from_bytes(pictured.to_bytes()) == pictured
    with pytest.raises(ValueError, match="truncated features"):
        Features.from_bytes(data[:-1])
    old = _before_version_6(features)
    assert old.to_bytes()[0] == 4 and Features.from_bytes(old.to_bytes()) == old
    assert not old.has_parts


def test_version_5_carries_the_pictures_and_a_row_without_them_stays_version_4() -> None:
    features = _before_version_6(extract("统计局：工业生产稳中有升", STORY))
    assert features.to_bytes()[0] == 4  # the bytes of rows written before pictures existed
    pictured = replace(features, pictures=(3, 2**64 - 1))
    data = pictured.to_bytes()
    assert data[0] == 5 and data.startswith(b"\x05" + features.to_bytes()[1:])
    assert Features.from_bytes(data) == pictured
    with pytest.raises(ValueError, match="truncated features \\(pictures\\)"):
        Features.from_bytes(data[:-1])


def test_version_1_2_and_3_features_are_still_read() -> None:
    features = replace(_before_version_6(extract("统计局：工业生产稳中有升", STORY)),
                       off_title=True)
    data = features.to_bytes()
    assert data[0] == 4 and Features.from_bytes(data) == features
    assert features.char_shingles  # a Chinese body: character shingles
    v3 = b"\x03" + data[1:-1]  # no flags byte
    assert Features.from_bytes(v3) == replace(features, off_title=False, char_shingles=False)
    with pytest.raises(ValueError, match="truncated"):
        Features.from_bytes(data[:-1])
    data = data[:-1]
    features = replace(features, off_title=False, char_shingles=False)
    texts = (5 + len(features.title_key.encode()) + len(features.short_text.encode())
             + len(features.keys))
    v2 = b"\x02" + data[1 : len(data) - texts]
    assert Features.from_bytes(v2) == replace(features, title_key="", short_text="", keys=b"")
    v1 = b"\x01" + data[1 : len(data) - texts - 1 - len(features.weak_bits)]
    old = Features.from_bytes(v1)
    assert old == Features(
        features.title_fp, features.content_fp, features.token_count, features.sketch,
        features.numbers, features.number_count,
    )
    assert content_probes(old, CONFIG) == []
    with pytest.raises(ValueError, match="unknown features version"):
        Features.from_bytes(b"\x08" + data[1:])
    with pytest.raises((ValueError, struct.error)):
        Features.from_bytes(data[:-3])


def test_a_repost_beyond_the_old_candidate_reach_is_found_and_joins() -> None:
    stored, new = extract("", STORY), extract("", EDITED)
    distance = hamming(stored.content_fp, new.content_fp)
    assert distance > CONFIG.content_radius or distance > CONFIG.k
    assert verify(new, stored, CONFIG).ok
    index = MemoryBlockIndex(CONFIG.k)
    index.add(1, stored.content_fp)
    assert _lookup(index, new, OLD_REACH) == set()  # the plain lookup misses it
    assert _lookup(index, new, CONFIG) == {1}
    candidates = [Candidate(1, "doc-a", stored, True)]
    decision = decide(new, candidates, CONFIG)
    assert decision is not None
    assert (decision.doc_key, decision.matched_by, decision.distance) == ("doc-a", "content",
                                                                        distance)


def test_decide_accepts_a_candidate_within_reach_of_a_probe_only() -> None:
    new = extract("", STORY)
    first_block = ((1 << 16) - 1) << 48
    weak_in_block = [b for b in new.weak_bits if (1 << b) & first_block][: CONFIG.probe_bits]
    others = [b for b in range(48) if b not in new.weak_bits][:8]
    # 11 bits away: 3 weak bits of block 0 (a probe undoes them) + 8 bits elsewhere
    far = new.content_fp
    for bit in weak_in_block + others:
        far ^= 1 << bit
    assert hamming(far, new.content_fp) == 11 > CONFIG.content_radius
    stored = Features(0, far, new.token_count, new.sketch, new.numbers, new.number_count)
    candidates = [Candidate(1, "doc-a", stored, True)]
    decision = decide(new, candidates, CONFIG)
    assert decision is not None and decision.distance == 11
    assert decide(new, candidates, OLD_REACH) is None
    index = MemoryBlockIndex(CONFIG.k)
    index.add(1, far)
    assert _lookup(index, new, CONFIG) == {1} and _lookup(index, new, OLD_REACH) == set()


def test_a_templated_bulletin_is_still_rejected_through_the_probes() -> None:
    index = MemoryBlockIndex(CONFIG.k)
    first = extract("", BULLETIN_1)
    index.add(1, first.content_fp)
    index.add(2, extract("", OTHER).content_fp)
    second = extract("", BULLETIN_2)
    # whatever the lookups propose (here: every stored article), nothing verifies
    assert not verify(second, first, CONFIG).ok
    rows = [Candidate(1, "doc-a", first, True), Candidate(2, "doc-b", extract("", OTHER), True)]
    assert decide(second, rows, CONFIG) is None
