import subprocess
import sys
from pathlib import Path

import pytest

from fingerprints.rule.simhash import feature_hash, hamming, simhash, similarity


def test_hamming_counts_differing_bits() -> None:
    assert hamming(0, 0) == 0
    assert hamming(0b1011, 0b0001) == 2
    assert hamming(0, (1 << 64) - 1) == 64
    assert similarity(0, 0b11) == pytest.approx(1 - 2 / 64)


def test_simhash_is_unsigned_64_bit_and_weighted() -> None:
    fp = simhash({"新华社": 1.0, "北京": 2.0, "统计局": 5.0})
    assert 0 <= fp < 1 << 64
    assert simhash({"统计局": 1.0}) == feature_hash("统计局")
    assert simhash({"a": 1.0, "b": 10.0}) == feature_hash("b")
    assert simhash({}) == 0


def test_fingerprints_are_the_same_in_another_process() -> None:
    code = ("from fingerprints.rule.simhash import simhash; "
            "print(simhash({'统计局': 2.0, 'x': 1.0}))")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={"PYTHONHASHSEED": "123", "PATH": ""}, cwd=str(Path(__file__).parents[3]),
    ).stdout
    assert int(out) == simhash({"统计局": 2.0, "x": 1.0})
