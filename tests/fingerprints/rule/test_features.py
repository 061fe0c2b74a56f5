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
