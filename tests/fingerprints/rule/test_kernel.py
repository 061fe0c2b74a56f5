"""The C kernel (fingerprints/rule/_kernel.c) against the NumPy reference: same bytes."""

import json
import pickle
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from fingerprints.rule import EngineConfig, extract, extract_many, extraction, vocabulary
from fingerprints.rule.kernel import kernel
from fingerprints.rule.sketch import _KEEP, Sketch, char_shingled, sketch_many, sketch_one

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
CORPORA = {
    "xinhua_uhgeval_zh": 1500,
    "thucnews_cnews_sample_zh": 800,
    "bbc_news_en": 600,
    "cnndm_halueval_en": 400,
    "bdci2019_inews_zh_train": 600,
}

EDGE_CASES = [
    ("", ""),
    ("   ", " \n\t "),
    ("标题", "正文"),  # one-word title: no title fingerprint
    ("（国际）【独家】 两个 词", "的 了 和"),  # stopwords only
    ("1月5日 报收 3012 点", "1月5日，上证指数报收3012点，2015年3月5日成交3000亿元。5日 5 日 5"),
    ("March 5", "On March 5 the index closed at 3012, up 12 points from 3000 on March 4."),
    ("emoji 😀 标题", "非基本平面字符 𠀀𠀁𠀂 😀😀 和中文混排的正文内容，还有 emoji 🎉。"),
    ("html", "<p>第一段 &amp; 内容</p><script>alert('x')</script><b>第二段</b>&nbsp;结束"),
    ("repeats", "重复" * 5000),  # term frequency above the 4,096 cap
    ("four", "一二三四"),  # fewer than five shingle characters
    ("mixed", "abc def ghi jkl mno 中文"),  # under 30 % CJK: word shingles
    ("edge", "abcdefg 中文字"),  # 3 CJK of 10 kept characters: exactly 30 %
    ("digits", "０１２３ ４５６７ 全角数字 ＡＢＣ"),
    ("long", "新华社北京电 " + "。".join(f"第{i}段内容有所不同{i * 7}" for i in range(600))),
]


def _bytes(items: list[tuple[str, str]], **kwargs: object) -> list[bytes]:
    return [f.to_bytes() for f in extract_many(items, **kwargs)]  # type: ignore[arg-type]


def test_the_kernel_is_built_in_the_test_environment() -> None:
    # Without it the comparisons below would compare NumPy with itself.
    assert kernel is not None, "fingerprints.rule._kernel is not built: run `make install`"


def test_it_gives_the_numpy_bytes_on_edge_cases() -> None:
    assert _bytes(EDGE_CASES, compiled=True) == _bytes(EDGE_CASES, compiled=False)
    for title, content in EDGE_CASES:
        assert extract(title, content).to_bytes() == _bytes([(title, content)], compiled=False)[0]


def test_tables_kept_between_calls_leave_nothing_behind() -> None:
    # The kernel's per-call hash tables are never cleared (_stamped.h): each call's
    # entries carry its own stamp. Any order of long and short texts, the same text twice
    # in a row: the NumPy bytes, which keep no state.
    reference = dict(zip(EDGE_CASES, _bytes(EDGE_CASES, compiled=False), strict=True))
    for order in (EDGE_CASES, EDGE_CASES[::-1], sorted(EDGE_CASES, key=lambda i: len(i[1])),
                  [item for item in EDGE_CASES for _ in range(2)]):
        assert _bytes(order, compiled=True) == [reference[item] for item in order]


@pytest.mark.data
@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_it_gives_the_numpy_bytes_on_real_news(corpus: str) -> None:
    path = DATA / corpus / "docs.jsonl"
    assert path.exists(), f"missing corpus {path}"
    items = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            items.append((row.get("title") or "", row.get("content") or row.get("text") or ""))
            if len(items) >= CORPORA[corpus]:
                break
    compiled, reference = _bytes(items, compiled=True), _bytes(items, compiled=False)
    mismatched = [i for i, (a, b) in enumerate(zip(compiled, reference, strict=True)) if a != b]
    assert mismatched == []


def test_sketches_match_the_vectorized_ones() -> None:
    texts = [extraction.normalize(content) for _, content in EDGE_CASES]
    assert [sketch_one(t) for t in texts] == sketch_many(texts)
    # a character-shingle text goes through the kernel, the others return None
    assert kernel is not None
    for text in ("中文新闻正文的内容", "english words only here, and more words than five",
                 "two words", "naïve café – ünïcödé wörds ½ ² ٣ 𝟘 here", "abc 中 def ghi jkl mno",
                 "words_with_underscores and-dashes 123 4.5", "x"):
        found = kernel.sketch(text, _KEEP)
        assert found is not None and Sketch(*found[:3]) == Sketch.from_text(text), text
        assert found[3] is char_shingled(text), text
    assert kernel.sketch("一二三四", _KEEP) is None  # short CJK: left to Python
    for empty in ("", " ,.", "_ _ __ ___"):  # nothing kept: left to Python (empty)
        assert kernel.sketch(empty, _KEEP) is None
        assert sketch_one(empty) == Sketch.from_text(empty) == Sketch(0, 0, b"")
    # sketch_and_kind sets the instance's __dict__ at once: the dataclass's own instance
    for text in texts:
        made = sketch_one(text)
        built = Sketch(made.level, made.shingles, made.samples)
        assert type(made) is Sketch and hash(made) == hash(built) and repr(made) == repr(built)
        assert list(vars(made).items()) == list(vars(built).items())
        assert pickle.dumps(made) == pickle.dumps(built)


def test_new_words_from_many_threads_give_the_sequential_bytes() -> None:
    # A fresh vocabulary (its own stopword set) grows while eight threads read it: the
    # kernel must never see a half-added word or a table being rebuilt as a wrong id.
    config = EngineConfig(extra_stopwords=frozenset({"kernel-thread-test"}))
    items = [
        (f"标题{i}", "".join(chr(0x4E00 + (i * 131 + j * 17) % 20000) for j in range(300)))
        for i in range(400)
    ]
    results: dict[int, list[bytes]] = {}
    errors: list[BaseException] = []

    def work(part: int) -> None:
        try:
            results[part] = _bytes(items[part::8], config=config, compiled=True)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(p,)) for p in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for part in range(8):
        assert results[part] == _bytes(items[part::8], config=config, compiled=False)


def test_threads_asking_for_a_new_vocabulary_at_once_share_one_build(monkeypatch) -> None:
    # A threaded web worker's threads after a stopword change: one build (about 2 s),
    # not one each, and every thread gets the same vocabulary.
    builds: list[int] = []
    real = vocabulary.Vocabulary

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: object) -> None:
            builds.append(1)
            super().__init__(*args)

    monkeypatch.setattr(vocabulary, "Vocabulary", Counting)
    key = frozenset({"one-build-test"})
    start = threading.Barrier(8)
    got: list[object] = []

    def ask() -> None:
        start.wait()
        got.append(vocabulary.vocabulary_for(key))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1
    assert len(got) == 8 and all(vocab is got[0] for vocab in got)


def test_bad_arguments_raise_clear_errors() -> None:
    assert kernel is not None
    vocab = vocabulary.vocabulary_for(frozenset())
    with pytest.raises(TypeError, match="tokens must be str"):
        kernel.fingerprint([3, "ok"], vocab.kernel_tables(), True, 0, True)
    with pytest.raises(ValueError, match="weak_bits"):
        kernel.fingerprint([], vocab.kernel_tables(), True, 65, True)
    with pytest.raises(TypeError, match="tokens: list"):
        kernel.fingerprint(("a",), vocab.kernel_tables(), True, 0, True)
    with pytest.raises(TypeError, match="8-byte items"):
        kernel.Tables(*([np.zeros(4, dtype=np.int32)] * 6))
    with pytest.raises(TypeError, match="array 2 must have 16-byte items"):
        kernel.Tables(vocab.table_keys, vocab.table_ids, np.zeros(4, np.uint64), vocab.month,
                      vocabulary.TF_FACTOR, vocab.name_info)
    with pytest.raises(TypeError, match="6 arrays"):
        kernel.Tables(np.zeros(4))
    with pytest.raises(ValueError, match="65536"):
        kernel.sketch("中文新闻正文", np.zeros(10, dtype=np.bool_))
    with pytest.raises(RuntimeError, match="not built"):
        engine_kernel, extraction.kernel = extraction.kernel, None
        try:
            extract_many([("a", "b")], compiled=True)
        finally:
            extraction.kernel = engine_kernel


def test_dedup_kernel_0_turns_it_off() -> None:
    code = "from fingerprints.rule.kernel import kernel; print(kernel is None)"
    off = subprocess.run(
        [sys.executable, "-c", code], env={"DEDUP_KERNEL": "0", "PATH": ""},
        capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[3],
    )
    on = subprocess.run(
        [sys.executable, "-c", code], env={"PATH": ""},
        capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[3],
    )
    assert (off.stdout.strip(), on.stdout.strip()) == ("True", "False")


def test_preloaded_vocabulary_changes_no_feature_and_keeps_fresh_text_in_the_kernel(
) -> None:
    """The dictionary preloaded when a vocabulary is made (start_vocabulary) gives the
    same features as a vocabulary grown token by token from nothing, and the words of a
    text never seen before are resolved by the kernel without adding a token."""
    items = [(title, content) for title, content in EDGE_CASES if content.strip()]
    items.append(("海量网络文本去重系统", "计算机应用与软件：海量网络文本去重系统实验测试，"
                  "这是一段测试文本的内容。北京时间2019年3月5日，新华社记者报道。"))
    # plain tokens the kernel describes itself: unseen words, numbers with leading zeros,
    # repeated ones (term frequency), next to stopwords, IDF words and months it must
    # find in the table instead
    items.append(("zqxv quarterly wombatz", "the zqxv company reported 0042 widgets and "
                  "000 gadgets on may 12345678, zqxv zqxv 10px 0 00 007 march 3 "
                  "the of and wombatz iphone ibm"))
    preloaded = vocabulary.vocabulary_for(frozenset())
    # single-character dictionary words are ideographs too: count each word once
    assert preloaded.size >= len(set(vocabulary.start_vocabulary()))
    empty = vocabulary.Vocabulary(preloaded.stopwords)
    assert empty.size == 0
    segmenter = extraction.get_segmenter(EngineConfig().segmenter)
    for title, content in items:
        for text in (title, content):
            tokens = segmenter.cut(text)
            assert (empty.fingerprint(tokens, True, extraction.WEAK_BITS, True)
                    == preloaded.fingerprint(tokens, True, extraction.WEAK_BITS, True))
    assert empty.size > 0
    assert preloaded.default_weight > 0 and empty.default_weight == -1
    # a fresh text of dictionary words, single ideographs, numbers and unseen English
    # words adds nothing
    before = preloaded.size
    extract_many([("从未见过的标题", "一段从未出现过的正文，讲述2031年某地的麒麟与饕餮。"
                   "qwzx 9876543210 blorptastic")])
    assert preloaded.size == before


@pytest.mark.data
def test_clauses_match_the_regular_expressions() -> None:
    """kernel.clauses splits and hashes exactly as boilerplate.clauses and
    hashed_clauses: on real bodies, the edge cases and random strings of the
    characters the rules turn on (breaks, a literal backslash-n, spaces between CJK
    characters, NUL, underscores, surrogates, astral ideographs)."""
    from fingerprints.rule.boilerplate import CLAUSE_SEED, MIN_CLAUSE, clauses, hashed_clauses
    from fingerprints.rule.normalize import normalize

    assert kernel is not None
    texts = [content for _title, content in EDGE_CASES]
    for name, count in CORPORA.items():
        with (DATA / name / "docs.jsonl").open(encoding="utf-8") as handle:
            for _, line in zip(range(count // 4), handle, strict=False):
                row = json.loads(line)
                texts.append(row.get("content") or row.get("text") or "")
    texts += [normalize(text) for text in texts]
    rng = np.random.default_rng(5)
    alphabet = list("中文字ab \\nr\x00。，,.!_-1２é·•|、") + ["\u3400", "\U00020000", "\ud800"]
    texts += ["".join(rng.choice(alphabet, size=rng.integers(0, 40))) for _ in range(3000)]
    for text in texts:
        found = clauses(text)
        assert kernel.clauses(text, MIN_CLAUSE, CLAUSE_SEED) == (found, hashed_clauses(found))
    assert kernel.clauses("第一句话很长很长。第二句\\n第三句 中 文", 4, 7)[0] == [
        "第一句话很长很长", "第二句", "第三句", "中", "文"]


@pytest.mark.parametrize("k", [0, 3, 8])
def test_query_union_matches_the_python_loop(k: int) -> None:
    # crowded buckets: fingerprints drawn near a few centres, probes and radii as a
    # worker uses them, items removed and added again; the kernel's buckets must give
    # the same items, fingerprints and order as the dict buckets
    from fingerprints.stores.block_index import MemoryBlockIndex

    assert kernel is not None
    rng = np.random.default_rng(k)
    centres = rng.integers(0, 2**63, size=8, dtype=np.uint64).tolist()
    fast_index, slow_index = MemoryBlockIndex(k), MemoryBlockIndex(k, compiled=False)

    def near(centre: int, flips: int) -> int:
        for bit in rng.choice(64, size=flips, replace=False).tolist():
            centre ^= 1 << bit
        return centre

    for item in range(3000):
        fp = near(centres[item % 8], int(rng.integers(0, 12)))
        for index in (fast_index, slow_index):
            index.add(item, fp)
    for item in range(0, 3000, 7):  # out, and some back under another fingerprint
        fp = fast_index._items[item]
        moved = near(centres[item % 8], int(rng.integers(0, 12)))
        for index in (fast_index, slow_index):
            index.remove(item, fp)
            if item % 2:
                index.add(item, moved)
    for radius in (k, 8, 64):
        hits = 0
        for trial in range(40):
            fp = near(centres[trial % 8], int(rng.integers(0, 10)))
            fps = [fp, *(fp ^ (1 << int(b)) for b in rng.choice(64, size=6, replace=False))]
            fast = fast_index.query_union(fps, radius)
            assert list(fast.items()) == list(slow_index.query_union(fps, radius).items())
            assert fast_index.query(fp, radius) == slow_index.query(fp, radius)
            hits += len(fast)
        assert hits > (0 if radius < 8 else 40)  # the centres' neighbourhoods are crowded
    fp = fast_index._items[8]
    assert fast_index.query_union([np.uint64(fp)]) == fast_index.query_union([fp])  # NumPy ints
    for bad in (-1, 1 << 64, 1.5, "1"):  # the Python loop refuses the same
        for index in (fast_index, slow_index):
            with pytest.raises(ValueError, match="unsigned 64-bit"):
                index.query_union([bad])
    assert slow_index.query_union([np.uint64(fp)], 3) == fast_index.query_union([fp], 3)
    big = (1 << 64) - 1  # the batch engine's items are fingerprints themselves
    fast_index.add(big, big)
    assert fast_index.query_union([big], 0) == {big: big}
    fast_index.remove(big, big)
    fast_index.clear()
    assert fast_index.query_union([fp, big], 64) == {}
    with pytest.raises(ValueError, match="1 to 16 blocks"):
        kernel.BlockTable([])


def test_text_keys_match_the_regex() -> None:
    # letters and digits of every script, the underscore, marks, astral characters,
    # punctuation and spaces; keys longer and shorter than MAX_KEY_CHARS
    from fingerprints.rule.headline import text_key, text_key_py

    assert kernel is not None
    rng = np.random.default_rng(11)
    alphabet = list("aZ09_ -—（）【】,.·") + ["\u0301", "\u00e9", "\u0660", "\u2167", "\U0002a6a5",
                                            "中", "国", "\u3000", "\ufe0f", "\u00b2"]
    texts = ["", "_", "新华社北京1月5日电", "x" * 500]
    texts += ["".join(rng.choice(alphabet, size=rng.integers(0, 140))) for _ in range(3000)]
    for text in texts:
        assert text_key(text) == text_key_py(text)


def test_probes_match_the_python_loop() -> None:
    import random
    from itertools import combinations

    from fingerprints.rule.probes import _block_masks, _block_of_bit, _probes, _probes_py

    def by_definition(fp: int, weak: bytes, k: int, probe_bits: int) -> tuple[int, ...]:
        out = []
        for mask in _block_masks(k):
            bits = [1 << b for b in weak if (1 << b) & mask][:probe_bits]
            for size in range(1, len(bits) + 1):
                out.extend(fp ^ sum(subset) for subset in combinations(bits, size))
        return tuple(out)

    assert kernel is not None
    rng = random.Random(2)
    for _ in range(3000):
        k, probe_bits = rng.randint(0, 8), rng.randint(0, 4)
        weak = bytes(rng.sample(range(64), rng.randint(0, 30)))
        fp = rng.getrandbits(64)
        expected = by_definition(fp, weak, k, probe_bits)
        assert kernel.probes(fp, weak, _block_of_bit(k), probe_bits) == expected
        assert _probes_py(fp, weak, k, probe_bits) == expected == _probes(fp, weak, k,
                                                                          probe_bits)
    for _ in range(500):  # stored weak bits are distinct; a repeated one adds, as sum() does
        k, probe_bits = rng.randint(0, 8), rng.randint(1, 4)
        weak = bytes(rng.choice(range(60)) for _ in range(rng.randint(1, 30)))
        fp = rng.getrandbits(64)
        assert (kernel.probes(fp, weak, _block_of_bit(k), probe_bits)
                == by_definition(fp, weak, k, probe_bits))
    with pytest.raises(ValueError, match="64 entries"):
        kernel.probes(1, b"\x01", b"\x00" * 10, 3)
    with pytest.raises(ValueError, match="weak bit"):
        kernel.probes(1, b"\x50", _block_of_bit(3), 3)


def test_number_conflicts_match_the_python() -> None:
    import random
    from types import SimpleNamespace

    from fingerprints.rule.verification import _number_conflicts_py, number_conflicts

    assert kernel is not None
    rng = random.Random(4)

    def side() -> SimpleNamespace:
        # few contexts and values, so contexts are shared and values agree or not;
        # names (0x8000) beside numbers; sometimes truncated (count > kept)
        values = sorted({rng.choice([1, 2, 3, 0xFFFF]) << 16
                         | rng.choice([0, 0x8000]) | rng.randint(0, 3)
                         for _ in range(rng.randint(0, 12))})
        data = np.array(values, dtype="<u4").tobytes()
        return SimpleNamespace(numbers=data, number_count=len(values) + rng.choice([0, 0, 5]))

    seen = set()
    for _ in range(5000):
        a, b = side(), side()
        for names in (False, True):
            expected = _number_conflicts_py(a, b, names=names)
            assert number_conflicts(a, b, names=names) == expected
            seen.add(expected)
    assert len(seen) > 10 and any(c for c, _ in seen)  # conflicts and agreements both met
    with pytest.raises(ValueError, match="whole uint32"):
        kernel.number_conflicts(b"\x01\x02\x03", 1, b"", 0, False)


@pytest.mark.skipif(kernel is None, reason="needs the C kernel")
def test_the_per_article_functions_check_their_arguments() -> None:
    # the per-article functions (sketch, normalize, clause_keys, body_parts and the
    # others below) read their arguments without
    # PyArg_ParseTuple (_args.h): the same checks, the same results for good ones
    from fingerprints.rule.boilerplate import _clause_keys, clause_keys_py
    from fingerprints.rule.normalize import normalize_py, simple_table

    assert kernel is not None
    table, pool = simple_table()
    text = "新华社北京11月29日电，国务院总理今天表示：经济稳中向好。"
    assert kernel.normalize(text, table, pool) == normalize_py(text)
    found = kernel.sketch(normalize_py(text), _KEEP)
    assert found[:3] == tuple(getattr(sketch_one(normalize_py(text)), name)
                              for name in ("level", "shingles", "samples"))
    assert kernel.body_parts(text, len(text), found[2], _KEEP) == kernel.body_parts(
        text, np.int64(len(text)), bytearray(found[2]), memoryview(_KEEP))
    assert _clause_keys(normalize_py(text)) == clause_keys_py(normalize_py(text))
    for call, args in ((kernel.sketch, (text,)), (kernel.sketch, (text, _KEEP, 1)),
                       (kernel.sketch, (b"text", _KEEP)), (kernel.sketch, (text, text)),
                       (kernel.normalize, (text, table)), (kernel.normalize, (1, table, pool)),
                       (kernel.normalize, (text, table, "pool")),
                       (kernel.body_parts, (text, 1.5, found[2], _KEEP)),
                       (kernel.body_parts, (text, 1, found[2], "keep")),
                       (kernel.clause_keys, (text, 1, 2.0, 3, 4, 5, 6, 7)),
                       (kernel.clause_keys, (text, 1, 2, 3, 4, 5, 6))):
        with pytest.raises(TypeError):
            call(*args)
    with pytest.raises(OverflowError):
        kernel.clause_keys(text, 2**70, 1, 1, 1, 1, 1, 1)
    # and letters_and_digits, probes, observe
    block_of = bytes(b // 16 for b in range(64))
    assert kernel.letters_and_digits("a-b 1", np.int8(2)) == "ab"
    assert kernel.probes(5, b"\x00", block_of, 1) == (4,)
    assert kernel.probes(2**64 + 5, bytearray(b"\x00"), block_of, np.int32(1)) == (4,)
    slots = np.zeros(4, dtype=np.uint32)
    assert kernel.observe(slots, [1, 2], 2, 1) is not None
    for call, args in ((kernel.letters_and_digits, (b"ab", 2)),
                       (kernel.letters_and_digits, ("ab", "2")),
                       (kernel.probes, (5.0, b"\x00", block_of, 1)),
                       (kernel.probes, (5, "w", block_of, 1)),
                       (kernel.probes, (5, b"\x00", block_of)),
                       (kernel.observe, (b"\x00" * 16, [1], 2, 1)),
                       (kernel.observe, (slots, [1], 2.0, 1))):
        with pytest.raises(TypeError):
            call(*args)
    with pytest.raises(OverflowError):
        kernel.probes(5, b"\x00", block_of, 2**40)
