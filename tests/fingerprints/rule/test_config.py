"""The engine's configuration (fingerprints/rule/config.py): what it refuses."""

import pytest

from fingerprints.rule import EngineConfig


@pytest.mark.parametrize("k", [-1, 9])
def test_it_rejects_k_outside_0_to_8(k: int) -> None:
    with pytest.raises(ValueError, match="k must be"):
        EngineConfig(k=k)
    with pytest.raises(ValueError, match="title_k must be"):
        EngineConfig(title_k=k)
