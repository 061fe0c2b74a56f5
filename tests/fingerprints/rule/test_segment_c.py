"""The C segmenter (fingerprints/rule/_segment.c) against jieba and rjieba: same tokens.

jieba's ``cut(text, HMM=False)`` is the definition; rjieba's ``cut(text, False)`` is
what the engine segments with today. bench/segment.py checks every document of the
corpora; here a sample of them, a seeded fuzz and user words.
"""

from __future__ import annotations

import io
import json
import logging
import random
from array import array
from collections.abc import Iterator
from pathlib import Path

import jieba
import pytest
import rjieba

from fingerprints.rule import segment_c

from ..texts import SAMPLE_SENTENCES

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
CORPORA = {
    "xinhua_uhgeval_zh": 500,
    "bdci2019_inews_zh_train": 400,
    "thucnews_cnews_sample_zh": 150,
    "bbc_news_en": 150,
}

EDGE_CASES = [
    "",
    " ",
    "\r\n",
    "\r\r\n\n\r",  # "\r\n" is one token, a lone "\r" or "\n" one each
    "a\r\nb",
    "中国\r\n人民",
    "abc",
    "abc123中国xyz",  # one-letter words of the route joined into one token
    "a b c",
    "iPhone6s和AT&T的c#程序员",  # dictionary words with ASCII letters
    "+#&._%-",
    "3.14%的人_用-连字符",
    "１２３ＡＢＣ，全角",  # full-width forms are not in jieba's runs
    "😀👍🏽𠀀𪚥中文",  # non-BMP code points
    "㐀䶵鿖鿿豈",  # CJK beyond U+4E00-U+9FD5
    "é e\u0301 中\u0301文",  # combining marks
    "\u3000\xa0\u2028\x1c\x85\t\x0b\x0c",  # white space beyond ASCII
    "γ射线",  # the one dictionary word jieba can never give (γ ends the run)
    "工信处女干事每月经过下属科室都要亲口交代24口交换机等技术性器件的安装工作",
    "南京市长江大桥" * 50,
]


@pytest.fixture(scope="module")
def seg():
    return segment_c.get()


@pytest.fixture(scope="module")
def tokenizer() -> jieba.Tokenizer:
    jieba.setLogLevel(logging.WARNING)
    tokenizer = jieba.Tokenizer()
    tokenizer.initialize()
    return tokenizer


@pytest.fixture(scope="module")
def rust() -> rjieba.Jieba:
    return rjieba.Jieba()


def _spans(ids: array) -> list[tuple[int, int]]:
    return list(zip(ids[::2], ids[1::2], strict=True))


def _assert_same(seg, tokenizer: jieba.Tokenizer, rust: rjieba.Jieba | None, text: str) -> None:
    tokens = seg.cut(text)
    assert tokens == list(tokenizer.cut(text, HMM=False)), text
    if rust is not None:
        assert tokens == rust.cut(text, False), text
    assert [text[start:end] for start, end in _spans(seg.cut_ids(text))] == tokens


def test_the_segmenter_is_built_in_the_test_environment() -> None:
    assert segment_c.available(), "build it: pip install --no-deps --no-build-isolation -e ."


def test_its_dictionary_is_jiebas_prefix_dictionary(seg, tokenizer: jieba.Tokenizer) -> None:
    assert seg.total == tokenizer.total
    assert len(seg) == len(tokenizer.FREQ)
    assert all(seg.get_freq(word) == freq for word, freq in tokenizer.FREQ.items())
    assert seg.get_freq("不是一个词语吧") is None


def test_it_gives_jieba_and_rjieba_tokens_on_edge_cases(seg, tokenizer, rust) -> None:
    for text in EDGE_CASES + SAMPLE_SENTENCES:
        _assert_same(seg, tokenizer, rust, text)


def test_cut_ids_are_code_point_offsets_in_a_compact_array(seg) -> None:
    ids = seg.cut_ids("我们😀在\r\n北京")
    assert isinstance(ids, array)
    assert ids.typecode == "I"
    assert ids.itemsize == 4
    assert _spans(ids) == [(0, 2), (2, 3), (3, 4), (4, 6), (6, 8)]
    assert seg.cut_ids("") == array("I")


def _assert_nodes_name_tokens(seg, texts: list[str]) -> None:
    """cut_nodes gives cut_ids's spans, and a node per token that names it: below
    node_count, one node for one token string across all the texts, 0 only where the
    trie has no node for the token (a joined ASCII run, "\r\n")."""
    token_of: dict[int, str] = {}
    for text in texts:
        spans, nodes = seg.cut_nodes(text)
        assert spans == seg.cut_ids(text)
        assert isinstance(nodes, array) and nodes.typecode == "I"
        assert len(nodes) == len(spans) // 2
        for (start, end), node in zip(_spans(spans), nodes, strict=True):
            token = text[start:end]
            assert node < seg.node_count
            if node:
                assert token_of.setdefault(node, token) == token
            else:  # (joined) ASCII letters and digits may spell a word: no node
                joined = token.isascii() and token.isalnum()
                assert joined or token == "\r\n" or seg.get_freq(token) is None
    assert len(set(token_of.values())) == len(token_of)


def test_cut_nodes_name_each_token_by_its_trie_node(seg, words) -> None:
    assert seg.cut_nodes("") == (array("I"), array("I"))
    text = "我们在北京qzx，\r\n天安门"
    spans, nodes = seg.cut_nodes(text)
    node = dict(zip((text[a:b] for a, b in _spans(spans)), nodes, strict=True))
    assert node["qzx"] == node["\r\n"] == 0
    assert all(node[word] for word in ("我们", "在", "北京", "天安门"))
    texts = EDGE_CASES + SAMPLE_SENTENCES
    texts += list(_fuzz(random.Random(77), words, 300, surrogates=False))
    _assert_nodes_name_tokens(seg, texts)


def test_it_rejects_what_is_not_a_str(seg) -> None:
    with pytest.raises(TypeError, match="text must be str"):
        seg.cut(b"bytes")
    with pytest.raises(TypeError, match="text must be str"):
        seg.cut_ids(None)


def _fuzz(rng: random.Random, words: list[str], count: int, *, surrogates: bool) -> Iterator[str]:
    alphabet = [
        *"abcxyzABCXYZ0123456789+#&._%-",
        *" \t\r\n\x0b\x0c\x1c\x1d\x85\xa0\u2028\u3000\u200b\ufeff\x00",
        *"，。！？、；：“”（）《》…—·",
        *"ＡＢｚ０９＋－．",
        "\r\n", "😀", "👍🏽", "𠀀", "𪚥", "㐀", "䶵", "\u9fd6", "\u9fff", "豈",
        "\u0301", "\u0300", "é", "γ", "Ж", "ا",
    ]
    if surrogates:  # lone surrogates: a Python str may hold them, a Rust string may not
        alphabet += ["\ud800", "\udfff", "\udc80"]
    for _ in range(count):
        pieces = []
        for _ in range(rng.randint(0, 30)):
            roll = rng.random()
            if roll < 0.55:
                pieces.append(rng.choice(words))
            elif roll < 0.7:
                pieces.append(chr(rng.randint(0x4E00, 0x9FD5)))
            else:
                pieces.append(rng.choice(alphabet))
        yield "".join(pieces)


@pytest.fixture(scope="module")
def words() -> list[str]:
    path = segment_c.dictionary_path()
    assert path is not None
    return [word for word, _ in segment_c.read_dictionary(path)]


def test_it_gives_jieba_and_rjieba_tokens_on_random_text(seg, tokenizer, rust, words) -> None:
    for text in _fuzz(random.Random(36), words, 20000, surrogates=False):
        _assert_same(seg, tokenizer, rust, text)


def test_it_gives_jieba_tokens_on_text_with_lone_surrogates(seg, tokenizer, words) -> None:
    for text in _fuzz(random.Random(37), words, 3000, surrogates=True):
        _assert_same(seg, tokenizer, None, text)


def _tiny_tokenizer(entries: list[tuple[str, int]]) -> jieba.Tokenizer:
    tokenizer = jieba.Tokenizer()
    lines = "".join(f"{word} {freq}\n" for word, freq in entries).encode()
    tokenizer.FREQ, tokenizer.total = tokenizer.gen_pfdict(io.BytesIO(lines))
    tokenizer.initialized = True
    return tokenizer


def test_it_breaks_ties_as_jieba_on_tiny_dictionaries() -> None:
    # Few characters and small frequencies: routes of equal probability are common
    # (a + b == b + a exactly), and jieba keeps the one whose first word is longer.
    rng = random.Random(40)
    chars = "甲乙丙丁戊己"
    for _ in range(300):
        entries = [
            ("".join(rng.choice(chars) for _ in range(rng.randint(1, 3))), rng.randint(1, 3))
            for _ in range(rng.randint(1, 12))
        ]
        mine, theirs = segment_c.Segmenter(entries), _tiny_tokenizer(entries)
        assert len(mine) == len(theirs.FREQ)
        for _ in range(20):
            text = "".join(rng.choice(chars + "ab1 ，") for _ in range(rng.randint(0, 15)))
            _assert_same(mine, theirs, None, text)


def test_user_words_change_tokens_as_in_jieba(tokenizer: jieba.Tokenizer, words) -> None:
    rng = random.Random(38)
    mine = segment_c.new()
    theirs = jieba.Tokenizer()
    theirs.initialize()
    user_words = ["天安门广场看升旗", "北京天安门", "中", "的的", "iPhone", "b超机", "中国人民"]
    user_words += ["".join(rng.choice(words) for _ in range(rng.randint(2, 3))) for _ in range(40)]
    user_words += [chr(rng.randint(0x4E00, 0x9FD5)) * 2 for _ in range(10)]
    for word in user_words:  # None: jieba's suggest_freq; 0: jieba's del_word
        freq = rng.choice([None, None, 0, 1, 3, 500, 10**6])
        expected = freq if freq is not None else theirs.suggest_freq(word)
        assert mine.add_word(word, freq) == expected
        theirs.add_word(word, freq)
    assert mine.total == theirs.total
    assert len(mine) == len(theirs.FREQ)
    assert all(mine.get_freq(word) == theirs.FREQ[word] for word in user_words)
    texts = ["我们在北京天安门广场看升旗", "中国人民的的确确", *user_words]
    texts += ["".join(rng.choice(user_words + words[:2000]) for _ in range(8)) for _ in range(300)]
    for text in texts:
        _assert_same(mine, theirs, None, text)
    assert "天安门广场看升旗" not in segment_c.get().cut("我们在北京天安门广场看升旗")
    assert "天安门广场看升旗" in mine.cut("我们在北京天安门广场看升旗")


def test_user_words_with_frequencies_change_tokens_as_in_rjieba(tokenizer, words) -> None:
    # rjieba's suggest_freq rounds differently and re-adding a word takes its old
    # frequency out of the total: new words with a frequency behave the same in all three.
    rng = random.Random(39)
    mine, rust = segment_c.new(), rjieba.Jieba()
    theirs = jieba.Tokenizer()
    theirs.initialize()
    user_words = {"天安门广场看升旗": 5, "北京天安门看": 30}
    for _ in range(40):
        word = "".join(rng.choice(words) for _ in range(2))
        if tokenizer.FREQ.get(word) is None:
            user_words[word] = rng.choice([1, 3, 50, 2000])
    for word, freq in user_words.items():
        mine.add_word(word, freq)
        theirs.add_word(word, freq)
        rust.add_word(word, freq, None)
    choices = [*user_words, *words[:3000]]
    texts = ["".join(rng.choice(choices) for _ in range(8)) for _ in range(300)]
    for text in texts:
        _assert_same(mine, theirs, rust, text)


def test_add_word_checks_its_arguments() -> None:
    mine = segment_c.new()
    with pytest.raises(ValueError, match=">= 0"):
        mine.add_word("词语", -1)
    with pytest.raises(OverflowError):
        mine.add_word("词语", 2**62)
    with pytest.raises(TypeError, match="word must be str"):
        mine.add_word(3, 1)
    with pytest.raises(ValueError, match=r"\(word, freq\)"):
        segment_c.Segmenter([("词",)])


def test_an_empty_dictionary_cuts_only_what_is_outside_jiebas_runs() -> None:
    empty = segment_c.Segmenter([])
    assert empty.cut("。 \r\n😀") == ["。", " ", "\r\n", "😀"]
    with pytest.raises(ValueError, match="total frequency is 0"):
        empty.cut("中文")


def _corpus_texts(folder: str, limit: int) -> list[str]:
    path = DATA / folder / "docs.jsonl"
    assert path.exists(), f"missing corpus {path}"
    texts = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            content = row.get("content") or row.get("text") or ""
            title = row.get("title") or ""
            texts.append(f"{title}\n{content}" if title else content)
            if len(texts) >= limit:
                break
    return texts


@pytest.mark.data
@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_it_gives_jieba_and_rjieba_tokens_on_real_news(seg, tokenizer, rust, corpus) -> None:
    for text in _corpus_texts(corpus, CORPORA[corpus]):
        _assert_same(seg, tokenizer, rust, text)
