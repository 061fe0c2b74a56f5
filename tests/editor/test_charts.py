"""The server-rendered charts: escaped labels, a legend that fits its names."""

from __future__ import annotations

import re

from articles.editor.charts import WIDTH, _text_width, line_chart


def _legend(svg: str) -> list[tuple[float, str]]:
    return [(float(x), name) for x, name in
            re.findall(r'<text x="([\d.]+)" y="[\d.]+" font-size="11"[^>]*>([^<]*)</text>', svg)]


def test_the_legend_is_as_wide_as_its_longest_name_in_both_scripts() -> None:
    for names in (["precision, active model", "recall, this version"],
                  ["精确率，当前模型", "召回率，此版本"]):
        svg = str(line_chart(["0.1", "0.5", "0.9"], [(name, "#000", [0.2, 0.5, None])
                                                     for name in names]))
        for x, name in _legend(svg):
            assert x + _text_width(name) <= WIDTH, name
        # the plot ends before the legend begins
        last_tick = max(float(x) for x in re.findall(r'<text x="([\d.]+)" y="[\d.]+" '
                                                     r'font-size="10" text-anchor', svg))
        assert last_tick < min(x for x, _name in _legend(svg))


def test_a_name_from_crawled_data_is_escaped() -> None:
    svg = str(line_chart(["a"], [("<script>x</script>", "#000", [0.5])]))
    assert "<script>" not in svg and "&lt;script&gt;" in svg


def test_a_very_long_name_never_takes_more_than_half_the_chart() -> None:
    svg = str(line_chart(["0", "1"], [("x" * 200, "#000", [0.1, 0.9])]))
    (x, _name), = _legend(svg)
    assert x == WIDTH / 2 + 15  # its swatch at the middle: the plot keeps the other half
