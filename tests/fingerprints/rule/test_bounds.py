"""The match model's level bounds (fingerprints/rule/bounds.py): what they refuse."""

import pytest

from fingerprints.rule import EngineConfig
from fingerprints.rule.match_model import starting_model

# the rule's walk (labels-1), which these tests are about, whatever the default model
RULE = EngineConfig(model=starting_model())


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_cjk_strict_jaccard_must_be_a_share(value: float) -> None:
    with pytest.raises(ValueError, match="cjk_strict_jaccard must be between 0 and 1"):
        RULE.with_bounds(cjk_strict_jaccard=value)


@pytest.mark.parametrize("value", [-1, 1.5, True])
def test_off_title_max_shingles_must_be_a_count(value: object) -> None:
    with pytest.raises(ValueError, match="off_title_max_shingles must be"):
        RULE.with_bounds(off_title_max_shingles=value)  # type: ignore[arg-type]


def test_cjk_strict_containment_must_be_a_share() -> None:
    with pytest.raises(ValueError, match="cjk_strict_containment must be between 0 and 1"):
        RULE.with_bounds(cjk_strict_containment=-0.1)


def test_word_jaccard_must_be_a_share() -> None:
    with pytest.raises(ValueError, match="word_jaccard must be between 0 and 1"):
        RULE.with_bounds(word_jaccard=1.5)


def test_word_containment_must_be_a_share() -> None:
    with pytest.raises(ValueError, match="word_containment must be between 0 and 1"):
        RULE.with_bounds(word_containment=-0.5)


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_title_jaccard_must_be_a_share(value: float) -> None:
    with pytest.raises(ValueError, match="title_jaccard must be between 0 and 1"):
        RULE.with_bounds(title_jaccard=value)


@pytest.mark.parametrize("value", [0, -1, 1.5, True])
def test_the_part_guards_conflict_count_must_be_a_positive_integer(value: object) -> None:
    with pytest.raises(ValueError,
                       match="guard_part_min_conflicts must be an integer of 1 or more"):
        RULE.with_bounds(guard_part_min_conflicts=value)  # type: ignore[arg-type]


def test_guard_part_jaccard_must_be_a_share() -> None:
    with pytest.raises(ValueError, match="guard_part_jaccard must be between 0 and 1"):
        RULE.with_bounds(guard_part_jaccard=1.5)
