"""A crawled title's headline: the part that names the story, without the site's name
(:func:`split_title`) or a desk tag (``（国际）``, ``【独家】``); and the key of a text (its
letters and digits, :func:`text_key`) that title and short-text comparisons use."""

from __future__ import annotations

import re

from fingerprints.rule.features import MAX_KEY_CHARS
from fingerprints.rule.kernel import kernel
from fingerprints.rule.normalize import normalize

# A leading column tag such as "（国际）", "【独家】", "[video]" is a desk label, not the story.
_TITLE_TAG = re.compile(r"^\s*(?:[(\[【〔][^()\[\]【】〔〕]{1,12}[)\]】〕]\s*)+")
_SERIES_TAG = re.compile(r"[(\[【〔]\s*(\d{1,3})\s*[)\]】〕]")
_TAG_OPENERS = "([【〔"  # what a tag of _TITLE_TAG opens with


def _without_tags(title: str) -> str:
    """A normalized title without its leading desk tags (``（锐视角）``, ``【独家】``). A
    tag that is only a number, a photo series' ``（3）``, is kept (as the number, in
    front): it is which item of the series this is, and ``（3）`` against ``（4）`` is
    another item."""
    if not title or (title[0] not in _TAG_OPENERS and not title[0].isspace()):
        return title  # most titles: no tag can start here (the regex's match costs more)
    found = _TITLE_TAG.match(title)
    if not found:
        return title
    series = _SERIES_TAG.findall(found.group(0))
    rest = title[found.end():]
    return " ".join([*series, rest]) if series else rest


# A crawled page's title carries the site, channel or blog around the headline:
# "标题_搜狐汽车_搜狐网", "标题_手机网易网", "中国文艺网_标题", "标题 - 渭南市中级人民法院网".
# Only titles with Chinese characters are cut: in English a spaced dash belongs to the
# headline ("Choose hope over fear - Kennedy": the speaker), and the English corpora
# show no site names to learn from.
_SITE_SEPARATOR = re.compile(r"_+|\s+[-|—–]+\s+")
_CJK = re.compile(r"[\u3400-\u9fff]")
LATER_HEADLINE = 2  # a later part is the headline when this many times the first's length
# how a site's, channel's or forum's name ends ("搜狐网", "华声在线", "体育频道", "百度贴吧")
SITE_ENDINGS = ("网", "网站", "在线", "频道", "论坛", "贴吧", "博客", "社区", "新闻", "资讯",
                "门户")


def _has_separator(title: str) -> bool:
    """Could :data:`_SITE_SEPARATOR` match in ``title``: has it one of the characters
    every separator holds? Most titles have none, and these scans cost far less than
    the regex's split trying a match at every position."""
    return "_" in title or "-" in title or "|" in title or "—" in title or "–" in title


def split_title(title: str) -> tuple[str, str]:
    """(headline, the rest) of a crawled page's title, cut at the site's separators.

    The headline is the first part that is not a site's name (:data:`SITE_ENDINGS`:
    ``中国文艺网_书法志愿服务走进…``), unless a later part that is not one either is at
    least :data:`LATER_HEADLINE` times as long (letters and digits, desk tags left out:
    ``打印_利川小河初中…``, ``百姓声音_陕西镇安县…_海角社区``); a site's name is never taken
    for the headline while another part is there (``【视频】刘翔_凤凰网体育频道``). So two
    sites' copies of one story (``…钱财_赤峰新闻网``, ``…钱财_手机网易网``) have one title,
    and two stories of one site (``…_投诉直通车_华声在线``) do not share the site's name.
    The rest (the other parts, space-joined) still counts for :func:`off_title`. A
    title without a separator or without Chinese characters is all headline."""
    if not _has_separator(title) or not _CJK.search(title):
        return title, ""
    parts = _SITE_SEPARATOR.split(title)
    if len(parts) == 1:  # no separator (most titles): no part's key is needed
        return title, ""
    keys = [text_key(_without_tags(part)) for part in parts]
    filled = [i for i, key in enumerate(keys) if key]
    if not filled:
        return title, ""
    named = [i for i in filled if not keys[i].endswith(SITE_ENDINGS)]
    best = named[0] if named else filled[0]
    longer = [i for i in named if len(keys[i]) >= LATER_HEADLINE * len(keys[best])]
    if longer:
        best = max(longer, key=lambda i: len(keys[i]))  # the first of ties
    return parts[best].strip(), " ".join(p.strip() for i, p in enumerate(parts)
                                         if i != best and p.strip())




def title_parts(title: str) -> tuple[str, str]:
    """(headline, the site's part) of a raw title: the headline (:func:`split_title`)
    without its desk tags is what the title fingerprint and the title key are made of."""
    if not title:
        return "", ""
    head, site = split_title(normalize(title))
    return _without_tags(head), site



_NOT_WORD = re.compile(r"[\W_]+")


def text_key(text: str) -> str:
    """A normalized text's letters and digits, at most ``MAX_KEY_CHARS`` of them (in one
    pass through the C kernel when it is built: :func:`text_key_py`'s string)."""
    if not text:
        return ""
    if kernel is not None:
        key: str = kernel.letters_and_digits(text, MAX_KEY_CHARS)
        return key
    return text_key_py(text)


def text_key_py(text: str) -> str:
    """:func:`text_key` in Python: the reference of ``kernel.letters_and_digits``."""
    return _NOT_WORD.sub("", text)[:MAX_KEY_CHARS]
