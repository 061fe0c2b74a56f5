"""Word-level comparison of two articles for the editor pages.

Tokens come from the engine's pinned segmenter (jieba precise mode: C, rjieba or jieba), so
Chinese text is compared word by word, not character by character. Tokens are
compared on their NFKC, lower-case form (the form fingerprints see), so a repost
that only changed full-width digits or letter case shows no difference, but the
crawled text itself is what is displayed.

Nothing here marks text safe: the segments are plain strings and the templates
escape them.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher

from articles.tuning.state import active_config
from fingerprints.rule import EngineConfig, idf_table
from fingerprints.rule.normalize import normalize, strip_html
from fingerprints.rule.stopwords import build_stopwords, is_punctuation_or_space
from fingerprints.rule.tokenize import get_segmenter

#: Longer texts are cut before diffing (SequenceMatcher is quadratic at worst).
MAX_DIFF_CHARS = 20_000

EQUAL, DELETE, INSERT = "equal", "delete", "insert"


@dataclass(frozen=True)
class Segment:
    kind: str  # EQUAL, DELETE (only on the left) or INSERT (only on the right)
    text: str


@dataclass(frozen=True)
class SideBySide:
    left: list[Segment]  # the representative, with what the member lacks marked DELETE
    right: list[Segment]  # the member, with what it adds marked INSERT
    deleted: int  # words only on the left
    inserted: int  # words only on the right
    same: float  # share of the words of both sides that are unchanged
    truncated: bool  # a side was longer than MAX_DIFF_CHARS and was cut

    @property
    def identical(self) -> bool:
        return self.deleted == 0 and self.inserted == 0


def tokens(text: str, config: EngineConfig) -> list[str]:
    """Words of a crawled text, white space and punctuation kept, HTML tags removed."""
    text = strip_html(text or "").replace("\r\n", "\n")
    return get_segmenter(config.segmenter).cut(text)


def _key(token: str) -> str:
    if token.isspace():
        return " "
    return unicodedata.normalize("NFKC", token).lower()


def _is_word(token: str) -> bool:
    return not is_punctuation_or_space(token)


def _append(segments: list[Segment], kind: str, text: str) -> None:
    if not text:
        return
    if segments and segments[-1].kind == kind:
        segments[-1] = Segment(kind, segments[-1].text + text)
    else:
        segments.append(Segment(kind, text))


_SENTENCE_END = re.compile(r"(?<=[。！？!?;；\n])")


def _sentences(tokens_: list[str]) -> list[list[str]]:
    """Group words into sentences (ending at 。！？!?;； or a line break)."""
    groups: list[list[str]] = [[]]
    for token in tokens_:
        groups[-1].append(token)
        if _SENTENCE_END.search(token):
            groups.append([])
    return [g for g in groups if g]


def _words_diff(a: list[str], b: list[str], left: list[Segment], right: list[Segment]) -> tuple[
        int, int]:
    matcher = SequenceMatcher(None, [_key(t) for t in a], [_key(t) for t in b], autojunk=False)
    deleted = inserted = 0
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            _append(left, EQUAL, "".join(a[i1:i2]))
            _append(right, EQUAL, "".join(b[j1:j2]))
            continue
        if op in ("delete", "replace"):
            _append(left, DELETE, "".join(a[i1:i2]))
            deleted += sum(1 for t in a[i1:i2] if _is_word(t))
        if op in ("insert", "replace"):
            _append(right, INSERT, "".join(b[j1:j2]))
            inserted += sum(1 for t in b[j1:j2] if _is_word(t))
    return deleted, inserted


def word_diff(old: str, new: str, config: EngineConfig | None = None) -> SideBySide:
    """Side-by-side word diff: ``old`` (the representative) against ``new`` (a member).

    Sentences are aligned first and words only inside changed sentences: faster
    than one word-level pass over a long article, and edits stay local instead of
    matching stray punctuation across paragraphs.
    """
    config = config or active_config()
    truncated = len(old or "") > MAX_DIFF_CHARS or len(new or "") > MAX_DIFF_CHARS
    a = _sentences(tokens((old or "")[:MAX_DIFF_CHARS], config))
    b = _sentences(tokens((new or "")[:MAX_DIFF_CHARS], config))
    a_keys = ["".join(_key(t) for t in s) for s in a]
    b_keys = ["".join(_key(t) for t in s) for s in b]
    left: list[Segment] = []
    right: list[Segment] = []
    deleted = inserted = 0
    words_a = sum(1 for s in a for t in s if _is_word(t))
    words_b = sum(1 for s in b for t in s if _is_word(t))
    matcher = SequenceMatcher(None, a_keys, b_keys, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for s in a[i1:i2]:
                _append(left, EQUAL, "".join(s))
            for s in b[j1:j2]:
                _append(right, EQUAL, "".join(s))
            continue
        d, i = _words_diff([t for s in a[i1:i2] for t in s], [t for s in b[j1:j2] for t in s],
                           left, right)
        deleted += d
        inserted += i
    total = words_a + words_b
    same = 1.0 if total == 0 else (total - deleted - inserted) / total
    return SideBySide(left, right, deleted, inserted, same, truncated)


def _informative(text: str, config: EngineConfig) -> Counter[str]:
    stopwords = build_stopwords(config.extra_stopwords)
    words = get_segmenter(config.segmenter).cut(normalize(text or "")[:MAX_DIFF_CHARS])
    return Counter(
        w for w in (t.strip() for t in words)
        if len(w) >= 2 and w not in stopwords and not is_punctuation_or_space(w)
        and not w.replace(".", "").isdigit()
    )


def shared_keywords(a_title: str, a_text: str, b_title: str, b_text: str,
                    limit: int = 12, config: EngineConfig | None = None) -> list[str]:
    """The informative words both articles share, heaviest first.

    Weighted as the fingerprints weigh them — the engine's IDF table (stopwords
    and punctuation dropped) times the smaller of the two counts — so the words
    listed first are the ones that pulled the two SimHash fingerprints together.
    """
    config = config or active_config()
    left = _informative(f"{a_title}\n{a_text}", config)
    right = _informative(f"{b_title}\n{b_text}", config)
    idf, default = idf_table()
    scored = [(idf.get(w, default) * min(left[w], right[w]), w) for w in left.keys() & right]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [word for _score, word in scored[:limit]]
