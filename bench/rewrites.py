"""Does a measure of rewriting tell a rewritten repost from two write-ups of one event?

    env -u DJANGO_SETTINGS_MODULE .venv/bin/python bench/rewrites.py [--errors] [--variant NAME ...]

Issue 46's grouped CV (bench/vector_model.py, 0.947 on the 766 labelled crawled pairs)
misses reposts rewritten sentence by sentence and merges two write-ups of one event.
This script computes candidate measures from the two *texts* of each labelled pair (a
scratch look: the engine compares stored features, never two texts) and adds them to
the comparison vector in a copy of bench/vector_model.py's procedure: the same grouped
folds (the label graph's components), ``vector_training.train`` from ``vector-0`` with
the same strengths, each new measure a spec with a declared direction and cuts.

The texts as the engine reads them: normalized, the shipped boilerplate clauses
removed, the lead and tail chrome set aside (``main_body.main_span``). A *sentence* is
a piece between 。！？!?；; or a kept line break, of at least ``MIN_SENTENCE`` letters
and digits (punctuation and spaces dropped); its *bigrams* are its characters' pairs.
The shorter side is the one with fewer main-body letters and digits.

Measures (each symmetric; missing when the shorter side has no sentence):

* ``align50``, ``align70``: the share of the shorter's sentences whose best match in
  the longer (character-bigram Dice) reaches 0.5, 0.7;
* ``align_window``: the same at 0.5 with the sentence's bigram containment in a window
  of three consecutive sentences of the longer (a sentence split or two joined);
* ``in_order``: the longest run of the shorter's sentences (matched at 0.5) whose best
  matches are in increasing positions, over the shorter's sentences;
* ``bigram_containment``: the share of the shorter main body's distinct bigrams in the
  longer's; ``idf_containment``: the same weighted by each bigram's IDF over the corpus
  (5,355 crawled pages): two write-ups share the event's words, a rewritten repost the
  rest too.

``--errors`` prints the baseline's grouped-CV errors with both texts; each variant's
row gives its grouped-CV F1 (false merges, missed) and the error pairs it fixes and
breaks against the baseline.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import load_docs, table  # noqa: E402
from match_model import labelled_articles  # noqa: E402
from vector_model import components  # noqa: E402

from fingerprints.rule import comparison, vector_model  # noqa: E402
from fingerprints.rule.boilerplate import shipped_hashes, strip  # noqa: E402
from fingerprints.rule.comparison import ComparisonVector, compare_pair  # noqa: E402
from fingerprints.rule.main_body import main_span  # noqa: E402
from fingerprints.rule.match_training import precision_recall  # noqa: E402
from fingerprints.rule.normalize import normalize  # noqa: E402
from fingerprints.rule.stopwords import default_stopwords, is_punctuation_or_space  # noqa: E402
from fingerprints.rule.tokenize import segment  # noqa: E402
from fingerprints.rule.vector_model import Spec, VectorModel, rule_vector_model  # noqa: E402
from fingerprints.rule.vector_training import (  # noqa: E402
    STRENGTHS,
    VectorExample,
    grouped_folds,
    train,
)

MIN_SENTENCE = 8  # letters and digits: a shorter piece is a label, not a sentence
_SENTENCE_END = re.compile(r"[。！？!?；;]|\\[nr]|\n")
_NOT_TEXT = re.compile(r"[\W_]+")
STOPWORDS = default_stopwords()


@dataclass(frozen=True)
class RewriteVector(ComparisonVector):
    """The comparison vector with the candidate measures after it (scratch only)."""

    align50: float | None = None
    align70: float | None = None
    align_window: float | None = None
    in_order: float | None = None
    bigram_containment: float | None = None
    idf_containment: float | None = None
    chunks50: float | None = None
    chunks70: float | None = None
    interior_gap: float | None = None
    word_containment: float | None = None

    def values(self) -> tuple[float | None, ...]:
        return tuple(getattr(self, name) for name in NAMES)


NEW = ("align50", "align70", "align_window", "in_order", "bigram_containment",
       "idf_containment", "chunks50", "chunks70", "interior_gap",
       "word_containment")
CHUNK = 24  # letters and digits: a chunk of the shorter, a third of a window of the longer
NAMES = (*comparison.COMPARISONS, *NEW)
vector_model.COMPARISONS = NAMES  # the model reads the new places


def main_text(content: str, boilerplate: frozenset[int]) -> str:
    """The body as the engine reads it, without its lead and tail chrome."""
    body = strip(normalize(content), boilerplate)
    start, end = main_span(body)
    return body[start:end]


def sentences(text: str) -> list[str]:
    out = []
    for piece in _SENTENCE_END.split(text):
        letters = _NOT_TEXT.sub("", piece)
        if len(letters) >= MIN_SENTENCE:
            out.append(letters)
    return out


def bigrams(text: str) -> set[str]:
    return {text[i : i + 2] for i in range(len(text) - 1)}


def dice(a: set[str], b: set[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def longest_increasing(positions: Sequence[int]) -> int:
    tails: list[int] = []
    for p in positions:
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if tails[mid] < p:
                lo = mid + 1
            else:
                hi = mid
        if lo == len(tails):
            tails.append(p)
        else:
            tails[lo] = p
    return len(tails)


def words(text: str) -> set[str]:
    """The informative words of a text (the engine's segmenter; stopwords, punctuation
    and single characters out)."""
    return {w for w in segment(text) if len(w) > 1 and w not in STOPWORDS
            and not is_punctuation_or_space(w)}


def measures(a: str, b: str, idf: Callable[[str], float]) -> dict[str, float | None]:
    """The candidate measures of two main bodies (module docstring)."""
    short, long = sorted((a, b), key=lambda t: (len(_NOT_TEXT.sub("", t)), t))
    short_words, long_words = words(short), words(long)
    if short_words:
        total = sum(idf("w:" + w) for w in short_words)
        out_words = sum(idf("w:" + w) for w in short_words & long_words) / total if total \
            else 0.0
    else:
        out_words = None
    mine, theirs = sentences(short), sentences(long)
    out: dict[str, float | None] = dict.fromkeys(NEW)
    out["word_containment"] = out_words
    short_bigrams = bigrams(_NOT_TEXT.sub("", short))
    long_bigrams = bigrams(_NOT_TEXT.sub("", long))
    if short_bigrams:
        shared = short_bigrams & long_bigrams
        out["bigram_containment"] = len(shared) / len(short_bigrams)
        total = sum(idf(g) for g in short_bigrams)
        out["idf_containment"] = sum(idf(g) for g in shared) / total if total else 0.0
    short_letters, long_letters = _NOT_TEXT.sub("", short), _NOT_TEXT.sub("", long)
    chunks = [bigrams(short_letters[i : i + CHUNK])
              for i in range(0, max(1, len(short_letters) - CHUNK // 2), CHUNK)]
    chunks = [c for c in chunks if c]
    long_chunks = [bigrams(long_letters[i : i + CHUNK]) for i in range(0, len(long_letters), CHUNK)]
    long_windows = [set().union(*long_chunks[max(0, j - 1) : j + 2])
                    for j in range(len(long_chunks))]
    if chunks and long_windows:
        best_chunk = [max(len(c & w) for w in long_windows) / len(c) for c in chunks]
        out["chunks50"] = sum(x >= 0.5 for x in best_chunk) / len(chunks)
        out["chunks70"] = sum(x >= 0.7 for x in best_chunk) / len(chunks)
    if not mine:
        return out
    theirs_bigrams = [bigrams(s) for s in theirs]
    windows = [set().union(*theirs_bigrams[max(0, j - 1) : j + 2]) for j in range(len(theirs))]
    best, positions, window_hits = [], [], 0
    matched: list[bool] = []
    for sentence in mine:
        grams = bigrams(sentence)
        scores = [dice(grams, other) for other in theirs_bigrams]
        j = max(range(len(scores)), key=scores.__getitem__) if scores else -1
        best.append(scores[j] if scores else 0.0)
        if scores and scores[j] >= 0.5:
            positions.append(j)
        hit = any(len(grams & w) / len(grams) >= 0.5 for w in windows)
        window_hits += hit
        matched.append(hit)
    out["align50"] = sum(s >= 0.5 for s in best) / len(mine)
    out["align70"] = sum(s >= 0.7 for s in best) / len(mine)
    out["align_window"] = window_hits / len(mine)
    out["in_order"] = longest_increasing(positions) / len(mine)
    # the longest run of unmatched sentences between two matched ones: a write-up's own
    # paragraph inside the shared story (a new lead or a new tail is not inside)
    hits = [i for i, m in enumerate(matched) if m]
    gap = max((b - a - 1 for a, b in zip(hits, hits[1:], strict=False)), default=0)
    out["interior_gap"] = gap / len(mine)
    return out


SHARE_CUTS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
# name -> the specs it adds (comparison, direction, cuts, regimes: () every regime at
# once, else each of these)
VARIANTS: dict[str, tuple[tuple[str, int, tuple[float, ...], tuple[int, ...]], ...]] = {
    "baseline": (),
    "align50": (("align50", 1, SHARE_CUTS, ()),),
    "align50 by regime": (("align50", 1, SHARE_CUTS, (1, 2)),),
    "align70": (("align70", 1, SHARE_CUTS, ()),),
    "align_window": (("align_window", 1, SHARE_CUTS, ()),),
    "in_order": (("in_order", 1, SHARE_CUTS, ()),),
    "align50 + in_order": (("align50", 1, SHARE_CUTS, ()), ("in_order", 1, SHARE_CUTS, ())),
    "bigram_containment": (("bigram_containment", 1, SHARE_CUTS, ()),),
    "idf_containment": (("idf_containment", 1, SHARE_CUTS, ()),),
    "idf_containment by regime": (("idf_containment", 1, SHARE_CUTS, (1, 2)),),
    "align50 + idf_containment": (("align50", 1, SHARE_CUTS, ()),
                                  ("idf_containment", 1, SHARE_CUTS, ())),
    "chunks50": (("chunks50", 1, SHARE_CUTS, ()),),
    "chunks70": (("chunks70", 1, SHARE_CUTS, ()),),
    "chunks50 by regime": (("chunks50", 1, SHARE_CUTS, (1, 2)),),
    "word_containment": (("word_containment", 1, SHARE_CUTS, ()),),
    "word_containment by regime": (("word_containment", 1, SHARE_CUTS, (1, 2)),),
    "interior_gap": (("interior_gap", -1, (0.05, 0.1, 0.2, 0.3), ()),),
    "align_window + interior_gap": (("align_window", 1, SHARE_CUTS, ()),
                                    ("interior_gap", -1, (0.05, 0.1, 0.2, 0.3), ())),
}


def shown(value: float | None) -> str:
    return "missing" if value is None else f"{value:.2f}"


def with_specs(start: VectorModel, added: Sequence[tuple[str, int, tuple[float, ...],
                                                         tuple[int, ...]]]) -> VectorModel:
    specs = list(start.specs)
    for name, direction, cuts, regimes in added:
        for regime in regimes or (-1,):
            specs.append(Spec(name, direction, cuts, 0.0, (0.0,) * len(cuts), regime))
    return replace(start, specs=tuple(specs))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variant", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--errors", action="store_true",
                        help="print the baseline's grouped-CV errors with both texts")
    parser.add_argument("--chars", type=int, default=700, help="characters of each text shown")
    args = parser.parse_args()
    first, validation, features = labelled_articles()
    labels = {**first, **validation}
    pairs = sorted(labels)
    docs = {d.id: d for d in load_docs("bdci")}
    boilerplate = frozenset(shipped_hashes())
    document_frequency: Counter[str] = Counter()
    for doc in docs.values():
        text = main_text(doc.content, boilerplate)
        document_frequency.update(bigrams(_NOT_TEXT.sub("", text)))
        document_frequency.update("w:" + w for w in words(text))
    n_docs = len(docs)

    def idf(gram: str) -> float:
        return math.log((n_docs + 1) / (document_frequency[gram] + 1))

    ids = {i for pair in pairs for i in pair}
    texts = {i: main_text(docs[i].content, boilerplate) for i in ids}
    examples = []
    for a, b in pairs:
        both: dict[str, Any] = {**vars(compare_pair(features[a], features[b])),
                                **measures(texts[a], texts[b], idf)}
        examples.append(VectorExample(RewriteVector(**both), labels[(a, b)][0] == 1))
    groups = components(pairs)
    folds = grouped_folds(groups, 5)
    start = rule_vector_model()

    def grouped_cv(model_start: VectorModel) -> list[float]:
        out = [0.0] * len(examples)
        for k, held in enumerate(folds):
            held_set = set(held)
            rest = [i for i in range(len(examples)) if i not in held_set]
            model = train([examples[i] for i in rest], [groups[i] for i in rest], model_start,
                          f"fold-{k}", strength=STRENGTHS, n_folds=5)
            for i in held:
                out[i] = model.score(examples[i].vector).probability
        return out

    results: dict[str, list[float]] = {}
    rows = []
    for name in ["baseline", *[v for v in args.variant if v != "baseline"]]:
        results[name] = grouped_cv(with_specs(start, VARIANTS[name]))
        scored = [(p, e.match) for p, e in zip(results[name], examples, strict=True)]
        pr = precision_recall(scored, 0.5)
        wrong = {i for i, (p, m) in enumerate(scored) if (p >= 0.5) != m}
        base_wrong = {i for i, (p, e) in enumerate(zip(results["baseline"], examples,
                                                           strict=True)) if (p >= 0.5) != e.match}

        def named(indices: set[int]) -> str:
            return " ".join(f"{pairs[i][0][6:]}/{pairs[i][1][6:]}"
                            f"{'+' if examples[i].match else '-'}" for i in sorted(indices)) or "—"

        rows.append([name, f"{pr['f1']:.3f} ({pr['fp']}, {pr['fn']})",
                     named(base_wrong - wrong), named(wrong - base_wrong)])
        print(rows[-1], flush=True)
    print(table(["variant", "grouped-CV F1 (false merges, missed)",
                 "fixes (+ duplicate, - distinct)", "breaks"], rows))
    # the measures' spread on each kind of label, and on the baseline's errors
    print()
    base = results["baseline"]
    groups_of = {"duplicates": [i for i, e in enumerate(examples) if e.match],
                 "distinct": [i for i, e in enumerate(examples) if not e.match],
                 "missed": [i for i, e in enumerate(examples) if e.match and base[i] < 0.5],
                 "false merges": [i for i, e in enumerate(examples)
                                  if not e.match and base[i] >= 0.5]}
    stats = []
    for measure in NEW:
        row: list[object] = [measure]
        for members in groups_of.values():
            values = sorted(v for i in members
                            if (v := getattr(examples[i].vector, measure)) is not None)
            row.append(f"{len(values)}: " + " / ".join(
                f"{values[int(q * (len(values) - 1))]:.2f}" for q in (0.1, 0.5, 0.9))
                if values else "—")
        stats.append(row)
    print(table(["measure", *[f"{k}: n, p10 / median / p90" for k in groups_of]], stats))
    # where the errors live: the pairs the baseline is unsure of, and the containment
    # band of the missed reposts and the write-ups; does a measure order their
    # duplicates above their distinct pairs (AUC, ties half) better than the containment
    # the vector has?
    bands = {"the baseline's p 0.02-0.98": [i for i, p in enumerate(base) if 0.02 <= p <= 0.98],
             "containment 0.3-0.95": [i for i, e in enumerate(examples)
                                      if e.vector.containment is not None
                                      and 0.3 <= e.vector.containment <= 0.95]}
    aucs = []
    for measure in ("containment", "jaccard", *NEW):
        row = [measure]
        for members in bands.values():
            dup = [v for i in members if examples[i].match
                   and (v := getattr(examples[i].vector, measure)) is not None]
            other = [v for i in members if not examples[i].match
                     and (v := getattr(examples[i].vector, measure)) is not None]
            auc = (sum((x > y) + 0.5 * (x == y) for x in dup for y in other)
                   / (len(dup) * len(other)) if dup and other else float("nan"))
            row.append(f"{len(dup)}, {len(other)}: {auc:.2f}")
        aucs.append(row)
    print()
    print(table(["measure", *[f"{k}: duplicates, distinct: AUC" for k in bands]], aucs))
    if args.errors:
        for kind in ("missed", "false merges"):
            for i in groups_of[kind]:
                a, b = pairs[i]
                v = examples[i].vector
                print(f"\n=== {kind}: {a} / {b}, label reason {labels[(a, b)][1]!r}, "
                      f"p {base[i]:.3f}; J {v.jaccard}, C {v.containment}, "
                      + ", ".join(f"{m} {shown(getattr(v, m))}" for m in NEW))
                for side in (a, b):
                    print(f"--- {side} [{docs[side].title}] ({len(texts[side])} chars)")
                    print(texts[side][: args.chars])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
