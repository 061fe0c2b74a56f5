"""The in-process replayer (fingerprints/batch/replay.py): how far its candidate lookups
reach."""

from dataclasses import replace

import pytest

from fingerprints.rule import EngineConfig, extract

from ..texts import STORY


@pytest.mark.parametrize("radius, joined", [(8, True), (5, True), (4, False), (3, False)])
def test_the_candidate_radius_decides_how_far_a_shared_block_reaches(radius, joined) -> None:
    """A copy whose content fingerprint differs in 5 bits, all in one block of four
    (k = 3): the other three blocks are shared, so the index returns it; it is verified
    only when within candidate_radius (no probes, no title or key lookups here)."""
    from fingerprints.batch.replay import Item, Replayer

    config = EngineConfig(candidate_radius=radius, probe_bits=0)
    first = replace(extract("", STORY, config), keys=b"", title_fp=0)
    copy = replace(first, content_fp=first.content_fp ^ (0b11111 << 48))
    replayer = Replayer(config)
    replayer.add(Item(seq=1, nid="a", features=first))
    found = replayer.add(Item(seq=2, nid="b", features=copy))
    assert (found.anchor == 1) is joined
    if joined:
        assert (found.matched_by, found.distance) == ("content", 5)
