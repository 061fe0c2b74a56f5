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


@pytest.mark.data
def test_the_replay_decides_as_the_online_runner_with_a_vector_model() -> None:
    """Engine v4's model in the batch engine: the in-process replay (what the Spark job
    runs in each component) gives the same docIds as the online runner on 2,000 crawled
    articles (the same features: boilerplate learning off in both)."""
    import sys
    from pathlib import Path

    from fingerprints.batch.replay import Item, Replayer
    from fingerprints.rule import extract_many
    from fingerprints.rule.vector_model import shipped_vector_model

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
    from common import load_docs, run_engine

    config = EngineConfig(model=shipped_vector_model(), boilerplate_min_docs=0)
    docs = load_docs("bdci", limit=2000)
    online = run_engine(docs, config)
    replayer = Replayer(config)
    features = extract_many([(d.title, d.content) for d in docs], config)
    for seq, (doc, feats) in enumerate(zip(docs, features, strict=True)):
        replayer.add(Item(seq=seq, nid=doc.id, features=feats))
    groups_online: dict[str, set[str]] = {}
    groups_replay: dict[int, set[str]] = {}
    for seq, doc in enumerate(docs):
        groups_online.setdefault(online[doc.id], set()).add(doc.id)
        groups_replay.setdefault(replayer.anchor_of[seq], set()).add(doc.id)
    partition = sorted(map(sorted, groups_online.values()))
    assert partition == sorted(map(sorted, groups_replay.values()))
    assert sum(len(g) > 1 for g in groups_online.values()) > 10  # it did merge


def test_equal_features_share_a_number_and_unequal_ones_sharing_the_lookup_do_not() -> None:
    """The replay's number of a features value (the key of its candidate maps): equal
    features (another instance) get the first one's number; features that differ only
    in a field outside the lookup's three get numbers of their own, in order."""
    from fingerprints.batch.replay import Replayer

    first = extract("标题", STORY, EngineConfig())
    replayer = Replayer()
    assert replayer._number(first) == 0
    assert replayer._number(replace(first)) == 0  # equal, not the same instance
    other = replace(first, short_text="另一段")
    assert (other.content_fp, other.title_fp, other.token_count) == (
        first.content_fp, first.title_fp, first.token_count)
    assert replayer._number(other) == 1
    assert replayer._number(replace(first, keys=b"")) == 2
    assert replayer._number(replace(other)) == 1
    assert replayer._number(replace(first, content_fp=first.content_fp ^ 1)) == 3
