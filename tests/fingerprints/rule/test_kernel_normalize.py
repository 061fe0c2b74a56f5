"""The kernel's ``normalize`` (a table lookup per character, for texts with no markup,
controls, combining marks or characters outside the BMP) against
``normalize.normalize_py``: the same strings, and the Python path for the others."""

from __future__ import annotations

import json
import random
from itertools import islice
from pathlib import Path

import pytest

from fingerprints.rule import normalize as normalization
from fingerprints.rule.kernel import kernel

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
CORPORA = ["xinhua_uhgeval_zh", "bdci2019_inews_zh_train", "thucnews_cnews_sample_zh",
           "bbc_news_en", "cnndm_halueval_en"]

pytestmark = pytest.mark.skipif(kernel is None, reason="needs the C kernel")

# every BMP character, alone and next to what could change it: a letter each side,
# itself, a combining acute after it, a capital sigma either side (final sigma), Hangul
# jamo and syllables (composition), white space, CJK
_CONTEXTS = ["a{}b", "{}", "{}{}", "中{} 文", "e{}\u0301", "Σ{}", "{}Σ", " {} ", "ᄀ{}",
             "{}ᅡ", "가{}", "{}\u3000x"]


def _by_kernel(text: str) -> str | None:
    assert kernel is not None
    found: str | None = kernel.normalize(text, *normalization.simple_table())
    return found


def _assert_same(texts: list[str]) -> int:
    """Every text normalizes alike both ways; returns how many the kernel took."""
    mismatched = [text[:40] for text in texts
                  if normalization._normalize(text) != normalization.normalize_py(text)]
    assert mismatched == []
    return sum(_by_kernel(text) is not None for text in texts)


def test_every_bmp_character_in_context_normalizes_as_in_python() -> None:
    texts = [context.replace("{}", chr(cp)) for cp in range(1, 0x10000)
             if not 0xD800 <= cp < 0xE000 for context in _CONTEXTS]
    assert _assert_same(texts) > len(texts) // 2


@pytest.mark.data
@pytest.mark.parametrize("corpus", CORPORA)
def test_real_news_normalizes_as_in_python(corpus: str) -> None:
    path = DATA / corpus / "docs.jsonl"
    assert path.exists(), f"missing corpus {path}"
    with path.open(encoding="utf-8") as handle:
        docs = [json.loads(line) for line in islice(handle, 1500)]
    texts = [doc.get("content") or doc.get("text") or "" for doc in docs]
    texts += [doc.get("title") or "" for doc in docs]
    # most real articles never leave the kernel
    assert _assert_same(texts) > 0.8 * len(texts)


def test_seeded_fuzz_normalizes_as_in_python() -> None:
    rng = random.Random(3636)
    pieces = [chr(cp) for cp in range(1, 0x3400)] + list("abc中文，。 \n\t…＜&<") * 100
    pieces += ["😀", "𝐀", "\ud800", "<p>", "&amp;", "\x00", "\u200b", "İ", "ﬁ", "½", "①"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 16)))
             for _ in range(30_000)]
    assert _assert_same(texts) > 0


def test_what_the_kernel_leaves_to_python() -> None:
    for text in ["<p>x</p>", "a &amp; b", "x\x01y", "e\u0301", "😀", "\ud800", "Σ"]:
        assert _by_kernel(text) is None, text
    assert _by_kernel("  Ｈｅｌｌｏ，\u3000世界…\n ") == "hello, 世界..."
    assert _by_kernel("") == ""
    with pytest.raises(ValueError, match="65,536"):
        kernel.normalize("x", b"", b"")  # type: ignore[union-attr]
