"""The engine's segmenter: the C segmenter for the default spec, rjieba otherwise, and
the same feature bytes either way (as test_kernel.py proves the kernel against NumPy)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import rjieba

from fingerprints.rule import EngineConfig, extract_many, segment_c, tokenize
from fingerprints.rule.tokenize import Segmenter, SegmenterSpec, c_segmenter_enabled

from ..texts import SAMPLE_SENTENCES
from .test_kernel import EDGE_CASES
from .test_segment_c import EDGE_CASES as SEGMENT_EDGE_CASES
from .test_segment_c import _fuzz

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
CORPORA = {
    "xinhua_uhgeval_zh": 1500,
    "bdci2019_inews_zh_train": 1500,
    "thucnews_cnews_sample_zh": 300,
    "bbc_news_en": 300,
    "cnndm_halueval_en": 200,
}
SPEC = EngineConfig().segmenter


def _features(items: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch, *, use_c: bool,
              compiled: bool | None = None) -> list[bytes]:
    """extract_many's bytes with the engine's shared segmenter replaced by one that cuts
    with the C segmenter or with rjieba."""
    segmenter = Segmenter(SPEC, use_c=use_c)
    assert segmenter.uses_c is use_c
    with monkeypatch.context() as patch:
        patch.setitem(tokenize._cache, SPEC, segmenter)
        return [f.to_bytes() for f in extract_many(items, compiled=compiled)]


def _assert_same_features(items: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch,
                          compiled: bool | None = None) -> None:
    c_bytes = _features(items, monkeypatch, use_c=True, compiled=compiled)
    rjieba_bytes = _features(items, monkeypatch, use_c=False, compiled=compiled)
    mismatched = [items[i][:1] for i, (a, b) in enumerate(zip(c_bytes, rjieba_bytes,
                                                             strict=True)) if a != b]
    assert mismatched == []


def test_the_default_spec_cuts_with_the_c_segmenter() -> None:
    assert segment_c.available(), "build it: .venv/bin/python setup.py build_ext --inplace"
    assert Segmenter(SPEC).uses_c
    assert tokenize.get_segmenter(SPEC).uses_c
    text = "工信处女干事每月经过下属科室都要亲口交代24口交换机等技术性器件的安装工作"
    assert Segmenter().cut(text) == rjieba.Jieba().cut(text, False)


def test_other_specs_keep_rjieba_or_jieba() -> None:
    # the HMM is not in the C segmenter; with user words rjieba's suggest_freq is not
    # jieba's (docs/results/segment.md), so user words stay with rjieba
    word = "天安门广场看升旗"
    for spec in (SegmenterSpec(hmm=True), SegmenterSpec(user_words=((word, None, None),)),
                 SegmenterSpec(user_words=((word, 5, None),)), SegmenterSpec(backend="jieba")):
        assert not Segmenter(spec).uses_c, spec
    with_word = Segmenter(SegmenterSpec(user_words=((word, None, None),)))
    assert "天安门广场看升旗" in with_word.cut("我们在北京天安门广场看升旗")
    assert "天安门广场看升旗" not in tokenize.segment("我们在北京天安门广场看升旗")


@pytest.mark.parametrize("value", ["0", "false", "No", " off "])
def test_dedup_c_segmenter_0_turns_it_off(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("DEDUP_C_SEGMENTER", value)
    assert not c_segmenter_enabled()
    segmenter = Segmenter(SPEC)
    assert not segmenter.uses_c
    assert segmenter.cut("南京市长江大桥") == Segmenter(SPEC, use_c=True).cut("南京市长江大桥")


@pytest.mark.parametrize("value", [None, "", "1", "yes", "on"])
def test_dedup_c_segmenter_is_on_by_default(monkeypatch: pytest.MonkeyPatch,
                                            value: str | None) -> None:
    if value is None:
        monkeypatch.delenv("DEDUP_C_SEGMENTER", raising=False)
    else:
        monkeypatch.setenv("DEDUP_C_SEGMENTER", value)
    assert c_segmenter_enabled()
    assert Segmenter(SPEC).uses_c


def test_it_falls_back_to_rjieba_without_the_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "工信处女干事每月经过下属科室"
    expected = segment_c.get().cut(text)
    monkeypatch.setattr(segment_c, "Segmenter", None)
    assert not segment_c.available()
    segmenter = Segmenter(SPEC)
    assert not segmenter.uses_c
    assert segmenter.cut(text) == expected


def test_it_gives_the_rjieba_features_on_edge_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = SEGMENT_EDGE_CASES + SAMPLE_SENTENCES
    items = EDGE_CASES + [(text, text) for text in texts] + [("", text) for text in texts]
    _assert_same_features(items, monkeypatch, compiled=True)
    _assert_same_features(items, monkeypatch, compiled=False)


def test_it_gives_the_rjieba_features_on_random_text(monkeypatch: pytest.MonkeyPatch) -> None:
    path = segment_c.dictionary_path()
    assert path is not None
    words = [word for word, _ in segment_c.read_dictionary(path)]
    texts = list(_fuzz(random.Random(3600), words, 4000, surrogates=False))
    items = list(zip(texts[::2], texts[1::2], strict=True))
    _assert_same_features(items, monkeypatch)


@pytest.mark.data
@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_it_gives_the_rjieba_features_on_real_news(monkeypatch: pytest.MonkeyPatch,
                                                   corpus: str) -> None:
    path = DATA / corpus / "docs.jsonl"
    assert path.exists(), f"missing corpus {path}"
    items = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            items.append((row.get("title") or "", row.get("content") or row.get("text") or ""))
            if len(items) >= CORPORA[corpus]:
                break
    _assert_same_features(items, monkeypatch)
