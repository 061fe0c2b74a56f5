"""The kernel reading the body's tokens in the body by their offsets
(``kernel.fingerprint_spans`` over the C segmenter's ``cut_ids``) gives the bytes of the
list-of-str path (``kernel.fingerprint`` over ``cut``), as test_tokenize_segmenter.py proves
the C segmenter against rjieba."""

from __future__ import annotations

import json
import random
from array import array
from itertools import islice
from pathlib import Path
from typing import Any

import pytest

from fingerprints.rule import (
    EngineConfig,
    extract_many,
    extraction,
    segment_c,
    tokenize,
    vocabulary,
)
from fingerprints.rule.kernel import kernel
from fingerprints.rule.normalize import normalize
from fingerprints.rule.stopwords import build_stopwords
from fingerprints.rule.tokenize import Segmenter

from .test_kernel import EDGE_CASES
from .test_segment_c import EDGE_CASES as SEGMENT_EDGE_CASES
from .test_segment_c import _fuzz

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
CORPORA = {
    "xinhua_uhgeval_zh": 1000,
    "bdci2019_inews_zh_train": 1000,
    "thucnews_cnews_sample_zh": 300,
    "bbc_news_en": 300,
    "cnndm_halueval_en": 200,
}
SPEC = EngineConfig().segmenter

pytestmark = pytest.mark.skipif(
    kernel is None or not Segmenter(SPEC).uses_c,
    reason="needs the C kernel and the C segmenter",
)


def _features(items: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch, *,
              path: str) -> list[bytes]:
    """extract_many's bytes through the cut path (the kernel cuts, tokens found by
    their trie nodes), the node path (the same through cut_nodes' arrays), the span path
    or the list of str, checking that the bodies went the way asked."""
    calls = []
    method = {"cut": "fingerprint_cut", "nodes": "fingerprint_nodes",
              "spans": "fingerprint_spans"}.get(path)
    original = getattr(vocabulary.Vocabulary, method) if method else None

    def counted(*args: Any) -> tuple[int, int, bytes, int, bytes]:
        calls.append(1)
        assert original is not None
        found: tuple[int, int, bytes, int, bytes] = original(*args)
        return found

    with monkeypatch.context() as patch:
        patch.setattr(extraction, "TOKEN_PATH", path)
        if method:
            patch.setattr(vocabulary.Vocabulary, method, counted)
        features = [f.to_bytes() for f in extract_many(items, compiled=True)]
    assert len(calls) == (len(items) if method else 0)
    return features


def _assert_same_features(items: list[tuple[str, str]],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    # the cut path first, so that it meets words the vocabulary does not know yet and
    # nodes it has not mapped; a second time with the nodes mapped
    first = _features(items, monkeypatch, path="cut")
    again = _features(items, monkeypatch, path="cut")
    with_nodes = _features(items, monkeypatch, path="nodes")
    with_spans = _features(items, monkeypatch, path="spans")
    with_strings = _features(items, monkeypatch, path="strings")
    for found in (first, again, with_nodes, with_spans):
        mismatched = [items[i][:1] for i, (a, b) in enumerate(zip(found, with_strings,
                                                                 strict=True)) if a != b]
        assert mismatched == []


def _corpus(name: str, limit: int) -> list[tuple[str, str]]:
    path = DATA / name / "docs.jsonl"
    assert path.exists(), f"missing corpus {path}"
    with path.open(encoding="utf-8") as handle:
        docs = [json.loads(line) for line in islice(handle, limit)]
    return [(doc.get("title") or "", doc.get("content") or doc.get("text") or "")
            for doc in docs]


@pytest.mark.data
@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_it_gives_the_list_of_str_bytes_on_real_news(
    corpus: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = _corpus(corpus, CORPORA[corpus])
    assert len(items) == CORPORA[corpus]
    _assert_same_features(items, monkeypatch)


def test_it_gives_the_list_of_str_bytes_on_edge_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    items = list(EDGE_CASES)
    items += [("", text) for text in SEGMENT_EDGE_CASES]
    items += [(text, text) for text in SEGMENT_EDGE_CASES]
    _assert_same_features(items, monkeypatch)


@pytest.fixture(scope="module")
def words() -> list[str]:
    path = segment_c.dictionary_path()
    assert path is not None
    return [word for word, _ in segment_c.read_dictionary(path)]


def test_it_gives_the_list_of_str_bytes_on_seeded_fuzz(
    monkeypatch: pytest.MonkeyPatch, words: list[str]
) -> None:
    # no lone surrogates: the vocabulary's keys (vocabulary._token_keys) cannot take them
    texts = list(_fuzz(random.Random(3636), words, 4000, surrogates=False))
    items = list(zip(texts[::2], texts[1::2], strict=True))
    _assert_same_features(items, monkeypatch)


@pytest.mark.parametrize("defaults", [False, True])
def test_the_kernel_reads_the_same_tokens_as_from_a_list(words: list[str], defaults: bool) -> None:
    # straight against kernel.fingerprint, each with an empty vocabulary of its own, so
    # that the span path hands back (as str) every word it meets first; with the
    # defaults on, the plain words of wide texts are described in the kernel instead
    by_spans, by_strings = (vocabulary.Vocabulary(build_stopwords(frozenset()))
                            for _ in range(2))
    if defaults:
        by_spans.enable_defaults()
        by_strings.enable_defaults()
    segmenter = tokenize.get_segmenter(SPEC)
    # normalized, as the engine gives them (normalize drops what _token_keys cannot key)
    texts = [normalize(text) for text in _fuzz(random.Random(363), words, 1000,
                                                   surrogates=False)]
    texts += ["abc123 中文 x9 𝟘 zz", "latin ü 42 0042 word", "全新词汇qzx 😀 qzx9"]
    for text in texts:
        spans = segmenter.cut_ids(text)
        tokens = [text[s:e] for s, e in zip(spans[::2], spans[1::2], strict=True)]
        assert tokens == segmenter.cut(text)
        for args in ((True, extraction.WEAK_BITS, True), (False, 0, False)):
            assert (by_spans.fingerprint_spans(text, spans, *args)
                    == by_strings.fingerprint(tokens, *args)), text
    assert by_spans.size == by_strings.size > 1000


def test_bad_spans_raise_clear_errors() -> None:
    assert kernel is not None
    tables = vocabulary.vocabulary_for(frozenset()).kernel_tables()
    with pytest.raises(ValueError, match="outside the text"):
        kernel.fingerprint_spans("abc", array("I", [0, 4]), tables, True, 24, True)
    with pytest.raises(ValueError, match="outside the text"):
        kernel.fingerprint_spans("abc", array("I", [2, 1]), tables, True, 24, True)
    with pytest.raises(TypeError, match="pairs"):
        kernel.fingerprint_spans("abc", array("I", [0, 1, 2]), tables, True, 24, True)
    with pytest.raises(TypeError, match="pairs"):
        kernel.fingerprint_spans("abc", array("H", [0, 1]), tables, True, 24, True)
    with pytest.raises(TypeError, match="fingerprint_spans"):
        kernel.fingerprint_spans(["abc"], array("I", [0, 1]), tables, True, 24, True)
    empty = kernel.fingerprint_spans("", array("I"), tables, True, 24, True)
    assert empty == kernel.fingerprint([], tables, True, 24, True)


def test_the_node_path_checks_the_spans_it_reads() -> None:
    # fingerprint_nodes reads a token's span only when its node is not mapped yet (node
    # 0: none), and checks it there
    assert kernel is not None
    tables = vocabulary.vocabulary_for(frozenset()).kernel_tables()
    node_ids = array("i", [-1, -1])
    for spans in ([0, 4], [2, 1]):
        with pytest.raises(ValueError, match="outside the text"):
            kernel.fingerprint_nodes("abc", array("I", spans), array("I", [0]), node_ids,
                                     tables, True, 24, True)
    good = kernel.fingerprint_nodes("abc", array("I", [0, 3]), array("I", [0]), node_ids,
                                    tables, True, 24, True)
    assert good == kernel.fingerprint(["abc"], tables, True, 24, True)


def test_the_cut_path_gives_the_node_path_and_rejects_what_it_cannot_cut() -> None:
    # fingerprint_cut is fingerprint_nodes over the segmenter's own cut_nodes, the
    # segmenter called from C; each with a node map of its own, mapped as it goes
    assert kernel is not None
    vocab = vocabulary.vocabulary_for(frozenset())
    tables = vocab.kernel_tables()
    segmenter = tokenize.get_segmenter(SPEC)
    trie = segmenter.trie
    by_cut, by_nodes = (array("i", [-1]) * trie.node_count for _ in range(2))
    texts = ["", "abc123 中文 x9 𝟘 zz", "新华社北京11月29日电，国务院总理今天表示。",
             "\r\n 😀 qzx"]
    for text in texts:
        spans, nodes = segmenter.cut_nodes(text)
        for args in ((True, 24, True), (False, 0, False)):
            assert (kernel.fingerprint_cut(text, trie, by_cut, tables, *args)
                    == kernel.fingerprint_nodes(text, spans, nodes, by_nodes, tables, *args))
    assert by_cut == by_nodes
    with pytest.raises(TypeError, match="Segmenter"):
        kernel.fingerprint_cut("abc", object(), by_cut, tables, True, 24, True)
    with pytest.raises(TypeError, match="int32"):
        kernel.fingerprint_cut("abc", trie, array("H", [0]), tables, True, 24, True)
    with pytest.raises(TypeError, match="fingerprint_cut"):
        kernel.fingerprint_cut(["abc"], trie, by_cut, tables, True, 24, True)
