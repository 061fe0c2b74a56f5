"""Duplicate rows of a relational table (the 2015 seed), with blocking + field comparison.

The seed fingerprints each row with a SimHash whose features are the row's fields —
short fields as whole values with a higher weight, long text segmented with TF
weights — and calls rows within Hamming distance 3 duplicates. Measured on tables of
real duplicate records (names, addresses, phones with typos and abbreviations), that
finds few of them: a duplicate differs in several short fields, and each difference
replaces a whole-value feature. So the fingerprint is one *blocking* among several,
and every candidate pair is then compared field by field:

* blocking (union of): the seed's row SimHash within ``k``; per field, a SimHash of
  character trigrams within ``field_k`` (catches typos); shared rare words per field
  (word appears in at most ``max_token_rows`` rows; catches abbreviations and
  reordered words); a sorted neighbourhood over each short field (``window`` rows);
* comparison: per field a string similarity (short fields: the best of Jaro-Winkler,
  token-sort and discounted token-set ratios after normalization and abbreviation
  expansion; long text: word Jaccard / containment), a number guard (a field whose
  numbers are disjoint — another house number, another phone — counts at most 0.3;
  the fs method's guard is stricter, :func:`numbers_differ`),
  a weighted mean over the fields both rows have (missing values are skipped; at least
  half of the weight must be present), and ``threshold``;
* groups: connected components of the matching pairs (the fs method: average
  linkage, :func:`_average_link_groups`).

Nothing here imports Django; reading is done with the database driver and a
server-side cursor, read-only (:func:`read_rows`).
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import numpy as np
from rapidfuzz import fuzz
from rapidfuzz.distance import JaroWinkler

from fingerprints.batch.unionfind import UnionFind
from fingerprints.rule.simhash import simhash
from fingerprints.rule.tokenize import get_segmenter
from fingerprints.table.allpairs import all_pairs
from fingerprints.table.fellegi import (
    MISSING,
    Comparer,
    FSModel,
    choose_threshold,
    comparison_level,
    estimate,
    match_probabilities,
    random_pairs,
)

__all__ = [
    "FieldSpec",
    "TableConfig",
    "TableResult",
    "compare_pairs",
    "dedup_rows",
    "parse_fields",
    "read_rows",
]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]{0,63}$")

# Common English abbreviations of addresses, company and place names.
ABBREVIATIONS = {
    "st": "street", "str": "street", "ave": "avenue", "av": "avenue", "blvd": "boulevard",
    "blv": "boulevard", "bd": "boulevard", "rd": "road", "dr": "drive", "ln": "lane",
    "hwy": "highway", "pkwy": "parkway", "pky": "parkway", "pl": "place", "sq": "square",
    "ct": "court", "cir": "circle", "ter": "terrace", "trl": "trail", "expy": "expressway",
    "n": "north", "s": "south", "e": "east", "w": "west", "ne": "northeast",
    "nw": "northwest", "se": "southeast", "sw": "southwest", "mt": "mount", "ft": "fort",
    "&": "and", "co": "company", "corp": "corporation", "inc": "incorporated",
    "ltd": "limited", "intl": "international", "univ": "university", "dept": "department",
    "bros": "brothers", "ctr": "center", "centre": "center", "fl": "floor",
    "ste": "suite", "apt": "apartment", "no": "number", "restaurant": "restaurant",
    "rest": "restaurant", "cafe": "cafe", "caffe": "cafe", "deli": "delicatessen",
}
# Ordinals written as words read as the numbered form ("seventh avenue" = "7th avenue"),
# so that the two spellings of one street agree and the number guard sees them.
ORDINALS = {
    "first": "1st", "second": "2nd", "third": "3rd", "fourth": "4th", "fifth": "5th",
    "sixth": "6th", "seventh": "7th", "eighth": "8th", "ninth": "9th", "tenth": "10th",
    "eleventh": "11th", "twelfth": "12th", "thirteenth": "13th", "fourteenth": "14th",
    "fifteenth": "15th", "sixteenth": "16th", "seventeenth": "17th", "eighteenth": "18th",
    "nineteenth": "19th", "twentieth": "20th",
}
_APOSTROPHE = re.compile(r"['’`´]")
_NON_WORD = re.compile(r"[^\w&]+")
_HAS_DIGIT = re.compile(r"\d")
_CJK_GAP = re.compile(r"(?<=[\u3400-\u9fff]) (?=[\u3400-\u9fff])")


@dataclass(frozen=True)
class FieldSpec:
    name: str
    kind: str = "short"  # "short": whole values and words; "text": segmented long text
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not _IDENTIFIER.match(self.name):
            raise ValueError(f"field name must be a plain column name, not {self.name!r}")
        if self.kind not in ("short", "text"):
            raise ValueError(f"field kind must be 'short' or 'text', not {self.kind!r}")
        if not self.weight > 0:
            raise ValueError(f"field weight must be positive, not {self.weight!r}")


def parse_fields(spec: str) -> list[FieldSpec]:
    """``"name:2,addr:2,body:text"`` -> fields. ``name:W`` is a short field of weight W
    (default 1); ``body:text`` or ``body:text:W`` a long text field (default weight 1)."""
    fields: list[FieldSpec] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        name, *rest = part.split(":")
        kind, weight = "short", 1.0
        try:
            if rest and rest[0] == "text":
                kind = "text"
                if len(rest) > 1:
                    weight = float(rest[1])
            elif rest:
                weight = float(rest[0])
        except ValueError as exc:
            raise ValueError(f"bad field spec {part!r}: weight must be a number") from exc
        if len(rest) > (2 if kind == "text" else 1):
            raise ValueError(f"bad field spec {part!r}")
        fields.append(FieldSpec(name.strip(), kind, weight))
    if not fields:
        raise ValueError("give at least one field, e.g. 'name:2,addr:2,body:text'")
    if len({f.name for f in fields}) != len(fields):
        raise ValueError("a field is listed twice")
    return fields


@dataclass(frozen=True)
class TableConfig:
    k: int = 3  # row SimHash blocking (the seed's method)
    field_k: int = 4  # per-field trigram SimHash blocking
    threshold: float = 0.8  # weighted field similarity needed for a duplicate
    max_token_rows: int = 40  # a word in more rows than this is not a blocking key
    window: int = 4  # sorted neighbourhood
    min_present: float = 0.5  # share of the total weight both rows must have values for
    number_cap: float = 0.3  # field score when both have numbers and share none
    # "fs": Fellegi-Sunter weights learned by EM (fingerprints.table.fellegi); "similarity":
    # the weighted mean of field similarities against ``threshold``
    method: str = "fs"
    match_threshold: float | None = None  # fs: posterior probability; None: from the data
    random_pairs: int = 20000  # fs: random row pairs measuring the starting u
    veto: bool = True  # fs: an identifying field completely different vetoes a match

    def __post_init__(self) -> None:
        if self.method not in ("fs", "similarity"):
            raise ValueError(f"method must be 'fs' or 'similarity', not {self.method!r}")
        if self.match_threshold is not None and not 0.0 < self.match_threshold < 1.0:
            raise ValueError("the match probability threshold must be in (0, 1), "
                             f"not {self.match_threshold!r}")
        if not 0 <= self.k <= 8 or not 0 <= self.field_k <= 8:
            raise ValueError("k and field_k must be from 0 to 8")
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], not {self.threshold!r}")
        if self.window < 1 or self.max_token_rows < 2:
            raise ValueError("window must be >= 1 and max_token_rows >= 2")


# --- normalization ---------------------------------------------------------------------


def normalize_value(value: Any) -> str:
    """NFKC, lower case, apostrophes dropped (``art's`` -> ``arts``), punctuation to
    spaces, abbreviations expanded (``blvd.`` -> ``boulevard``). '' for missing."""
    if value is None:
        return ""
    text = unicodedata.normalize("NFKC", str(value)).lower()
    text = _APOSTROPHE.sub("", text)
    words = _NON_WORD.sub(" ", text).split()
    # "张 伟" and "张伟" are one name: no spaces between Chinese characters.
    words = [ORDINALS.get(w, ABBREVIATIONS.get(w, w)) for w in words]
    return _CJK_GAP.sub("", " ".join(words))


def _numbers(words: Sequence[str]) -> frozenset[str]:
    return frozenset(w for w in words if _HAS_DIGIT.search(w))


@dataclass
class _Row:
    key: Any
    values: list[str]  # normalized; '' when missing
    words: list[tuple[str, ...]]
    numbers: list[frozenset[str]]


# --- comparison ----------------------------------------------------------------------


def short_similarity(a: str, b: str) -> float:
    if a == b:
        return 1.0
    return max(
        JaroWinkler.normalized_similarity(a, b),
        fuzz.token_sort_ratio(a, b) / 100.0,
        0.9 * fuzz.token_set_ratio(a, b) / 100.0,
    )


def text_similarity(a: Sequence[str], b: Sequence[str]) -> float:
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    shared = len(sa & sb)
    return max(shared / len(sa | sb), 0.9 * shared / min(len(sa), len(sb)))


def numbers_differ(a: frozenset[str], b: frozenset[str]) -> bool:
    """Both values carry a number the other lacks: another house number or phone even
    when a street number is shared ("106 e 57th st" / "149 e 57th st"). One side's
    numbers inside the other's is no conflict ("854 7th ave between 54th and 55th
    sts" / "854 7th ave")."""
    return bool(a - b and b - a)


def compare_pairs(rows: Sequence[_Row], fields: Sequence[FieldSpec],
                  pairs: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(levels, similarities) of ``pairs`` of prepared rows: arrays of shape
    (pairs, fields); level ``-1`` and similarity NaN where a value is missing."""
    levels = np.full((len(pairs), len(fields)), MISSING, dtype=np.int8)
    sims = np.full((len(pairs), len(fields)), np.nan, dtype=np.float64)
    for p, (i, j) in enumerate(pairs):
        a, b = rows[i], rows[j]
        for f, spec in enumerate(fields):
            va, vb = a.values[f], b.values[f]
            if not va or not vb:
                continue
            if spec.kind == "text":
                s = text_similarity(a.words[f], b.words[f])
            else:
                s = short_similarity(va, vb)
            differ = numbers_differ(a.numbers[f], b.numbers[f])
            sims[p, f] = s
            levels[p, f] = comparison_level(s, va == vb, differ)
    return levels, sims



@dataclass(frozen=True)
class PairScore:
    score: float  # similarity method: weighted similarity; fs: match probability
    fields: tuple[float | None, ...]  # None: a value is missing on one side
    # fs only: each field's match weight (log2 Bayes factor) and the pair's total
    contributions: tuple[float | None, ...] = ()
    match_weight: float | None = None


def compare_rows(a: _Row, b: _Row, fields: Sequence[FieldSpec], config: TableConfig,
                 weights: Sequence[float] | None = None) -> PairScore:
    """Weighted field similarity; ``weights`` default to the field weights (see
    :func:`effective_weights`)."""
    weights = weights or [f.weight for f in fields]
    total = sum(weights)
    present = weighted = 0.0
    scores: list[float | None] = []
    for i, spec in enumerate(fields):
        va, vb = a.values[i], b.values[i]
        if not va or not vb:
            scores.append(None)
            continue
        if spec.kind == "text":
            s = text_similarity(a.words[i], b.words[i])
        else:
            s = short_similarity(va, vb)
        na, nb = a.numbers[i], b.numbers[i]
        if na and nb and not na & nb:
            s = min(s, config.number_cap)
        scores.append(s)
        present += weights[i]
        weighted += weights[i] * s
    if present < config.min_present * total or present == 0:
        return PairScore(0.0, tuple(scores))
    return PairScore(weighted / present, tuple(scores))


def effective_weights(rows: Sequence[_Row], fields: Sequence[FieldSpec]) -> list[float]:
    """Field weight x how much agreement on the field says: ``log(distinct values) /
    log(rows)``, at least 0.2. A field with few distinct values (a city, a category)
    agrees on most non-duplicates, so its agreement counts less — as IDF does for
    words."""
    import math

    present = max(2, len(rows))
    out = []
    for i, spec in enumerate(fields):
        distinct = len({r.values[i] for r in rows if r.values[i]})
        share = math.log(max(distinct, 2)) / math.log(present)
        out.append(spec.weight * min(1.0, max(0.2, share)))
    return out


# --- blocking -------------------------------------------------------------------------


def _trigram_fp(value: str) -> int:
    padded = f"  {value} "
    return simhash(padded[i : i + 3] for i in range(len(padded) - 2)) if value else 0


def row_fingerprint(row: _Row, fields: Sequence[FieldSpec]) -> int:
    """The seed's row SimHash: short fields as whole values weighted by the field
    weight, long text as segmented words with TF weights."""
    features: dict[str, float] = {}
    for i, spec in enumerate(fields):
        if not row.values[i]:
            continue
        if spec.kind == "text":
            for word in row.words[i]:
                name = f"{spec.name}:{word}"
                features[name] = features.get(name, 0.0) + spec.weight
        else:
            features[f"{spec.name}={row.values[i]}"] = spec.weight
    return simhash(features) if features else 0


def _fp_pairs(fps: list[int], k: int) -> Iterator[tuple[int, int]]:
    values = np.array(fps, dtype=np.uint64)
    nonzero = np.flatnonzero(values != 0)
    if len(nonzero) < 2:
        return
    distinct, inverse = np.unique(values[nonzero], return_inverse=True)
    groups: dict[int, list[int]] = {}
    for pos, group in zip(nonzero.tolist(), inverse.tolist(), strict=True):
        groups.setdefault(group, []).append(pos)
    for members in groups.values():  # identical fingerprints
        for j in members[1:]:
            yield members[0], j
    for a, b in all_pairs(distinct, k).tolist():
        for i in groups[a]:
            for j in groups[b]:
                yield (i, j) if i < j else (j, i)


def candidate_pairs(rows: Sequence[_Row], fields: Sequence[FieldSpec], config: TableConfig
                    ) -> dict[tuple[int, int], set[str]]:
    """Candidate row pairs (i < j) and the blockings that proposed each."""
    found: dict[tuple[int, int], set[str]] = {}

    def add(i: int, j: int, how: str) -> None:
        if i != j:
            found.setdefault((i, j) if i < j else (j, i), set()).add(how)

    for i, j in _fp_pairs([row_fingerprint(r, fields) for r in rows], config.k):
        add(i, j, "row-simhash")
    for f, spec in enumerate(fields):
        for i, j, how in _field_pairs(rows, f, spec, config):
            add(i, j, f"{spec.name}-{how}")
    return found


def _field_pairs(rows: Sequence[_Row], f: int, spec: FieldSpec, config: TableConfig
                 ) -> Iterator[tuple[int, int, str]]:
    """Pairs proposed by field ``f``'s blockings, tagged with the blocking's name.

    The order (trigram SimHash, rare words, sorted neighbourhood) is kept fixed because
    it decides the insertion order of :func:`candidate_pairs`' result.
    """
    if spec.kind == "short":
        for i, j in _trigram_pairs(rows, f, config.field_k):
            yield i, j, "simhash"
    for i, j in _rare_word_pairs(rows, f, config.max_token_rows):
        yield i, j, "word"
    if spec.kind == "short":
        for i, j in _sorted_neighbour_pairs(rows, f, config.window):
            yield i, j, "sorted"


def _trigram_pairs(rows: Sequence[_Row], f: int, k: int) -> Iterator[tuple[int, int]]:
    """Rows whose field ``f`` trigram SimHashes are within ``k`` (catches typos)."""
    yield from _fp_pairs([_trigram_fp(r.values[f]) for r in rows], k)


def _rare_word_pairs(rows: Sequence[_Row], f: int, max_token_rows: int
                     ) -> Iterator[tuple[int, int]]:
    """Rows sharing a word of field ``f`` that occurs in at most ``max_token_rows`` rows;
    common words are skipped since they would pair almost everything."""
    postings: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        for word in set(r.words[f]):
            postings.setdefault(word, []).append(i)
    for members in postings.values():
        if 1 < len(members) <= max_token_rows:
            for x, i in enumerate(members):
                for j in members[x + 1 :]:
                    yield i, j


def _sorted_neighbour_pairs(rows: Sequence[_Row], f: int, window: int
                            ) -> Iterator[tuple[int, int]]:
    """Rows within ``window`` places of each other when sorted by field ``f``'s value."""
    order = sorted((r.values[f], i) for i, r in enumerate(rows) if r.values[f])
    for x in range(len(order)):
        for y in range(x + 1, min(x + 1 + window, len(order))):
            yield order[x][1], order[y][1]


# --- the run ----------------------------------------------------------------------------


@dataclass
class TableResult:
    fields: list[FieldSpec]
    keys: list[Any]
    groups: list[list[int]]  # row positions, groups of two or more, earliest first
    matches: dict[tuple[int, int], PairScore]  # accepted pairs
    stats: dict[str, Any] = field(default_factory=dict)
    model: FSModel | None = None  # fs: the learned weights
    values: list[list[Any]] = field(default_factory=list)  # rows as read, for reports

    def columns(self) -> list[str]:
        names = ["group", "size", "key", "matched_key", "score",
                 *[f"score_{f.name}" for f in self.fields]]
        if self.model is not None:
            names += ["match_weight", *[f"weight_{f.name}" for f in self.fields]]
        return names

    def group_rows(self) -> Iterator[dict[str, Any]]:
        """CSV rows: every member of every group, with the scores of its best match."""
        best: dict[int, tuple[int, PairScore]] = {}
        for (i, j), score in self.matches.items():
            for me, other in ((i, j), (j, i)):
                if me not in best or score.score > best[me][1].score:
                    best[me] = (other, score)
        for number, group in enumerate(self.groups, 1):
            for pos in group:
                other, score = best[pos]
                row: dict[str, Any] = {
                    "group": number, "size": len(group), "key": self.keys[pos],
                    "matched_key": self.keys[other], "score": round(score.score, 4),
                }
                for spec, value in zip(self.fields, score.fields, strict=True):
                    row[f"score_{spec.name}"] = "" if value is None else round(value, 4)
                if self.model is not None and score.match_weight is not None:
                    row["match_weight"] = round(score.match_weight, 3)
                    for spec, weight in zip(self.fields, score.contributions, strict=True):
                        row[f"weight_{spec.name}"] = "" if weight is None else round(weight, 3)
                yield row

    def pairs(self) -> set[tuple[Any, Any]]:
        """Every pair of keys inside one group (for evaluation)."""
        out: set[tuple[Any, Any]] = set()
        for group in self.groups:
            keys = sorted(str(self.keys[p]) for p in group)
            out.update((a, b) for x, a in enumerate(keys) for b in keys[x + 1 :])
        return out


def prepare_row(key: Any, values: Sequence[Any], fields: Sequence[FieldSpec]) -> _Row:
    normalized = [normalize_value(v) for v in values]
    words: list[tuple[str, ...]] = []
    for spec, value in zip(fields, normalized, strict=True):
        if spec.kind == "text" and value:
            tokens = get_segmenter().cut(value)
            words.append(tuple(t for t in tokens if t.strip() and not _NON_WORD.fullmatch(t)))
        else:
            words.append(tuple(value.split()))
    return _Row(key, normalized, words, [_numbers(w) for w in words])


def dedup_rows(
    rows: Iterable[tuple[Any, Sequence[Any]]],
    fields: Sequence[FieldSpec],
    config: TableConfig | None = None,
    *,
    progress: Callable[[int], object] | None = None,
    make_comparer: Callable[[list[_Row], Sequence[FieldSpec]], Comparer] | None = None,
) -> TableResult:
    """Group duplicate rows: ``rows`` are (key, values in ``fields`` order).

    ``make_comparer(prepared rows, fields)`` gives the function computing the comparison
    levels of a list of row-position pairs for the fs method (default: in this process;
    :mod:`fingerprints.table.spark` gives one that runs on Spark). Both compute the same
    arrays, so both give the same groups."""
    config = config or TableConfig()
    prepared: list[_Row] = []
    raw: list[list[Any]] = []
    for key, values in rows:
        prepared.append(prepare_row(key, values, fields))
        raw.append(list(values))
        if progress is not None:
            progress(1)
    candidates = candidate_pairs(prepared, fields, config)
    if config.method == "fs":
        compare = make_comparer(prepared, fields) if make_comparer else None
        result = _dedup_fs(prepared, fields, config, candidates, compare)
        result.values = raw
        return result
    weights = effective_weights(prepared, fields)
    matches: dict[tuple[int, int], PairScore] = {}
    found_by: Counter[str] = Counter()
    for (i, j), how in candidates.items():
        score = compare_rows(prepared[i], prepared[j], fields, config, weights)
        if score.score >= config.threshold:
            matches[(i, j)] = score
            found_by.update(how)
    sets: UnionFind[int] = UnionFind(range(len(prepared)))
    for i, j in matches:
        sets.union(i, j)
    groups = sorted((g for g in sets.groups() if len(g) > 1), key=lambda g: g[0])
    stats = {
        "rows": len(prepared), "candidatePairs": len(candidates), "matchedPairs": len(matches),
        "groups": len(groups), "rowsInGroups": sum(len(g) for g in groups),
        "largestGroup": max((len(g) for g in groups), default=0),
        "matchesFoundBy": dict(sorted(found_by.items())),
        "fieldWeights": {f.name: round(w, 3) for f, w in zip(fields, weights, strict=True)},
    }
    return TableResult(list(fields), [r.key for r in prepared], groups, matches, stats,
                       values=raw)


def _probabilities(model: FSModel, prepared: Sequence[_Row], compare: Comparer,
                   pairs: Sequence[tuple[int, int]], veto_fields: Sequence[int]
                   ) -> list[float]:
    """Match probabilities of pairs the blocking did not propose (for grouping)."""
    if not pairs:
        return []
    levels, _ = compare(pairs)
    _, probabilities = match_probabilities(model, levels, [prepared[i].values for i, _ in pairs])
    if veto_fields:
        probabilities = np.where((levels[:, list(veto_fields)] == 0).any(axis=1), 0.0,
                                 probabilities)
    return [float(p) for p in probabilities]


def _average_link_groups(
    n: int, accepted: Sequence[tuple[int, int]], known: dict[tuple[int, int], float],
    threshold: float, score_more: Callable[[list[tuple[int, int]]], list[float]],
) -> tuple[list[list[int]], set[tuple[int, int]]]:
    """(groups, the accepted pairs inside them). Accepted pairs, most probable first,
    join their two groups; but two groups of two or more rows join only when the row
    pairs across them are, on average, more likely duplicates than not (mean match
    probability at least 0.5, or the pair threshold when that is lower: the pairs the
    merge adds then hold more expected duplicates than non-duplicates). Pairs the
    blocking did not propose are scored on demand.

    Connected components chain: a hotel's café and its dining room, each entered
    twice at the hotel's address, become one group through one accepted pair though
    the other cross pairs say apart (0.91, 0.65, 0.13, 0.13). A single row still joins
    a group on its accepted pair alone, as in connected components: a row entered
    with many errors (FEBRL's swapped names, another birth date and id) matches its
    group's closest member and not the others, and belongs all the same."""
    join_at = min(threshold, 0.5)
    sets: UnionFind[int] = UnionFind(range(n))
    members: dict[int, list[int]] = {x: [x] for x in range(n)}
    for i, j in sorted(accepted, key=lambda pair: -known[pair]):
        ri, rj = sets.find(i), sets.find(j)
        if ri == rj:
            continue
        if len(members[ri]) > 1 and len(members[rj]) > 1:
            cross = [(x, y) if x < y else (y, x) for x in members[ri] for y in members[rj]]
            unknown = [pair for pair in cross if pair not in known]
            known.update(zip(unknown, score_more(unknown), strict=True))
            if sum(known[pair] for pair in cross) < len(cross) * join_at:
                continue
        sets.union(i, j)
        root = sets.find(i)
        members[root] = members.pop(ri) + members.pop(rj)
    groups = sorted((g for g in sets.groups() if len(g) > 1), key=lambda g: g[0])
    joined = {(i, j) for i, j in accepted if sets.find(i) == sets.find(j)}
    return groups, joined


def identifying_fields(fields: Sequence[FieldSpec]) -> list[int]:
    """The fields weighted highest, when the weights differ (``name:2,addr:2,city``:
    name and addr). Equal weights name none."""
    weights = [f.weight for f in fields]
    if max(weights) == min(weights):
        return []
    return [i for i, w in enumerate(weights) if w == max(weights)]


def _dedup_fs(prepared: list[_Row], fields: Sequence[FieldSpec], config: TableConfig,
              candidates: dict[tuple[int, int], set[str]], compare: Comparer | None
              ) -> TableResult:
    """The fs method on the candidate pairs (see :mod:`fingerprints.table.fellegi`)."""
    if compare is None:
        def compare(pairs: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
            return compare_pairs(prepared, fields, pairs)

    pairs = list(candidates)
    levels, sims = compare(pairs)
    random_levels, _ = compare(random_pairs(len(prepared), config.random_pairs))
    columns = [[r.values[f] for r in prepared] for f in range(len(fields))]
    veto_fields = identifying_fields(fields) if config.veto else []
    model = estimate(levels, random_levels, [f.name for f in fields], columns,
                     veto_fields=veto_fields)
    weights, probabilities = match_probabilities(
        model, levels, [prepared[i].values for i, _ in pairs])
    vetoed = (levels[:, veto_fields] == 0).any(axis=1) if veto_fields and len(levels) \
        else np.zeros(len(pairs), dtype=bool)
    probabilities = np.where(vetoed, 0.0, probabilities)
    chosen, expected_precision, expected_recall = choose_threshold(probabilities)
    threshold = config.match_threshold if config.match_threshold is not None else chosen
    accepted_pairs = [pair for p, pair in enumerate(pairs) if probabilities[p] >= threshold]
    groups, joined = _average_link_groups(
        len(prepared), accepted_pairs, dict(zip(pairs, probabilities.tolist(), strict=True)),
        threshold, lambda more: _probabilities(model, prepared, compare, more, veto_fields))
    matches: dict[tuple[int, int], PairScore] = {}
    found_by: Counter[str] = Counter()
    for p, (i, j) in enumerate(pairs):
        if probabilities[p] >= threshold and (i, j) in joined:
            contributions = model.contributions(levels[p], prepared[i].values)
            scores = tuple(None if np.isnan(s) else float(s) for s in sims[p])
            matches[(i, j)] = PairScore(float(probabilities[p]), scores, tuple(contributions),
                                        float(weights[p]))
            found_by.update(candidates[(i, j)])
    accepted = probabilities >= threshold
    stats = {
        "method": "fs",
        "rows": len(prepared), "candidatePairs": len(pairs), "matchedPairs": len(matches),
        "groups": len(groups), "rowsInGroups": sum(len(g) for g in groups),
        "largestGroup": max((len(g) for g in groups), default=0),
        "matchesFoundBy": dict(sorted(found_by.items())),
        "threshold": round(threshold, 6),
        "thresholdFromData": config.match_threshold is None,
        "chosenThreshold": round(chosen, 6),
        "identifyingFields": [fields[f].name for f in veto_fields],
        "vetoedPairs": int(vetoed.sum()),
        "expectedPrecision": round(
            float(probabilities[accepted].sum() / max(accepted.sum(), 1)), 4),
        "expectedRecall": round(
            float(probabilities[accepted].sum() / max(probabilities.sum(), 1e-12)), 4),
        "expectedPrecisionAtChosen": round(expected_precision, 4),
        "expectedRecallAtChosen": round(expected_recall, 4),
    }
    return TableResult(list(fields), [r.key for r in prepared], groups, matches, stats, model)


# --- reading a table -------------------------------------------------------------------


def _check_identifier(name: str) -> str:
    if not _IDENTIFIER.match(name):
        raise ValueError(f"not a plain table or column name: {name!r}")
    return name


def sqlite_path(url_path: str) -> str:
    """The file a ``sqlite:`` URL names. ``sqlite:////abs/x.db`` is absolute and
    ``sqlite:///rel/x.db`` relative to the working directory (SQLAlchemy's and
    dj-database-url's reading); but ``sqlite:///tmp/x.db`` is commonly meant as
    ``/tmp/x.db``, so when only that file exists, it is the one. Neither existing is
    an error naming both places (SQLite's own message, "unable to open database file",
    names neither)."""
    relative = url_path[1:] if url_path.startswith("/") else url_path
    candidates = [relative] if relative.startswith("/") else [relative, "/" + relative]
    for candidate in candidates:
        if Path(candidate).is_file():
            return candidate
    raise ValueError(f"no SQLite database at {' or '.join(candidates)} "
                     "(sqlite:////absolute/path.db or sqlite:///relative/path.db)")


def read_rows(
    database_url: str,
    table: str,
    key: str,
    columns: Sequence[str],
    *,
    chunk: int = 5000,
) -> tuple[int | None, Iterator[tuple[Any, list[Any]]]]:
    """(row count or None, iterator of (key, values)) from ``table``, read-only.

    MySQL/MariaDB: an unbuffered server-side cursor (``SSCursor``) inside a READ ONLY
    transaction, fetched ``chunk`` rows at a time. SQLite: the file opened read-only
    (``mode=ro``), fetched ``chunk`` rows at a time. Identifiers are checked against a
    plain-name pattern and quoted; nothing is ever written.
    """
    for name in (table, key, *columns):
        _check_identifier(name)
    parts = urlsplit(database_url)
    scheme = parts.scheme.split("+")[0]
    if scheme in ("mysql", "mariadb"):
        import MySQLdb
        import MySQLdb.cursors

        connection = MySQLdb.connect(
            host=parts.hostname or "localhost", port=parts.port or 3306,
            user=unquote(parts.username or "root"), passwd=unquote(parts.password or ""),
            db=parts.path.lstrip("/"), charset="utf8mb4",
            cursorclass=MySQLdb.cursors.SSCursor,
        )
        quote = "`{}`".format
        count_cursor = connection.cursor(MySQLdb.cursors.Cursor)
        count_cursor.execute(f"SELECT COUNT(*) FROM {quote(table)}")  # noqa: S608
        total = int(count_cursor.fetchone()[0])
        count_cursor.close()
        connection.query("START TRANSACTION READ ONLY")
    elif scheme == "sqlite":
        connection = sqlite3.connect(f"file:{sqlite_path(parts.path)}?mode=ro", uri=True)
        quote = '"{}"'.format
        total = int(connection.execute(f"SELECT COUNT(*) FROM {quote(table)}").fetchone()[0])
    else:
        raise ValueError(f"unsupported database URL scheme {parts.scheme!r} (mysql, sqlite)")
    select = ", ".join(quote(c) for c in (key, *columns))
    sql = f"SELECT {select} FROM {quote(table)} ORDER BY {quote(key)}"  # noqa: S608

    def rows() -> Iterator[tuple[Any, list[Any]]]:
        cursor = connection.cursor()
        try:
            cursor.execute(sql)
            while True:
                batch = cursor.fetchmany(chunk)
                if not batch:
                    break
                for record in batch:
                    yield record[0], list(record[1:])
        finally:
            cursor.close()
            connection.close()

    return total, rows()
