"""Articles for the drills: distinct stories and their reposts, generated deterministically.

A story is a sequence of common words from jieba's own dictionary, so that two
stories share almost nothing; a repost is the story with a source line or a
footer added, which the engine must give the story's docId. No corpus files
are needed.
"""

from __future__ import annotations

import functools
import random
from importlib import resources
from typing import Any

HEADERS = ["（来源：新华网）", "本文转自人民网", "记者 李四 报道", "【独家】", "（原标题：见下文）"]
FOOTERS = ["（完）", "责任编辑：张三", "点击查看更多", "欢迎关注我们的公众号",
           "本文来源于网络，如有侵权请联系删除。"]


@functools.cache
def vocabulary() -> tuple[str, ...]:
    """Common two- and three-character words (no digits), most frequent first."""
    text = resources.files("jieba").joinpath("dict.txt").read_text(encoding="utf-8")
    words = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and len(parts[0]) in (2, 3) and parts[1].isdigit():
            word = parts[0]
            if all("\u4e00" <= ch <= "\u9fff" for ch in word):
                words.append((int(parts[1]), word))
    words.sort(key=lambda item: (-item[0], item[1]))
    return tuple(word for _freq, word in words[:6000])


def story(n: int, words: int = 160) -> str:
    """Story number `n`: a deterministic word sequence with Chinese punctuation."""
    rng = random.Random(f"drill-story-{n}")
    vocab = vocabulary()
    parts = []
    for i in range(words):
        parts.append(rng.choice(vocab))
        if i % 14 == 13:
            parts.append("。" if rng.random() < 0.4 else "，")
    return "".join(parts) + "。"


def title(n: int) -> str:
    rng = random.Random(f"drill-title-{n}")
    return "".join(rng.choice(vocabulary()) for _ in range(5))


def repost(n: int, copy: int) -> str:
    """A near-duplicate of story `n`: a header and/or a footer added."""
    rng = random.Random(f"drill-repost-{n}-{copy}")
    text = story(n)
    if copy % 2 == 0 or rng.random() < 0.5:
        text = rng.choice(HEADERS) + "\n" + text
    if copy % 2 == 1 or rng.random() < 0.5:
        text = text + "\n" + rng.choice(FOOTERS)
    return text


def article(nid: str, n: int, copy: int = 0, hotness: float | None = None) -> dict[str, Any]:
    """Story `n` (copy 0) or its repost number `copy`, as an API article."""
    return {
        "nid": nid,
        "url": f"https://site{copy}.drill.example/{n}/{nid}",
        "title": title(n),
        "content": story(n) if copy == 0 else repost(n, copy),
        "hotness": float(hotness if hotness is not None else (n * 7 + copy * 3) % 50),
        "media": f"media-{copy % 3}",
    }
