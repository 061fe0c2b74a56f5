"""Boilerplate learned from the stream (fingerprints/rule/boilerplate.py): clauses,
the counters that promote them, and bodies stripped of them alike in Python and in the
kernel."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fingerprints.rule import EngineConfig, extract, verify
from fingerprints.rule.boilerplate import (
    CLAUSE_SEED,
    MIN_CLAUSE,
    MemoryCounter,
    RedisCounter,
    clause_hash,
    clause_hashes,
    clauses,
    is_only_boilerplate,
    strip,
)
from fingerprints.rule.match_model import starting_model
from fingerprints.rule.normalize import normalize

DISCLAIMER = "特别声明：以上文章内容仅代表作者本人观点，不代表新浪看点观点或立场。"


STORIES = [
    "南京市鼓楼区今天开展了为期三天的社区消防演练，数百名居民在消防员指导下学习使用灭火器和逃生技巧。",
    "受持续强降雨影响，长江中游多个水文站水位超过警戒线，防汛部门已启动三级应急响应并加强巡堤查险。",
    "本届国际马拉松吸引了来自四十多个国家和地区的三万余名选手参赛，赛道沿途设置了二十个补给站。",
    "市教育局发布通知，今年秋季学期起全市中小学将推行课后延时服务，家长可根据需要自愿选择参加。",
    "一家新能源汽车企业宣布在本地投资建设电池工厂，项目建成后预计年产值超过百亿元并带动就业。",
    "博物馆新展出一批唐代出土文物，包括陶俑、铜镜和金银器，展览将持续到明年春节之后结束。",
]


def _bp(min_docs: int = 3) -> frozenset[int]:
    counter = MemoryCounter(min_docs)
    learned: set[int] = set()
    for story in STORIES:
        learned.update(counter.observe(clause_hashes(normalize(story + DISCLAIMER))).promoted)
    return frozenset(learned)


def test_clauses_split_at_punctuation_escaped_newlines_and_cjk_spaces() -> None:
    body = normalize("第一句话在这里。第二句，第三句\\n第四句话 第五句话 hello world, again")
    assert clauses(body) == ["第一句话在这里", "第二句", "第三句", "第四句话",
                             "第五句话helloworld", "again"]
    # short clauses (< 6 letters and digits) never count
    assert len(clause_hashes(body)) == 2


def test_a_clause_in_enough_stories_is_learned_and_removed_from_bodies() -> None:
    learned = _bp(3)
    wanted = {clause_hash(k) for k in clauses(normalize(DISCLAIMER)) if len(k) >= 6}
    assert learned == wanted
    body = normalize(STORIES[0] + DISCLAIMER)
    # the clauses and the short label before them ("特别声明:") are gone
    assert strip(body, learned) == normalize(STORIES[0])
    assert is_only_boilerplate(normalize(DISCLAIMER), learned)
    assert not is_only_boilerplate(body, learned)
    # fewer stories than min_docs: nothing learned
    assert _bp(len(STORIES) + 1) == frozenset()


def test_a_story_counts_once_per_call_and_a_rare_clause_gives_way() -> None:
    counter = MemoryCounter(3, slots_log2=1)  # two slots: every clause collides
    a, b = (1 << 64) - 2, (1 << 63) - 2  # same slot (even), other check
    assert counter.observe([a]).promoted == []
    assert counter.count(a) == 1
    counter.observe([b])  # another clause in the slot: a's count drops to 0, b takes it
    assert counter.count(a) == 0 and counter.count(b) == 1
    counter.observe([b])
    assert counter.observe([b]).promoted == [b]
    assert counter.observe([b]).promoted == []  # promoted once, when it reaches min_docs
    with pytest.raises(ValueError):
        MemoryCounter(1)


def test_the_redis_counter_promotes_exactly_what_the_memory_counter_does(redis_client) -> None:
    memory = MemoryCounter(3, slots_log2=8)
    shared = RedisCounter(redis_client, 3, slots_log2=8, namespace="test:bp")
    import random

    rng = random.Random(7)
    pool = [rng.getrandbits(64) for _ in range(600)]
    for _ in range(400):
        story = rng.sample(pool[:40], 3) + rng.sample(pool, 5)
        story = list(dict.fromkeys(story))
        assert shared.observe(story).promoted == memory.observe(story).promoted
    assert [shared.count(c) for c in pool] == [memory.count(c) for c in pool]
    # a worker's batch of stories in one call (split over several calls here) counts
    # exactly as one call per story does
    stories = [list(dict.fromkeys(rng.sample(pool[:40], 3) + rng.sample(pool, 5)))
               for _ in range(200)]
    batched = shared.observe_many(stories, pairs_per_call=37)
    assert [o.promoted for o in batched] == [memory.observe(s).promoted for s in stories]
    assert any(o.promoted for o in batched)
    assert [shared.count(c) for c in pool] == [memory.count(c) for c in pool]
    # large calls (the default size: thousands of clauses) count the same
    big = [[rng.getrandbits(64) for _ in range(256)] + pool[:5] for _ in range(30)]
    assert ([o.promoted for o in shared.observe_many(big)]
            == [memory.observe(s).promoted for s in big])
    shared.clear()
    assert shared.count(pool[0]) == 0


def test_boilerplate_gets_no_weight_in_features() -> None:
    learned = _bp(3)
    with_chrome = extract("消防演练", STORIES[0] + DISCLAIMER, boilerplate=learned)
    plain = extract("消防演练", STORIES[0])
    # the same features but for the chrome share, which counts what was removed
    assert replace(with_chrome, chrome=plain.chrome) == plain
    assert with_chrome.chrome is not None and plain.chrome is not None
    assert with_chrome.chrome > plain.chrome
    # a body that is only boilerplate has nothing left to fingerprint
    only = extract("某网友的感想", DISCLAIMER, boilerplate=learned)
    assert only.content_fp == 0 and only.sketch.shingles == 0


def test_bodies_that_are_only_boilerplate_match_by_title_only() -> None:
    learned, config = _bp(3), EngineConfig(model=starting_model())  # the rule's bounds
    a = extract("吴卓林欠房租事件引发网友热议", DISCLAIMER, boilerplate=learned)
    b = extract("新余生活超过十年的最珍贵回忆", DISCLAIMER, boilerplate=learned)
    assert not verify(a, b, config).ok
    # before it is learned, the two disclaimers are copies of each other, but neither
    # is about its title: under unrelated titles they are told apart by the titles
    plain_a = extract("吴卓林欠房租事件引发网友热议", DISCLAIMER)
    plain_b = extract("新余生活超过十年的最珍贵回忆", DISCLAIMER)
    assert plain_a.off_title and plain_b.off_title
    assert not verify(plain_a, plain_b, config).ok
    assert verify(plain_a, plain_b, config.with_bounds(off_title_similarity=0.0)).ok
    assert not extract("新浪看点发布特别声明", DISCLAIMER).off_title
    same = extract("吴卓林欠房租事件引发网友热议", "", boilerplate=learned)
    assert verify(a, same, config).reason == "title-only"
    other_issue = extract("吴卓林欠房租事件第3集", "")
    assert not verify(extract("吴卓林欠房租事件第4集", ""), other_issue, config).ok
    # a generic short title is not enough
    assert not verify(extract("视频", ""), extract("视频", ""), config).ok


def test_the_python_count_matches_the_kernel_count(monkeypatch) -> None:
    import random

    from fingerprints.rule import boilerplate

    rng = random.Random(11)
    pool = [rng.getrandbits(64) for _ in range(300)]
    stories = [list(dict.fromkeys(rng.sample(pool[:30], 4) + rng.sample(pool, 6)))
               for _ in range(300)]
    compiled = MemoryCounter(3, slots_log2=6)  # 64 slots: collisions all the time
    assert boilerplate.kernel is not None
    expected = [compiled.observe(story).promoted for story in stories]
    with pytest.raises(ValueError, match=r"2\*\*slots_log2"):
        boilerplate.kernel.observe(bytearray(12), [1], 2, 3)
    monkeypatch.setattr(boilerplate, "kernel", None)
    python = MemoryCounter(3, slots_log2=6)
    assert [python.observe(story).promoted for story in stories] == expected
    assert any(expected)
    assert [python.count(c) for c in pool] == [compiled.count(c) for c in pool]
    with pytest.raises(ValueError, match="slots_log2"):
        MemoryCounter(3, slots_log2=31)


def test_the_kernel_rebuilds_bodies_as_the_python_does() -> None:
    import random

    from fingerprints.rule import boilerplate
    from fingerprints.rule.kernel import kernel

    assert kernel is not None
    learned = _bp(3)
    body = normalize(STORIES[0] + DISCLAIMER)
    assert kernel.rebuild(body, learned, MIN_CLAUSE, CLAUSE_SEED) == normalize(STORIES[0])
    # random texts of the characters the rules turn on: breaks, CJK spaces, literal
    # backslash-n, NUL, underscores, other white space; half their clauses boilerplate
    rng = random.Random(5)
    atoms = ["中文", "字", " ", "  ", "a", "bc", ".", "。", "\\", "n", "r", ",", "、", "\x00",
             "_", "12", "x y", "\t", "·", "特别声明", "以上内容仅代表作者观点"]
    changed = 0
    for _ in range(3000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 25)))
        found = {clause_hash(k) for k in clauses(text) if len(k) >= MIN_CLAUSE}
        chosen = {h for h in found if rng.random() < 0.5}
        for kept in (chosen, frozenset(chosen)):
            expected = boilerplate._rebuild_py(text, kept)
            assert kernel.rebuild(text, kept, MIN_CLAUSE, CLAUSE_SEED) == expected, text
        changed += expected != text
    assert changed > 300
    with pytest.raises(TypeError, match="set or frozenset"):
        kernel.rebuild("正文", [1], MIN_CLAUSE, CLAUSE_SEED)


def test_long_bodies_are_normalized_and_stripped_alike_without_the_cache() -> None:
    from fingerprints.rule import normalize as normalization

    learned = _bp(3)
    short = STORIES[0] + DISCLAIMER
    long = short * (normalization.CACHED_CHARS // len(short) + 1)
    assert len(long) > normalization.CACHED_CHARS >= len(short)
    # the long text goes around the caches and gives what the cached path gives
    assert normalize(long) == normalize(short) * long.count(DISCLAIMER)
    stripped = strip(normalize(long), learned)
    assert DISCLAIMER[:10] not in stripped and normalize(STORIES[0]) in stripped
    before = normalization._normalize_recent.cache_info().currsize
    normalize(long + "x")
    assert normalization._normalize_recent.cache_info().currsize == before
