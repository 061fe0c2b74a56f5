"""The kernel's ``body_parts`` and ``main_span`` against ``main_body.body_parts_py`` and
``main_body.main_span``: the same codes, chrome share and main-body bits (so the same
Features bytes) on every article of the five corpora, on generated texts and on the
edges of the code scan and the clause walk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprints.rule import main_body
from fingerprints.rule.boilerplate import strip_with_clauses
from fingerprints.rule.kernel import kernel
from fingerprints.rule.main_body import BodyParts, body_parts_py
from fingerprints.rule.normalize import normalize
from fingerprints.rule.sketch import _KEEP, Sketch, sketch_one

from ..texts import STORY

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
CORPORA = ["xinhua_uhgeval_zh", "thucnews_cnews_sample_zh", "bbc_news_en", "cnndm_halueval_en",
           "bdci2019_inews_zh_train"]

pytestmark = pytest.mark.skipif(kernel is None, reason="needs the C kernel")

# what the code scan and the clause walk turn on, as pieces of generated texts
PIECES = [*"abxz0123456789-= .:/_", "http://", "https://", "www.", ".com", ".cn", ".net",
          ".org", ".comx", "2018", "1224", "235959", "13869640555", "150-2177-2908",
          "bf-100a", "a1", "1-a", "--", "中", "文", "。", "，", "！", "？", "；", "：", ",",
          ";", "!", "?", "\\n", "\\", "\n", "\t", "\u3000", "\xa0", "𠀀", "😀", "１", "٣",
          "é", *main_body.CHROME_MARKERS, "新华社记者报道", "正文内容很长的一句话，"]


def _by_kernel(normalized_length: int, body: str, sketch: Sketch) -> BodyParts:
    assert kernel is not None
    return BodyParts(*kernel.body_parts(body, normalized_length, sketch.samples, _KEEP))


def _assert_same(normalized: str, body: str, sketch: Sketch | None = None) -> BodyParts:
    sketch = sketch_one(body) if sketch is None else sketch
    expected = body_parts_py(normalized, body, sketch)
    assert _by_kernel(len(normalized), body, sketch) == expected, body[:80]
    assert kernel is not None and kernel.main_span(body) == main_body.main_span(body), body[:80]
    return expected


def test_the_kernel_has_the_constants_of_main_body() -> None:
    assert kernel is not None
    in_kernel = kernel.MAIN_BODY
    assert in_kernel == {name: getattr(main_body, name) for name in in_kernel}
    assert in_kernel["CHROME_MARKERS"] and in_kernel["CHROME_WINDOW"]


@pytest.mark.data
@pytest.mark.parametrize("corpus", CORPORA)
def test_every_article_of_the_corpora_gives_the_python_parts(corpus: str) -> None:
    path = DATA / corpus / "docs.jsonl"
    assert path.exists(), f"missing corpus {path}"
    measured = 0
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            normalized = normalize(row.get("content") or row.get("text") or "")
            _assert_same(normalized, strip_with_clauses(normalized, frozenset()).body)
            measured += 1
    assert measured > 1000


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=300), st.integers(0, 50),
       st.sampled_from([1, 1, 2, 40]))
def test_generated_texts_give_the_python_parts(pieces: list[str], removed: int,
                                               repeat: int) -> None:
    body = "".join(pieces) * repeat
    _assert_same("x" * (len(body) + removed), body)


@settings(max_examples=500, deadline=None)
@given(st.text(st.characters(exclude_categories=("Cs",)), max_size=200))
def test_any_text_gives_the_python_parts(body: str) -> None:
    _assert_same(body, body)


@pytest.mark.parametrize("body", [
    "",  # empty
    "点击关注",  # a stub of chrome: all of it
    "视频来自：百度贴吧",
    "关注我们！" * 40 + "正文一句。",  # chrome, but never more than half of a long body
    "13869640555",  # a code alone: no context
    "型号bf-100a",  # codes at the end of the body
    "bf-100a的产品，电话13869640555",
    "关注我们！点击阅读原文。" + STORY + "责任编辑：王明。版权声明：转载请注明出处",
    "点击关注\\n" + STORY + "\\n编辑\\n王明",  # "\n" as two characters ends clauses
    "来源：新华社；" + STORY + "（编辑：王明）！？",  # CJK punctuation
    "关注😀𠀀𠀁我们。" + STORY + "微信号：abc123😀",  # astral characters
    "😀13869640555 与 𠀀bf-100a",  # astral characters as a code's context
    "详见 http://tieba.baidu.com/p/5667951667 与 www.example.com/a123 和 x.cn/b12345678",
    "abc.com123 abc.comx/a1234567 site.org_a1234567 a.cn.com/12345678 1234567.net",
    "来源：www.xinhua.net " + STORY,  # a web address as the lead
    "20181226 201812261230 20181226123059 2018-12-26 19991301 1234567a 1234567 8a",
    "2018-12-26 02:40 2018122602 2018122632 20181226023",  # an hour alone ends a date
    "his 99th goal £200m 30million 2018e-pb 5-g1 a-1 ab-12 1a-2b 12-ab3 x1 99th-a9 --a1 a--12",
    "来自:tieba.baidu.com/p/5667951667 x:y.cn/1234567 a:://b.com/1234567 :1234567 http:1234567",
    "\\n2018年 \\nab12 \\r1234567 \\t-a123 \\n123 \\nn1234 \\\\n1234a x\\n",  # "\n" kept
    "a-1234567 --1234567 1--a 1-a a1b2 ab-- --ab12 1=2=3=4=5=6=7 1 2 3 4 5 6 7 8x",
    " " * 700 + "关注",  # white space only, a marker at the end
    "关注。" + "很" * 600 + "。编辑",  # a lead window of 600 characters
])
def test_edge_cases_give_the_python_parts(body: str) -> None:
    # as written (full-width punctuation, white space) and as extraction reads it
    for text in (body, normalize(body)):
        for normalized in (text, "x" * 17 + text):
            _assert_same(normalized, text)


def test_a_stub_of_chrome_is_all_chrome_and_an_empty_body_nothing() -> None:
    stub = normalize("视频来自：百度贴吧")
    parts = _assert_same(stub, stub)
    assert parts.chrome == 1000 and set(parts.main_bits) == {0}
    assert _assert_same("", "") == BodyParts(b"", 0, b"")
    assert _assert_same("正文被当作模板删去", "").chrome == 1000  # all learned boilerplate


def test_samples_out_of_order_are_looked_up_one_by_one() -> None:
    # a sketch's samples ascend and the kernel merges; any other order gives the same
    body = normalize("点击上方蓝字关注我们！" + STORY + "责任编辑：王明")
    sketch = Sketch.from_text(body)
    values = list(sketch.values())
    for order in (values[::-1], values[1::2] + values[::2], values[3:] + values[:3]):
        shuffled = Sketch(sketch.level, sketch.shingles, b"".join(
            int(v).to_bytes(4, "little") for v in order))
        assert _assert_same(body, body, shuffled).main_bits


def test_a_surrogate_raises_as_in_python() -> None:
    """Extraction refuses a lone surrogate earlier (looking up the tokens); here both
    raise the same error where the Python encodes: a code's context, a chrome piece."""
    for body in ("电话\ud80013869640555，正文", "点击关注\ud800我们。" + normalize(STORY)):
        sketch = Sketch.from_text(body.replace("\ud800", ""))
        with pytest.raises(UnicodeEncodeError) as python:
            body_parts_py(body, body, sketch)
        with pytest.raises(UnicodeEncodeError) as compiled:
            _by_kernel(len(body), body, sketch)
        assert str(compiled.value) == str(python.value)
    body = normalize(STORY) + "\ud800" + normalize(STORY)  # nowhere it is encoded
    _assert_same(body, body, Sketch.from_text(normalize(STORY)))


def test_bad_arguments_raise_clear_errors() -> None:
    assert kernel is not None
    with pytest.raises(ValueError, match="65536"):
        kernel.body_parts("正文", 2, b"", b"\x00" * 10)
    with pytest.raises(ValueError, match="whole uint32"):
        kernel.body_parts("正文", 2, b"\x01\x02", _KEEP)
