"""The kernel's clause keys (``kernel.clause_keys``: a body's distinct clause hashes,
short text and keys in one pass, no str per clause) and sketch overlaps
(``kernel.overlap``) against the Python they replace: the same values."""

from __future__ import annotations

import json
import random
from itertools import islice
from pathlib import Path

import pytest

from fingerprints.rule import boilerplate, sketch
from fingerprints.rule.boilerplate import MIN_CLAUSE, Stripped, clause_keys_py
from fingerprints.rule.kernel import kernel
from fingerprints.rule.normalize import normalize
from fingerprints.rule.sketch import Sketch, compare, compare_py, sketch_one

from .test_kernel import EDGE_CASES
from .test_segment_c import EDGE_CASES as SEGMENT_EDGE_CASES

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
CORPORA = {
    "xinhua_uhgeval_zh": 1000,
    "bdci2019_inews_zh_train": 1500,
    "thucnews_cnews_sample_zh": 300,
    "bbc_news_en": 300,
    "cnndm_halueval_en": 300,
}

pytestmark = pytest.mark.skipif(kernel is None, reason="needs the C kernel")

# what splits clauses, and what is next to the splits
_PIECES = [
    *"abcXYZ019_", *"。，、！？；：.,!?;:|•·", " ", "  ", "\\", "\\n", "\\r", "\\\\n", "\\x",
    "\x00", "\n", "\u3000", "😀", "𠀀", "é", "\u0301", "٣", "²", "Ⅻ", "\ud800",
    "中", "文", "中 文", "中\x00 文", "第一句话很长很长", "a long english clause of words",
]


def _fuzz(rng: random.Random, count: int) -> list[str]:
    return ["".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 60)))
            for _ in range(count)]


def _corpus(name: str, limit: int) -> list[str]:
    path = DATA / name / "docs.jsonl"
    assert path.exists(), f"missing corpus {path}"
    with path.open(encoding="utf-8") as handle:
        docs = [json.loads(line) for line in islice(handle, limit)]
    return [doc.get("content") or doc.get("text") or "" for doc in docs]


def _by_kernel(text: str) -> Stripped:
    found = boilerplate._clause_keys(text)
    assert kernel is not None
    return found


def _assert_same_clause_keys(texts: list[str]) -> None:
    mismatched = [text[:40] for text in texts if _by_kernel(text) != clause_keys_py(text)]
    assert mismatched == []


@pytest.mark.data
@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_clause_keys_match_the_python_on_real_news(corpus: str) -> None:
    contents = _corpus(corpus, CORPORA[corpus])
    assert len(contents) == CORPORA[corpus]
    # normalized (as the engine gives them) and raw (breaks and letters of any kind)
    _assert_same_clause_keys([normalize(text) for text in contents] + contents)


def test_clause_keys_match_the_python_on_edge_cases_and_fuzz() -> None:
    texts = [content for _title, content in EDGE_CASES] + list(SEGMENT_EDGE_CASES)
    texts += ["", "\\", "\\n", "a\\nb", "abcdefgh", "abcdefg", "x" * 96, "x" * 97,
              "y" * 95 + "\\n", "中 文 字", "short. but twelve letters"]
    texts += _fuzz(random.Random(36), 20_000)
    _assert_same_clause_keys(texts)
    _assert_same_clause_keys([normalize(text) for text in texts if "\ud800" not in text])


def test_clause_keys_follow_their_arguments() -> None:
    assert kernel is not None
    text = "第一句话很长很长很长很长。第二句很长很长很长很长，短句。abcdefghij"
    hashes, short, keys, _ = kernel.clause_keys(text, MIN_CLAUSE, 1, 10, 16, 96, 8, 2)
    assert len(hashes) == 3 and short == text.replace("。", "").replace("，", "")
    assert len(keys) == 4 * 5  # three long clauses and two edges
    assert kernel.clause_keys(text, MIN_CLAUSE, 1, 10, 2, 96, 8, 2)[2] == keys[:8]
    # a body longer than max_key_chars has no short text, so no edge keys
    hashes_long, short_long, keys_long, _ = kernel.clause_keys(text, MIN_CLAUSE, 1, 10, 16, 10,
                                                            8, 2)
    assert hashes_long == hashes and short_long == "" and len(keys_long) == 4 * 3
    assert {keys_long[i : i + 4] for i in range(0, 12, 4)} <= {
        keys[i : i + 4] for i in range(0, 20, 4)}
    with pytest.raises(ValueError, match=">= 0"):
        kernel.clause_keys(text, MIN_CLAUSE, 1, 10, -1, 96, 8, 2)
    with pytest.raises(ValueError, match="0-32"):  # the quoted bits: 32 at most
        kernel.clause_keys(text, MIN_CLAUSE, 1, 10, 33, 96, 8, 2)


def test_story_clauses_are_the_distinct_hashes_in_order() -> None:
    body = "这是重复的一句话。这是另一句话呀。这是重复的一句话。短。"
    _, hashes = boilerplate.story_clauses(body, frozenset())
    found = boilerplate.clauses(body)
    expected = list(dict.fromkeys(h for h in boilerplate.hashed_clauses(found) if h))
    assert hashes == expected and len(hashes) == 2


def test_overlap_matches_numpy() -> None:
    texts = [normalize(text) for name, limit in CORPORA.items() for text in
             _corpus(name, min(limit, 150))]
    sketches = [sketch_one(text) for text in texts]
    sketches += [Sketch(0, 0, b""), Sketch(3, 5, b""), sketch_one("一二三四五六七八九十")]
    rng = random.Random(7)
    pairs = [(rng.choice(sketches), rng.choice(sketches)) for _ in range(5000)]
    pairs += list(zip(sketches, sketches[1:], strict=False))
    pairs += [(s, s) for s in sketches]
    assert [compare(a, b) for a, b in pairs] == [compare_py(a, b) for a, b in pairs]


def test_overlap_leaves_unsorted_samples_to_numpy() -> None:
    assert kernel is not None
    unsorted = Sketch(0, 3, bytes([3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]))
    other = Sketch(0, 2, bytes([1, 0, 0, 0, 3, 0, 0, 0]))
    assert kernel.overlap(unsorted.samples, 0, other.samples, 0) is None
    assert compare(unsorted, other) == compare_py(unsorted, other)
    assert compare(unsorted, other).shared == 2
    with pytest.raises(ValueError, match="uint32"):
        kernel.overlap(b"abc", 0, b"", 0)
    assert sketch.compare is compare
