"""Codes in context, lead and tail chrome, the main body and the chrome share."""

from __future__ import annotations

import numpy as np

from fingerprints.rule.main_body import body_parts, codes_in_context, main_mask, main_span
from fingerprints.rule.normalize import normalize
from fingerprints.rule.sketch import Sketch

from ..texts import STORY


def _codes(text: str) -> int:
    return len(codes_in_context(normalize(text))) // 4


def test_phone_order_and_model_numbers_are_codes_and_dates_and_addresses_are_not() -> None:
    assert _codes("热线：150-2177-2908") == 1
    assert _codes("订单号:181224000167") == 1
    assert _codes("型号 bf-100a 的产品") == 1
    assert _codes("his 99th goal, the 100th, £200m and £30million; 2018e pb") == 0  # quantities
    assert _codes("flight mh370 and an a-320") == 2
    assert _codes("2018-12-26 发布，共 3012 人") == 0  # a date, a short number
    assert _codes("20181226 发布") == 0
    assert _codes("2018-12-26 02:40:21 发布") == 0  # a time stamp cut at its colon
    # a line break kept as the two characters "\\n" is not a letter of a code
    assert _codes("拓片。\\n2018年9月30日") == 0
    assert _codes("拓片。\\nab-1234 型") == 1
    assert _codes("详见 http://tieba.baidu.com/p/5667951667 与 www.example.com/a123") == 0
    assert _codes("来自:tieba.baidu.com/p/5667951667") == 0  # a label's colon before it
    # the same code in another context is another value; sorted, distinct
    values = np.frombuffer(codes_in_context(normalize("电话13869640555，手机13869640555")),
                           dtype="<u4")
    assert len(values) == 2 and list(values) == sorted(values)


def test_lead_and_tail_chrome_is_set_aside_and_the_story_kept() -> None:
    body = normalize("点击上方蓝字关注我们！" + STORY + "责任编辑：王明")
    start, end = main_span(body)
    assert body[start:end].strip() == normalize(STORY).strip()
    # a story's own long sentence is kept whatever it mentions
    assert main_span(normalize(STORY)) == (0, len(normalize(STORY)))
    # never more than half of a body, unless it is a stub
    long_head = normalize("关注我们。" * 40 + "正文一句。")
    start, end = main_span(long_head)
    assert end == len(long_head) and start <= len(long_head) / 2
    stub = normalize("视频来自：百度贴吧")
    assert main_span(stub)[0] == len(stub)


def test_the_main_body_marks_its_samples_and_the_chrome_share_counts_what_was_removed(
) -> None:
    normalized = normalize("点击上方蓝字关注我们！" + STORY + "版权声明：转载请注明出处")
    body = normalized[3:]  # as if three characters were learned boilerplate
    sketch = Sketch.from_text(body)
    parts = body_parts(normalized, body, sketch)
    mask = main_mask(parts.main_bits, len(sketch.values()))
    assert 0 < mask.sum() < len(mask)
    assert 0 < parts.chrome < 300
    plain = body_parts(normalize(STORY), normalize(STORY), Sketch.from_text(normalize(STORY)))
    assert plain.main_bits == b"" and plain.chrome == 0
    assert main_mask(b"", 5).all()
