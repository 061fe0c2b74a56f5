"""A 64-bit fingerprint cut into k + 1 blocks (fingerprints/rule/blocks.py)."""

from fingerprints.rule.blocks import block_keys, block_layout


def test_it_splits_64_bits_into_k_plus_1_blocks() -> None:
    for k in range(9):
        layout = block_layout(k)
        assert len(layout) == k + 1
        assert sum(width for _, width in layout) == 64
    assert block_keys(0xFFFF_0000_0000_0001, 3) == [(0, 0xFFFF), (1, 0), (2, 0), (3, 1)]
