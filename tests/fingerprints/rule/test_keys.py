"""The keys of a body (fingerprints/rule/keys.py): what a repost shares with its
original, and how short bodies are keyed."""

from __future__ import annotations

from fingerprints.rule import extract
from fingerprints.rule.keys import QUERY_KEYS, STORED_KEYS, query_keys, stored_keys

STORY = ("市图书馆从下月起推出夜间借阅服务，工作日开放时间延长至晚上十点。图书馆馆长表示，"
         "过去一年读者问卷显示超过七成受访者希望在下班后也能借书。此外图书馆还将每月举办两场"
         "晚间读书会，邀请本地作家和学者与读者交流。馆方提醒夜间时段仅开放一至三层阅览区。")


HEADER = "点击上方蓝字关注我们，每天获取城市生活资讯。夏季家装节火热进行中全场家具五折起。"


def test_a_repost_with_a_header_shares_its_stored_keys() -> None:
    original = extract("夜间借阅", STORY)
    repost = extract("下班也能借书", HEADER + STORY + HEADER)
    assert 0 < len(stored_keys(original.keys)) <= STORED_KEYS
    assert len(query_keys(repost.keys)) <= QUERY_KEYS
    assert set(stored_keys(original.keys)) <= set(query_keys(repost.keys))
    assert query_keys(original.keys) == sorted(query_keys(original.keys))
    # different stories share no key
    assert not set(query_keys(extract("x", HEADER).keys)) & set(query_keys(original.keys))


def test_short_bodies_are_keyed_by_their_head_and_tail_and_their_clauses() -> None:
    a = extract("", "海量网络文本去重系统实验测试，这是一段测试文本的内容。")
    b = extract("", "海量网络文本去重系统实验检测，这是一段相似的测试文本的内容。")
    # head, tail, and the two clauses of 10+ characters
    assert len(query_keys(a.keys)) == 4
    assert len(set(query_keys(a.keys)) & set(query_keys(b.keys))) == 1  # the head
    assert extract("", "短文本").keys == b""
    # a short post and its repost with a source line in front (no longer short) share
    # the clause keys
    post = "3月27日下午五时左右，两位女学生在万达广场逛街回校途中拍下一名男子的不雅举动，太恶心了！"
    repost = ("来源：@滨州情报局长，" + post + "本博已私信滨州公安发了车牌号，请大家注意安全，"
              "女生晚上出门尽量结伴而行，遇到类似情况请第一时间报警并保留证据。")
    short, longer = extract("", post), extract("", repost)
    assert short.short_text and not longer.short_text
    assert set(query_keys(short.keys)) & set(stored_keys(longer.keys))
    assert set(query_keys(longer.keys)) & set(stored_keys(short.keys))
