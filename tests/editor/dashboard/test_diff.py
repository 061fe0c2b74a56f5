"""The word diff, shared keywords and link helpers."""

from __future__ import annotations

import pytest

from tests.browser import stories

pytestmark = pytest.mark.django_db


def test_the_diff_compares_chinese_word_by_word(db):
    from articles.editor.diff import DELETE, EQUAL, INSERT, word_diff

    diff = word_diff("股市今天上涨了百分之三，投资者很高兴。",
                     "股市今天下跌了百分之三，投资者很担心。")
    assert [(s.kind, s.text) for s in diff.left] == [
        (EQUAL, "股市今天"), (DELETE, "上涨"), (EQUAL, "了百分之三，投资者很"), (DELETE, "高兴"),
        (EQUAL, "。")]
    assert [s.text for s in diff.right if s.kind == INSERT] == ["下跌", "担心"]
    assert (diff.deleted, diff.inserted) == (2, 2)
    # width and case are what the fingerprints ignore: no difference there
    assert word_diff("ＡＢＣ新闻２０２４年", "abc新闻2024年").identical


def test_shared_keywords_are_informative_words_of_both(db):
    from articles.editor.diff import shared_keywords

    words = shared_keywords("滨江绿道全线贯通", stories.RIVERSIDE, "绿道贯通", stories.RIVERSIDE)
    assert "滨江" in words and "管理处" in words
    assert "的" not in words and "，" not in words
    assert shared_keywords("", stories.RIVERSIDE, "", stories.LIBRARY)[:3] != words[:3]


@pytest.mark.parametrize("url, shown", [
    ("https://news.example/a?b=1", "https://news.example/a?b=1"),
    ("http://news.example/", "http://news.example/"),
    ("javascript:alert(1)", ""),
    (" JavaScript:alert(1)", ""),
    ("data:text/html,<script>alert(1)</script>", ""),
    ("//evil.example/x", ""),
    ("https:///nohost", ""),
    ("https://news.example/\nx", ""),
])
def test_only_http_urls_become_links(url, shown):
    from articles.templatetags.dashboard import http_url

    assert http_url(url) == shown
