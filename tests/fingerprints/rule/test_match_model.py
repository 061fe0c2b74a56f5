"""The match model: weights as data, the starting model deciding as the rule did at the
default threshold, and the threshold steering every pair monotonically."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fingerprints.rule import EngineConfig, extract, extract_many, verify
from fingerprints.rule.match_model import LEVELS, MatchModel, probability, starting_model

ROOT = Path(__file__).resolve().parents[3]

STORY = ("江城滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
         "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步，较去年同期增长近六成。"
         "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")
TAIL = ("据悉，绿道二期工程将于明年开工，届时将延伸至城东新区，总长度将超过六十公里，"
        "沿线还将新建五座城市公园和一个大型滨水广场。")

def test_the_starting_model_decides_every_exit_of_the_rule_as_the_rule_did() -> None:
    from fingerprints.rule.match_training import rule_exits

    model = starting_model()
    exits = rule_exits()
    for example in exits:
        weight = model.score(example.levels).match_weight
        # at least a bit of margin on each side of the default threshold (weight 0)
        assert (weight >= 1) if example.match else (weight <= -1), (example, weight)
    assert len(exits) > 200


def test_every_level_the_schema_has_is_weighed_and_nothing_else() -> None:
    data = starting_model().as_dict()
    assert {c: set(levels) for c, levels in data["comparisons"].items()} == {
        c: set(levels) for c, levels in LEVELS.items()}
    assert MatchModel.from_dict(json.loads(json.dumps(data))) == starting_model()
    del data["comparisons"]["names"]["agree"]
    with pytest.raises(ValueError, match="missing"):
        MatchModel.from_dict(data)
    data["comparisons"]["names"]["agree"] = 1
    data["comparisons"]["names"]["maybe"] = 2
    with pytest.raises(ValueError, match="unknown"):
        MatchModel.from_dict(data)
    with pytest.raises(ValueError, match="not a match model"):
        MatchModel.from_dict({"version": "x"})


def test_a_remembered_score_is_the_models_own_after_a_replace() -> None:
    from dataclasses import replace

    model = starting_model()
    levels = [("body", "copy"), ("numbers", "agree"), ("names", "none-shared")]
    score, p = model.scored(levels)
    assert score == model.score(levels) and p == score.probability
    assert model.scored(tuple(levels))[0] is score  # scored once per sequence of levels
    heavier = replace(model, weights=tuple((c, lvl, w + 1.0) for c, lvl, w in model.weights))
    other, other_p = heavier.scored(levels)
    assert other == heavier.score(levels) != score
    assert other.match_weight == pytest.approx(score.match_weight + len(levels))
    assert other_p > p


def test_probability_is_the_logistic_of_the_match_weight_in_bits() -> None:
    assert probability(0) == 0.5
    assert probability(1) == pytest.approx(2 / 3)
    assert probability(-1) == pytest.approx(1 / 3)
    assert probability(2000) == 1.0 and probability(-2000) == 0.0  # no overflow


def test_the_threshold_steers_a_chinese_partial_copy_and_keeps_a_copy() -> None:
    wechat = extract("绿道贯通", "点击上方蓝字关注我们。" + STORY + "喜欢就点个在看吧。")
    paper = extract("滨江绿道全线贯通", "江城日报讯（记者 王明）" + STORY + TAIL)
    copy = extract("滨江绿道全线贯通", "江城日报讯（记者 王明）" + STORY + TAIL + "责任编辑：李华")
    partial = verify(wechat, paper, EngineConfig(model=starting_model()))
    exact = verify(copy, paper, EngineConfig(model=starting_model()))
    assert partial.ok and partial.reason == "contained" and exact.ok and exact.reason == "copy"
    assert [(w.comparison, w.level) for w in partial.score.weights][0] == ("body",
                                                                          "cjk-contained")
    assert 0.5 < partial.probability < exact.probability < 1.0
    between = (partial.probability + exact.probability) / 2
    strict = EngineConfig(model=starting_model(), match_threshold=between)
    refused = verify(wechat, paper, strict)
    assert not refused.ok and refused.reason == "below match threshold"
    assert verify(copy, paper, strict).ok
    # lowering it below 0.5 lets in what the rule refused, in the order of the weights
    other = extract("江城新闻", "市民在江边散步。" + TAIL + "记者 王明 摄影报道。" * 3)
    far = verify(other, paper, EngineConfig(model=starting_model()))
    assert not far.ok and 0.0 < far.probability < 0.5
    assert verify(other, paper,
                  EngineConfig(model=starting_model(), match_threshold=far.probability)).ok


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_the_threshold_is_a_probability(value: float) -> None:
    with pytest.raises(ValueError, match="match_threshold must be between 0 and 1"):
        EngineConfig(model=starting_model(), match_threshold=value)


@pytest.mark.data
def test_a_threshold_sweep_over_the_labelled_pairs_trades_recall_for_precision() -> None:
    """Every human-labelled pair of the crawled corpus (bench/labels/), verified as a
    pair: raising the threshold never adds a match (recall falls) and, on these pairs,
    precision rises."""
    sys.path.insert(0, str(ROOT / "bench"))
    from common import load_docs, load_labels

    from fingerprints.rule.boilerplate import shipped_hashes

    gold = {**load_labels("bdci"), **load_labels("bdci", validation=True)}
    ids = sorted({i for pair in gold for i in pair})
    docs = {d.id: d for d in load_docs("bdci")}
    config = EngineConfig(model=starting_model())
    features = dict(zip(ids, extract_many([(docs[i].title, docs[i].content) for i in ids],
                                          config, boilerplate=frozenset(shipped_hashes())),
                        strict=True))
    from fingerprints.rule.match_training import rule_exits

    exits = {e.levels for e in rule_exits()}
    scored = []
    for (a, b), (label, _reason) in gold.items():
        v = verify(features[a], features[b], config)
        assert v.score is not None
        assert tuple((w.comparison, w.level) for w in v.score.weights) in exits  # enumerated
        scored.append((v.probability, label))
    sweep = []
    previous: set[int] = set(range(len(scored)))
    for threshold in (0.01, 0.1, 0.5, 0.9, 0.99, 0.999):
        matched = {i for i, (p, _l) in enumerate(scored) if p >= threshold}
        assert matched <= previous  # raising it never adds a match
        previous = matched
        tp = sum(1 for i in matched if scored[i][1] == 1)
        sweep.append((tp / len(matched), tp / sum(label for _p, label in scored)))
    precisions, recalls = zip(*sweep, strict=True)
    assert list(precisions) == sorted(precisions) and precisions[-1] > precisions[2] + 0.02
    assert list(recalls) == sorted(recalls, reverse=True) and recalls[-1] < recalls[2] - 0.2
    assert recalls[2] >= 0.9 and precisions[2] >= 0.95  # the default: the rule's figures


def test_fitting_moves_the_levels_the_labels_contradict_and_keeps_the_others() -> None:
    from fingerprints.rule.match_model import rule_model
    from fingerprints.rule.match_training import Example, fit, precision_recall, scores

    start = rule_model()
    partial = (("body", "cjk-partial"), ("numbers", "agree"), ("names", "none-shared"))
    copy = (("body", "copy"), ("numbers", "agree"), ("names", "agree"))
    examples = [Example(partial, False)] * 30 + [Example(copy, True)] * 30
    fitted = fit(examples, start, "test-1")
    assert fitted.version == "test-1"
    assert start.score(partial).probability > 0.5 > fitted.score(partial).probability
    assert fitted.score(copy).probability > 0.99
    # a level no example reaches keeps its weight
    assert fitted.weight("pictures", "shared") == start.weight("pictures", "shared")
    assert fitted.weight("body", "short-edit") == start.weight("body", "short-edit")
    before = precision_recall(scores(start, examples), 0.5)
    after = precision_recall(scores(fitted, examples), 0.5)
    assert (before["fp"], before["precision"]) == (30, 0.5)
    assert (after["fp"], after["precision"], after["recall"], after["f1"]) == (0, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="strength must be positive"):
        fit(examples, start, "x", strength=0)
    # a fixed comparison keeps its weights; the others carry what the labels say
    held = fit(examples, start, "test-2", fixed=("body",))
    assert [held.weight("body", lvl) for lvl in LEVELS["body"]] == [
        start.weight("body", lvl) for lvl in LEVELS["body"]]
    assert held.score(partial).probability < 0.5 < held.score(copy).probability


@pytest.mark.data
def test_the_shipped_model_is_what_its_script_fits() -> None:
    """fingerprints/rule/data/match_model.json is reproducible from the labels, rule-1
    and the rule's exits (scripts/ship_match_model.py), and keeps every exit."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from ship_match_model import ship

    assert ship() == starting_model()
    assert starting_model().version == "labels-1"


def test_the_table_matcher_and_the_match_model_share_one_em_core() -> None:
    """fingerprints/rule/fellegi_sunter.py: the EM both estimators call; on planted
    duplicates it separates them, a missing comparison says nothing, a veto holds."""
    import numpy as np

    from fingerprints.rule.fellegi_sunter import MISSING, expectation_maximisation, level_shares
    from fingerprints.table import fellegi

    rng = np.random.default_rng(3)
    pairs = rng.integers(0, 2, size=(900, 3))  # two levels: 0 different, 1 same
    pairs[:100] = 1  # planted duplicates agree on all three
    pairs[100:150, 2] = MISSING
    patterns, counts = np.unique(pairs, axis=0, return_counts=True)
    m0, u0 = [np.array([0.3, 0.7])] * 3, [np.array([0.7, 0.3])] * 3  # a guess each way
    fit = expectation_maximisation(patterns, counts, [2, 2, 2], list(m0), list(u0), 0.5,
                                   smoothing=0.01)
    agree = next(i for i, row in enumerate(patterns) if list(row) == [1, 1, 1])
    differ = next(i for i, row in enumerate(patterns) if list(row) == [0, 0, 0])
    assert fit.posterior[agree] > 0.5 > fit.posterior[differ]
    assert 0.1 < fit.prior < 0.5
    assert all(m[1] > u[1] for m, u in zip(fit.m, fit.u, strict=True))
    shares = level_shares(patterns, counts.astype(float), [2, 2, 2], 0.0)
    assert shares[2].sum() == pytest.approx(1.0)  # a missing comparison is left out
    vetoed = patterns[:, 0] == 0
    held = expectation_maximisation(patterns, counts, [2, 2, 2], list(m0), list(u0), 0.5,
                                    smoothing=0.01, vetoed=vetoed)
    assert (held.posterior[vetoed] == 0).all()
    # the table matcher's estimate is this core (no EM loop of its own)
    assert fellegi.expectation_maximisation is expectation_maximisation


def test_the_bound_search_spreads_pairs_chosen_by_one_key_over_every_fold() -> None:
    """train_matcher fits on the pairs whose key is not 0 mod 5 (one in five is held
    out by that key); the search's own folds must still all be filled."""
    from collections import Counter

    from fingerprints.rule.match_training import search_folds

    keys = [k for k in range(10_000) if k % 5 == 1][:800]
    sizes = Counter(k % 5 for k in search_folds(keys))
    assert len(sizes) == 5 and min(sizes.values()) >= 120, sizes
    assert search_folds(keys) == search_folds(keys)  # stable between runs


def test_the_shipped_model_has_the_documented_bounds() -> None:
    """docs/parameters.md lists Bounds()'s defaults as the shipped model's."""
    from fingerprints.rule.bounds import Bounds

    assert starting_model().bounds == Bounds()
