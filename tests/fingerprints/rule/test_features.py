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
