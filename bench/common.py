"""Shared helpers of the benchmarks: the corpora in ../shared/data, silver pairs,
clustering metrics. The corpora are read in place, never copied into the project."""

from __future__ import annotations

import csv
import json
import os
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DATA = Path(os.environ.get("DEDUP_DATA", ROOT.parent / "shared" / "data"))

CORPORA = {
    "xinhua": "xinhua_uhgeval_zh",
    "thucnews": "thucnews_cnews_sample_zh",
    "bbc": "bbc_news_en",
    "cnndm": "cnndm_halueval_en",
    "bdci": "bdci2019_inews_zh_train",
}
# Human labels (ids and labels only, never texts) for pairs of a corpus, drawn across
# similarity bands by bench/label_sample.py: id_a, id_b, label (1 = near-duplicate), reason.
LABELS = {"bdci": ROOT / "bench" / "labels" / "bdci2019_pairs.csv"}
# Held-out rounds of the same corpus (bench/label_sample.py --validation), labelled
# after the parameters were chosen, each scored before anything changed because of it
# (docs/results/log.md, "The validation sample").
VALIDATION = {"bdci": ROOT / "bench" / "labels" / "bdci2019_validation_pairs.csv"}
# The silver corpora's doubtful pairs read by hand (bench/label_sample.py
# --disagreements): the 0.5-0.8 band, every pair a method merged that the silver file
# does not list, every J >= 0.8 pair a method kept apart (docs/engine.md). With them
# the silver scores can be corrected (score_corrected).
DOUBTFUL = {corpus: ROOT / "bench" / "labels" / f"{corpus}_doubtful_pairs.csv"
            for corpus in ("xinhua", "thucnews", "bbc", "cnndm")}
CLOUGH = "clough_stevenson_reuse_en"


def require_data() -> Path:
    """The corpora folder; exits with an error (never skips) when it is missing."""
    missing = [name for name in [*CORPORA.values(), CLOUGH] if not (DATA / name).is_dir()]
    if missing:
        raise SystemExit(
            f"ERROR: corpora missing under {DATA}: {', '.join(missing)}. "
            "The benchmarks need ../shared/data (or DEDUP_DATA=/path/to/data)."
        )
    return DATA


@dataclass(frozen=True)
class Doc:
    id: str
    title: str
    content: str

    @property
    def text(self) -> str:
        return f"{self.title}\n{self.content}" if self.title else self.content


def load_docs(corpus: str, limit: int | None = None) -> list[Doc]:
    folder = require_data() / CORPORA.get(corpus, corpus)
    docs = []
    with (folder / "docs.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            content = row.get("content") or row.get("text") or ""
            docs.append(Doc(str(row["id"]), row.get("title") or "", content))
            if limit is not None and len(docs) >= limit:
                break
    return docs


def load_silver(corpus: str) -> dict[tuple[str, str], float]:
    """Pairs (id1 < id2) -> reference Jaccard (>= 0.5) from the corpus's silver file."""
    path = require_data() / CORPORA[corpus] / "silver_neardup_pairs_j050.tsv"
    pairs: dict[tuple[str, str], float] = {}
    with path.open(encoding="utf-8") as handle:
        reader = csv.reader(handle, delimiter="\t")
        next(reader)
        for a, b, j in reader:
            pairs[(min(a, b), max(a, b))] = float(j)
    return pairs


def load_clough() -> tuple[list[Doc], list[tuple[str, str, str]]]:
    """Clough & Stevenson answers and sources, and (answer, source, category) pairs."""
    folder = require_data() / CLOUGH
    docs = []
    with (folder / "docs.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            docs.append(Doc(row["id"], "", row["text"]))
    pairs = []
    with (folder / "pairs.tsv").open(encoding="utf-8") as handle:
        reader = csv.reader(handle, delimiter="\t")
        next(reader)
        for answer, source, _task, category in reader:
            pairs.append((answer, source, category))
    return docs, pairs


def cluster_pairs(labels: dict[str, str]) -> set[tuple[str, str]]:
    """Every pair of documents that share a cluster label (a docId)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for doc_id, label in labels.items():
        groups[label].append(doc_id)
    pairs = set()
    for members in groups.values():
        if len(members) > 1:
            pairs.update((min(a, b), max(a, b)) for a, b in combinations(members, 2))
    return pairs


def load_labels(corpus: str, *, validation: bool = False
                ) -> dict[tuple[str, str], tuple[int, str]]:
    """(id1 < id2) -> (label, reason) from the corpus's label file (``validation``: its
    held-out sample's)."""
    return load_pairs((VALIDATION if validation else LABELS)[corpus])


def load_pairs(path: Path) -> dict[tuple[str, str], tuple[int, str]]:
    """(id1 < id2) -> (label, reason) from a label file (``id_a,id_b,label,reason``)."""
    pairs: dict[tuple[str, str], tuple[int, str]] = {}
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            a, b = sorted((row["id_a"], row["id_b"]))
            pairs[(a, b)] = (int(row["label"]), row["reason"])
    return pairs


@dataclass
class LabelScores:
    precision: float
    recall: float
    f1: float
    false_merges: int
    missed: int
    boilerplate_false_merges: int  # labelled "boilerplate_only" pairs given one docId
    boilerplate_pairs: int
    largest: int


def score_labels(labels: dict[str, str], gold: dict[tuple[str, str], tuple[int, str]]
                 ) -> LabelScores:
    """Pair precision, recall and F1 over the labelled pairs: a pair is predicted a
    duplicate when both articles got one docId."""
    tp = fp = fn = bp = bp_all = 0
    for (a, b), (label, reason) in gold.items():
        same = labels[a] == labels[b]
        tp += same and label == 1
        fp += same and label == 0
        fn += (not same) and label == 1
        if reason == "boilerplate_only":
            bp_all += 1
            bp += same
    precision, recall, f1 = prf(tp, fp, fn)
    return LabelScores(precision, recall, f1, fp, fn, bp, bp_all, largest(labels))


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall and F1 from pair counts (1.0 where nothing was to be found)."""
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def largest(labels: dict[str, str]) -> int:
    """Members of the largest cluster (docId)."""
    sizes: dict[str, int] = defaultdict(int)
    for label in labels.values():
        sizes[label] += 1
    return max(sizes.values(), default=0)


@dataclass
class Scores:
    precision: float
    recall: float
    f1: float
    strict_precision: float  # band pairs (0.5 <= J < 0.8) counted as false positives
    band_recall: float
    false_positives: int  # predicted pairs with silver J < 0.5 (not in the file at all)
    predicted: int
    largest: int


def score(labels: dict[str, str], silver: dict[tuple[str, str], float]) -> Scores:
    predicted = cluster_pairs(labels)
    positives = {p for p, j in silver.items() if j >= 0.8}
    band = {p for p, j in silver.items() if j < 0.8}
    tp = len(predicted & positives)
    in_band = len(predicted & band)
    fp = len(predicted - positives - band)
    precision = tp / (tp + fp) if tp + fp else 1.0
    strict = tp / len(predicted) if predicted else 1.0
    recall = tp / len(positives) if positives else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Scores(
        precision, recall, f1, strict, in_band / len(band) if band else 1.0, fp,
        len(predicted), largest(labels),
    )


def score_corrected(labels: dict[str, str], silver: dict[tuple[str, str], float],
                    doubtful: dict[tuple[str, str], tuple[int, str]]) -> LabelScores:
    """Pair P, R, F1 over the whole corpus against the silver file corrected by hand:
    duplicates are the J >= 0.8 pairs and the doubtful pairs read as duplicates, minus
    those read as not; every other pair is not a duplicate (as the silver file says)."""
    predicted = cluster_pairs(labels)
    positives = {p for p, j in silver.items() if j >= 0.8}
    positives |= {p for p, (label, _) in doubtful.items() if label == 1}
    positives -= {p for p, (label, _) in doubtful.items() if label == 0}
    fp = len(predicted - positives)
    fn = len(positives - predicted)
    precision, recall, f1 = prf(len(predicted & positives), fp, fn)
    return LabelScores(precision, recall, f1, fp, fn, 0, 0, largest(labels))


class Timer:
    def __init__(self) -> None:
        self.seconds = 0.0

    def __enter__(self) -> Timer:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds += time.perf_counter() - self._start


WORD_CORPORA = {"bbc", "cnndm"}  # silver files by word 5-grams; the others by characters
_SILVER_CHAR = re.compile(r"[\u3400-\u9fff\U00020000-\U0003ffffA-Za-z0-9]")
_SILVER_WORD = re.compile(r"[a-z0-9']+")


def silver_grams(corpus: str, doc: Doc) -> set[tuple[str, ...]]:
    """The 5-grams of a document by the measure the corpus's silver file states (its
    SOURCE.md): lower-cased ``[a-z0-9']+`` words (English) or CJK characters, ASCII
    letters and digits (Chinese), over title + newline + content."""
    text = f"{doc.title}\n{doc.content}".lower()
    units = (_SILVER_WORD.findall(text) if corpus in WORD_CORPORA
             else _SILVER_CHAR.findall(text))
    return {tuple(units[i : i + 5]) for i in range(max(1, len(units) - 4))}


def unlisted_over_half(corpus: str, docs: Sequence[Doc], pairs: Iterable[tuple[str, str]],
                       silver: dict[tuple[str, str], float]) -> int:
    """How many of ``pairs`` the silver file does not list although their exact Jaccard
    by the file's own measure (:func:`silver_grams`) is >= 0.5: pairs its script missed,
    not false ones."""
    by_id = {doc.id: doc for doc in docs}
    grams: dict[str, set[tuple[str, ...]]] = {}
    count = 0
    for a, b in pairs:
        if (a, b) in silver:
            continue
        ga = grams.get(a) or grams.setdefault(a, silver_grams(corpus, by_id[a]))
        gb = grams.get(b) or grams.setdefault(b, silver_grams(corpus, by_id[b]))
        union = len(ga | gb)
        count += bool(union) and len(ga & gb) >= 0.5 * union
    return count


def char_shingles(text: str, width: int = 5) -> set[str]:
    text = "".join(text.split())
    if len(text) <= width:
        return {text} if text else set()
    return {text[i : i + width] for i in range(len(text) - width + 1)}


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A GitHub-flavoured Markdown table."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.3f}"
        return str(value)

    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def progress(items: Sequence[Doc], label: str) -> Iterator[Doc]:
    """Yield items, printing a dot per 1,000 to stderr (long corpora)."""
    for i, item in enumerate(items):
        if i and i % 1000 == 0:
            print(".", end="", file=sys.stderr, flush=True)
        yield item
    print(f" {label}", file=sys.stderr, flush=True)


Method = Callable[[list[Doc]], dict[str, str]]


def run_engine(docs: Sequence[Doc], config: object = None, *,
               boilerplate_min_docs: int | None = None, use_keys: bool = True,
               batch: int = 100, learned: dict[int, str] | None = None,
               known: frozenset[int] = frozenset()) -> dict[str, str]:
    """The online cascade as the workers run it, article by article in corpus order:
    look up the content index with the content fingerprint and its multi-probe
    fingerprints (``content_probes``), the title index with the title fingerprint, hand
    the hits to :func:`fingerprints.rule.cascade` (which adds each hit doc's anchor), join
    the chosen doc or found a new one (it becomes that doc's anchor). Only
    ``content_fp`` is ever indexed.

    Boilerplate is learned as the stream goes, as the workers do (``boilerplate_min_docs``,
    default the configuration's; 0 = off): each founded story's clauses are counted,
    promoted clauses are removed from the bodies of later batches before their features
    are extracted. Features are extracted ``batch`` articles at a time with the
    boilerplate known when the batch starts, as a worker does with one API request's
    articles (one job); decisions stay article by article. ``use_keys=False`` leaves out
    the key index (the engine before it). ``learned``, when given, receives the clauses
    promoted to boilerplate (hash -> clause text), as a worker writes them to MySQL.
    ``known``: the boilerplate the database holds at the start (a warm one's, or the
    shipped list: ``fingerprints.rule.boilerplate.shipped_hashes``)."""
    from fingerprints.rule import (
        Candidate,
        EngineConfig,
        Features,
        cascade,
        content_probes,
        extract_many,
    )
    from fingerprints.rule.boilerplate import MemoryCounter, clause_texts, story_clauses
    from fingerprints.rule.keys import query_keys, stored_keys
    from fingerprints.rule.normalize import normalize
    from fingerprints.stores.block_index import MemoryBlockIndex
    from fingerprints.stores.key_index import MemoryKeyIndex

    cfg = config if isinstance(config, EngineConfig) else EngineConfig()
    content_index = MemoryBlockIndex(cfg.k)
    title_index = MemoryBlockIndex(cfg.title_k)
    key_index = MemoryKeyIndex()
    features = []
    doc_of: list[str] = []
    anchor: dict[str, int] = {}
    labels: dict[str, str] = {}
    min_docs = cfg.boilerplate_min_docs if boilerplate_min_docs is None else boilerplate_min_docs
    counter = MemoryCounter(min_docs) if min_docs else None
    boilerplate: set[int] = set(known)
    frozen: frozenset[int] = frozenset(boilerplate)
    # Without learning, features depend on the article alone, so they are extracted in
    # batches up front; the decisions below still run one article at a time.
    extracted = (None if counter else
                 extract_many([(doc.title, doc.content) for doc in docs], cfg,
                              boilerplate=frozen))
    chunk: list[Features] = []
    known = frozen
    content_radius, title_radius = cfg.content_radius, cfg.title_radius
    for i, doc in enumerate(docs):
        if extracted is not None:
            new = extracted[i]
        else:
            if i % batch == 0:
                known = frozen
                chunk = extract_many([(d.title, d.content) for d in docs[i : i + batch]], cfg,
                                     boilerplate=known)
            new = chunk[i % batch]
        hits: set[int] = set()
        if new.content_fp:
            hits.update(content_index.query_union([new.content_fp, *content_probes(new, cfg)],
                                                  content_radius))
        if new.title_fp:
            found = title_index.query(new.title_fp, title_radius)
            hits.update(item for item, _, _ in found)
        if use_keys:
            hits.update(key_index.query(query_keys(new.keys)))
        decision = cascade(
            new, url_owner=None, config=cfg,
            hits=[Candidate(j, doc_of[j], features[j], anchor[doc_of[j]] == j)
                  for j in sorted(hits)],
            anchors_of=lambda key: (Candidate(anchor[key], key, features[anchor[key]], True),))
        if decision is None:
            doc_key = f"d{i}"
            anchor[doc_key] = i
        else:
            doc_key = decision.doc_key
        # a new story, or a body that is not about its title, counts (as the workers do)
        if counter is not None and (decision is None or new.off_title):
            body, hashes = story_clauses(normalize(doc.content), known)
            promoted = counter.observe(hashes).promoted
            if promoted:
                boilerplate.update(promoted)
                frozen = frozenset(boilerplate)
                if learned is not None:
                    learned.update(clause_texts(body, promoted))
        features.append(new)
        doc_of.append(doc_key)
        labels[doc.id] = doc_key
        if new.content_fp:
            content_index.add(i, new.content_fp)
        if new.title_fp:
            title_index.add(i, new.title_fp)
        key_index.add(i, stored_keys(new.keys))
    return labels
