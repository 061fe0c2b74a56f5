"""Features version 7: the kernel's quoted bits (``kernel.clause_keys``' fourth value,
tracked in its walk over the body) against ``boilerplate.quoted_keys_py``
(the same bits on every article of the five corpora, on generated texts and on edge
cases), and the names in context by kind (kernel and NumPy give the same bytes; the
kinds, the rarity, a run outside the dictionary)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprints.rule.boilerplate import (
    CLAUSE_SEED,
    MIN_CLAUSE,
    QUOTE_ENDS,
    QUOTE_LEADS,
    clause_keys_py,
    quoted_keys,
    quoted_keys_py,
    strip_with_clauses,
)
from fingerprints.rule.comparison import _names_and_quotes, _names_and_quotes_py, compare_pair
from fingerprints.rule.extraction import extract_many
from fingerprints.rule.features import MAX_KEY_CHARS, Features
from fingerprints.rule.kernel import kernel
from fingerprints.rule.keys import EDGE, EDGE_SEED, MIN_KEY_CLAUSE, QUERY_KEYS
from fingerprints.rule.normalize import normalize
from fingerprints.rule.shorttext import KIND_OTHER, KIND_PERSON, KIND_PLACE, name_kinds, rarity_of

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
CORPORA = ["xinhua_uhgeval_zh", "thucnews_cnews_sample_zh", "bbc_news_en", "cnndm_halueval_en",
           "bdci2019_inews_zh_train"]
PIECES = [*"“”「」『』‘’\"。，！？!?.,;: \\n", "\\n", "\n", "据", "据警方通报", "according to",
          *QUOTE_ENDS, "记者在现场看到一辆货车", "the fire brigade arrived at noon",
          "消防部门正在调查起火原因", "中", "a", "1", "𠀀", "\x00"]


def _assert_same(body: str) -> int:
    stripped = clause_keys_py(body)
    expected = quoted_keys_py(body, stripped.keys)
    assert stripped.quoted == expected
    if kernel is not None:
        hashes, short, keys, quoted = kernel.clause_keys(
            body, MIN_CLAUSE, CLAUSE_SEED, MIN_KEY_CLAUSE, QUERY_KEYS, MAX_KEY_CHARS, EDGE,
            EDGE_SEED)
        assert (hashes, short, keys) == stripped[1:4], body[:80]
        assert quoted == expected, body[:80]
    return expected


@pytest.mark.skipif(kernel is None, reason="needs the C kernel")
@pytest.mark.data
@pytest.mark.parametrize("corpus", CORPORA)
def test_every_article_of_the_corpora_gives_the_python_quoted_keys(corpus: str) -> None:
    path = DATA / corpus / "docs.jsonl"
    assert path.exists(), f"missing corpus {path}"
    measured = quoted = 0
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            body = strip_with_clauses(normalize(row.get("content") or row.get("text") or ""),
                                      frozenset()).body
            quoted += bool(_assert_same(body))
            measured += 1
    assert measured > 1000 and quoted > 0


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=200), st.sampled_from([1, 3, 30]))
def test_generated_texts_give_the_python_quoted_keys(pieces: list[str], repeat: int) -> None:
    _assert_same("".join(pieces) * repeat)


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(exclude_categories=("Cs",)), max_size=300))
def test_any_text_gives_the_python_quoted_keys(body: str) -> None:
    _assert_same(body)


def _quoted_clauses(body: str) -> list[bool]:
    """Which of the body's keys are quoted, in key order."""
    keys = strip_with_clauses(body, frozenset()).keys
    mask = quoted_keys(body)
    return [bool(mask >> i & 1) for i in range(len(keys) // 4)]


def test_quotation_marks_and_attribution_make_a_clause_quoted() -> None:
    plain = "记者在现场看到一辆货车停在路边，消防部门正在调查起火原因。"
    assert not any(_quoted_clauses(plain))
    for quoted in ("“记者在现场看到一辆货车停在路边，消防部门正在调查起火原因。”",
                   "「记者在现场看到一辆货车停在路边，消防部门正在调查起火原因。」",
                   "据警方通报，记者在现场看到一辆货车停在路边，消防部门正在调查起火原因。",
                   "警方表示，记者在现场看到一辆货车停在路边，消防部门正在调查起火原因。"):
        assert sum(_quoted_clauses(quoted)) == 2, quoted  # two clauses (and two edge keys)
    # the attribution ends with its sentence; a quote left open ends after MAX_QUOTE
    after = "警方表示，记者在现场看到一辆货车停在路边。消防部门正在调查起火原因和损失情况。"
    assert sum(_quoted_clauses(after)) == 1
    assert sum(_quoted_clauses("“" + "很" * 600 + "。" + plain)) == 1  # only its own
    assert sum(_quoted_clauses("according to police, the fire brigade arrived at noon.")) == 2
    assert QUOTE_LEADS == ("据", "accordingto")


def test_names_carry_their_kind_and_rarity_in_both_paths() -> None:
    kinds = name_kinds()
    assert kinds["北京"][0] == KIND_PLACE and kinds["习近平"][0] == KIND_PERSON
    assert kinds["北京"][1] < kinds["公安局"][1] < kinds["习近平"][1] <= 15
    assert rarity_of(60_000_000, 60_000_000) == 1 and rarity_of(60_000_000, 1) == 15
    texts = [("t", "据北京市公安局通报，张晓明在海淀区驾车时与货车相撞。华为公司表示将配合调查。"),
             ("t", "the man said he saw the fire in london, according to police.")]
    compiled = extract_many(texts, compiled=True) if kernel is not None else None
    reference = extract_many(texts, compiled=False)
    if compiled is not None:
        assert compiled == reference
    names = np.frombuffer(reference[0].names or b"", dtype="<u4")
    found_kinds = {int(v) >> 14 & 3 for v in names}
    assert {KIND_PLACE, KIND_OTHER} <= found_kinds  # 海淀区 a place; 张晓明 outside: other
    assert reference[0].name_count == len(names)
    assert Features.from_bytes(reference[0].to_bytes()) == reference[0]


def test_the_version_7_comparisons_read_names_by_kind_and_quoted_keys() -> None:
    story = ("据北京市公安局通报，3月5日，张晓明在海淀区驾车时与一辆货车相撞。"
             "警方表示，事故原因正在调查中，伤者已被送往医院救治。")
    other_town = story.replace("海淀区", "朝阳区")
    a, b, c = extract_many([("t", story), ("t", other_town), ("t", story)])
    same = compare_pair(a, c)
    assert same.names_kind_conflict == 0.0 and same.names_place_conflict == 0.0
    assert same.quoted_shared is not None and same.quoted_shared > 0
    moved = compare_pair(a, b)
    assert moved.names_place_conflict and moved.names_place_conflict > 0
    assert moved.names_kind_conflicts and moved.names_kind_conflicts >= 1
    assert compare_pair(b, a) == moved
    # a version-6 row: the version-7 comparisons are missing
    older = Features.from_bytes(a.to_bytes()[:-(3 + len(a.names or b"") + 2)].replace(
        b"\x07", b"\x06", 1))
    assert older.names is None and older.quoted is None
    assert compare_pair(older, b).names_kind_conflict is None
    assert compare_pair(older, b).quoted_shared is None


def _values(items: list[int]) -> bytes:
    return np.array(items, dtype="<u4").tobytes()


def _assert_same_comparisons(a: Features, b: Features) -> None:
    """The kernel's ``names_and_quotes`` against ``comparison._names_and_quotes_py``."""
    expected = tuple(_names_and_quotes_py(a, b).values())
    assert _names_and_quotes(a, b) == expected
    if kernel is not None:
        assert kernel.names_and_quotes(a.names or b"", a.name_count, b.names or b"",
                                       b.name_count, a.keys, a.quoted or 0, b.keys,
                                       b.quoted or 0) == expected


@pytest.mark.skipif(kernel is None, reason="needs the C kernel")
@pytest.mark.data
@pytest.mark.parametrize("corpus", ["xinhua_uhgeval_zh", "bdci2019_inews_zh_train"])
def test_the_kernel_gives_the_python_version_7_comparisons_on_news(corpus: str) -> None:
    path = DATA / corpus / "docs.jsonl"
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for _, line in zip(range(800), handle, strict=False)]
    found = extract_many([(row.get("title") or "", row.get("content") or row.get("text") or "")
                          for row in rows])
    measured = 0
    for i, a in enumerate(found):
        for b in found[max(0, i - 8) : i + 1]:  # neighbours (the corpus's near pairs) too
            _assert_same_comparisons(a, b)
            measured += 1
    assert measured > 5000



@settings(max_examples=1500, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 15),
                          st.integers(0, 2)), max_size=40),
       st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 15),
                          st.integers(0, 2)), max_size=40),
       st.integers(0, 3), st.integers(0, 3), st.booleans(),
       st.lists(st.integers(0, 6), max_size=16), st.lists(st.integers(0, 6), max_size=16),
       st.integers(0, 0xFFFF), st.integers(0, 0xFFFF))
def test_the_kernel_gives_the_python_version_7_comparisons_on_any_lists(
        names_a: list[tuple[int, int, int, int]], names_b: list[tuple[int, int, int, int]],
        extra_a: int, extra_b: int, ordered: bool, keys_a: list[int], keys_b: list[int],
        quoted_a: int, quoted_b: int) -> None:
    # few contexts, kinds and hashes (shared contexts, conflicts), rarity 0 too (a
    # division by zero on both paths), unsorted lists and repeats unless ``ordered``,
    # truncated sides (a count above what is kept)
    def pack(names: list[tuple[int, int, int, int]]) -> list[int]:
        values = [c << 16 | k << 14 | r << 10 | h for c, k, r, h in names]
        return sorted(set(values)) if ordered else values

    va, vb = pack(names_a), pack(names_b)
    ka = sorted(set(keys_a)) if ordered else keys_a
    kb = sorted(set(keys_b)) if ordered else keys_b
    base = extract_many([("t", "据警方通报，记者在现场看到一辆货车停在路边。")])[0]
    a = replace(base, names=_values(va), name_count=len(va) + extra_a, keys=_values(ka),
                quoted=quoted_a)
    b = replace(base, names=_values(vb), name_count=len(vb) + extra_b, keys=_values(kb),
                quoted=quoted_b)
    try:
        expected = tuple(_names_and_quotes_py(a, b).values())
    except ZeroDivisionError:
        if kernel is not None:
            with pytest.raises(ZeroDivisionError):
                _names_and_quotes(a, b)
        return
    assert _names_and_quotes(a, b) == expected
