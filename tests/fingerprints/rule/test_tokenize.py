import json
from pathlib import Path

import jieba
import rjieba

from fingerprints.rule.tokenize import Segmenter, SegmenterSpec, segment

from ..texts import SAMPLE_SENTENCES

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"


def _jieba_precise(text: str) -> list[str]:
    return list(jieba.cut(text, HMM=False))


def test_it_gives_jieba_tokens_with_rjieba_hmm_off_on_sample_texts() -> None:
    for text in SAMPLE_SENTENCES:
        assert rjieba.cut(text, hmm=False) == _jieba_precise(text)
        assert segment(text) == _jieba_precise(text)


def test_it_gives_jieba_tokens_on_real_chinese_news() -> None:
    # Fails loudly when the corpora are missing: they are part of the test setup.
    path = DATA / "xinhua_uhgeval_zh" / "docs.jsonl"
    assert path.exists(), f"missing corpus {path}"
    with path.open(encoding="utf-8") as handle:
        docs = [json.loads(next(handle)) for _ in range(150)]
    seg = Segmenter(SegmenterSpec("rjieba", hmm=False))
    for doc in docs:
        text = doc["title"] + "\n" + doc["content"]
        assert seg.cut(text) == _jieba_precise(text)


def test_it_applies_user_words_to_its_own_dictionary_only() -> None:
    spec = SegmenterSpec(user_words=(("天安门广场看升旗", None, None),))
    assert "天安门广场看升旗" in Segmenter(spec).cut("我们在北京天安门广场看升旗")
    assert "天安门广场看升旗" not in segment("我们在北京天安门广场看升旗")


def test_the_jieba_backend_matches_the_rjieba_backend() -> None:
    jieba_seg = Segmenter(SegmenterSpec("jieba"))
    for text in SAMPLE_SENTENCES:
        assert jieba_seg.cut(text) == segment(text)
