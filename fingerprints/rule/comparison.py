"""The comparison vector: every comparison of a candidate pair, always made.

The rule's walk (:mod:`fingerprints.rule.verification`) stops at its first exit, so a
pair reaches one body level and, sometimes, a guard: a model fitted to those levels
can only re-weight the rule's leaves. Here the same comparisons are made for *every*
pair, whatever their outcome, each as a continuous measure read from what
:class:`~fingerprints.rule.features.Features` holds; ``None`` only when the data is
missing (no body, no number on one side, no pictures). The match model that learns from
the vector (:mod:`fingerprints.rule.vector_model`) puts each measure at graded levels
(its cut points are the model's data) and adds one weight per level reached.

Every measure is a ratio of integer counts or an edit similarity of two strings, so it
is the same float on every machine. Pure: no I/O, no state. docs/engine.md, "The
comparison vector and the learned model", lists them and what each is for.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any

import numpy as np

from fingerprints.rule.features import Features
from fingerprints.rule.kernel import kernel
from fingerprints.rule.main_body import MAX_CODES, main_mask
from fingerprints.rule.picture_evidence import nearest_picture
from fingerprints.rule.shorttext import short_measures
from fingerprints.rule.sketch import Sketch, overlap_counts
from fingerprints.rule.vocabulary import NAME_FLAG

PICTURE_BITS = 10  # EngineConfig.picture_bits's default: hashes this close are one picture


@dataclass(frozen=True)
class Contexts:
    """Numbers (or names) in context of a pair: the contexts each side has (below the
    common cut of the two stored lists, where both are complete), the contexts both
    have, and how many of those carry other numbers (or names) on the two sides."""

    a: int
    b: int
    shared: int
    conflicts: int


def context_counts(a: Features, b: Features, *, names: bool = False) -> Contexts:
    """:class:`Contexts` of the numbers in context (``names=True``: of the names). A
    context is the word before a number; the same context with another number is the
    mark of a template, a context one side lacks says nothing."""
    return both_contexts(a, b)[int(names)]


def both_contexts(a: Features, b: Features) -> tuple[Contexts, Contexts]:
    """(numbers, names) :class:`Contexts` of a pair: the kernel's count when it is built,
    else :func:`_both_contexts_py` (the same counts)."""
    if kernel is None:
        return _both_contexts_py(a, b)
    numbers, names = kernel.contexts(a.numbers, a.number_count, b.numbers, b.number_count)
    return Contexts(*numbers), Contexts(*names)


def _both_contexts_py(a: Features, b: Features) -> tuple[Contexts, Contexts]:
    """:func:`both_contexts` in Python, in one pass over the two lists.

    A stored value is ``context << 16 | number`` with the name flag in bit 15 of the
    number, so ``value >> 15`` (``_KIND``) is the context with its kind (odd: a name): two sides
    agree on a context when they share a value there, and conflict on a shared
    context when they share none."""
    va = np.frombuffer(a.numbers, dtype="<u4").tolist()
    vb = np.frombuffer(b.numbers, dtype="<u4").tolist()
    if not va or not vb:
        return _NONE, _NONE
    # each side keeps its smallest values; compare only below the common cut, where
    # both lists are complete
    full = 0xFFFFFFFF
    cut = min(va[-1] if a.number_count > len(va) else full,
              vb[-1] if b.number_count > len(vb) else full)
    if cut != full:
        # a truncated context may have lost some of its numbers: keep whole contexts only
        below = (cut >> 16) << 16
        va = [v for v in va if v < below]
        vb = [v for v in vb if v < below]
    in_a = {v >> _KIND for v in va}
    in_b = {v >> _KIND for v in vb}
    shared = in_a & in_b
    conflicts = shared - {v >> _KIND for v in set(va).intersection(vb)}
    names_a, names_b, names_shared, names_conflicts = (
        sum(map(_ODD, found)) for found in (in_a, in_b, shared, conflicts))
    return (Contexts(len(in_a) - names_a, len(in_b) - names_b, len(shared) - names_shared,
                     len(conflicts) - names_conflicts),
            Contexts(names_a, names_b, names_shared, names_conflicts))


_NONE = Contexts(0, 0, 0, 0)
_KIND = NAME_FLAG.bit_length() - 1  # value >> _KIND: the context, and its kind in bit 0
_ODD = (1).__and__  # 1 for a name's context


@dataclass(frozen=True)
class ComparisonVector:
    """The measures of one candidate pair (symmetric: ``compare_pair(a, b)`` equals
    ``compare_pair(b, a)``). ``None``: the data is missing on one side."""

    # bodies (shingle sketches; missing when either body has no shingle)
    jaccard: float | None  # shared / union of the sampled shingles
    containment: float | None  # shared / the smaller side's: the shorter in the longer
    containment_of_longer: float | None  # shared / the larger side's: the longer in the shorter
    length_ratio: float | None  # smaller / larger shingle count (exact counts)
    # the smaller body's size in shingles: how much the body measures can say; 0 when
    # it has none, or is mute (under titles less than OFF_TITLE_SIMILARITY alike: site
    # chrome off its title and under CHROME_SHINGLES, a disclaimer or a sign-in panel;
    # a body under SHORT_SHINGLES, a stub), which says nothing of which item it is
    smaller_shingles: float
    # containment of the shorter when it has at least LONG_SHINGLES shingles, else
    # missing: a partial copy of a real body, not a stub found inside a page
    long_containment: float | None
    # shared clause keys (the 16 smallest clause hashes of each body, a short body's
    # head and tail): share of the smaller key list found in the other
    keys: float | None
    # titles (title keys: letters and digits, desk tag and site name cut off)
    title: float | None  # edit similarity
    # the edit similarity when a replaced stretch of the titles is a number or a name
    # (one frame, another filling), else 0
    title_conflict: float | None
    # the edit similarity when a replaced stretch itself holds a digit, else 0: the
    # items of a series ("(1)", "(4)" under one headline), an update's new count
    title_number_conflict: float | None
    # two short bodies kept whole (Features.short_text): edit similarity, and the same
    # when a replaced stretch is a number or a name, else 0
    short_text: float | None
    short_conflict: float | None
    # numbers in context (missing when either side has none): the share of the smaller
    # side's contexts that both have with one number, with other numbers, and how many
    # carry other numbers
    numbers_agree: float | None
    numbers_conflict: float | None
    numbers_conflicts: float | None
    # names in context (jieba's dictionary names), the same way
    names_agree: float | None
    names_conflict: float | None
    names_conflicts: float | None
    pictures: float | None  # 1 a shared picture, 0 none shared; missing without pictures
    off_title: float  # sides whose body shares no word with its title (0, 1, 2)
    char_bodies: float  # sides whose sketch is of character shingles (CJK), 0-2
    # --- from version-6 features (fingerprints/rule/main_body.py; missing before) ---
    # containment of a body's main body (lead and tail chrome set aside) in the other
    # body, the larger of the two sides': a cut repost under another site's header and
    # footer
    main_containment: float | None = None
    # codes in context (phone, order and model numbers; missing when either side has
    # none): the share of the smaller side's codes the other has, and the share of the
    # smaller side's code contexts that both have with other codes (a context only one
    # side has, a repost that dropped its contact line, is no conflict)
    codes_shared: float | None = None
    codes_conflict: float | None = None
    # what differs, read as a template or as an edit: the conflicting numbers, names and
    # codes (each ~8 shingles of text) as a share of the shorter body's shingles the
    # longer lacks, at most 1; missing without a difference or without any context
    template_share: float | None = None
    # the share of each body that is chrome (learned boilerplate, lead and tail chrome):
    # of the shorter body and of the longer
    chrome_shorter: float | None = None
    chrome_longer: float | None = None
    # --- from version-7 features (missing before) ---
    # names in context by kind (jieba's tag: person, place, organisation, other; a run of
    # single characters outside the dictionary is other): a context is the word before
    # and the kind; one both sides have with other names conflicts, weighed by its
    # rarity (the rarer of its names: a rare name that differs weighs more than 北京).
    # The rarity-weighted share of the smaller side's contexts conflicting, of all kinds
    # and of each kind (missing when a side has no name, of that kind), and their count
    names_kind_conflict: float | None = None
    names_kind_conflicts: float | None = None
    names_person_conflict: float | None = None
    names_place_conflict: float | None = None
    names_organisation_conflict: float | None = None
    names_other_conflict: float | None = None
    # the share of the shared clause keys quoted on both sides (inside quotation marks or
    # attributed, boilerplate.quoted_keys): a shared block that quotes a third source (a
    # police bulletin two write-ups both cite); missing without a shared key
    quoted_shared: float | None = None

    def values(self) -> tuple[float | None, ...]:
        return _VALUES(self)


COMPARISONS: tuple[str, ...] = tuple(f.name for f in fields(ComparisonVector))
_VALUES = attrgetter(*COMPARISONS)  # ComparisonVector.values
LONG_SHINGLES = 60  # the rule's containment_min_shingles
CHROME_SHINGLES = 300  # the rule's off_title_max_shingles: chrome is a few hundred characters
OFF_TITLE_SIMILARITY = 0.5  # the rule's off_title_similarity
SHORT_SHINGLES = 30  # the rule's short_shingles
_NEVER_MUTE = max(CHROME_SHINGLES, SHORT_SHINGLES)  # a smaller body this large is never mute


def _vector(measures: dict[str, float | None], _new: Any = object.__new__,
            _set: Any = object.__setattr__) -> ComparisonVector:
    """``ComparisonVector(**measures)`` (every field, in field order) without its
    ``__init__``: the same instance (equal, same hash and pickle: a test compares them)."""
    vector = _new(ComparisonVector)
    _set(vector, "__dict__", measures)
    return vector


def compare_pair(a: Features, b: Features, *, picture_bits: int = PICTURE_BITS,
                 pictures: bool = True) -> ComparisonVector:
    """Every comparison of ``a`` and ``b`` (no short-circuit); ``pictures=False``: the
    texts alone, the pictures measure missing."""
    sketch_a, sketch_b = a.sketch, b.sketch
    shared, na, nb = overlap_counts(sketch_a, sketch_b)
    small, large = sorted((sketch_a.shingles, sketch_b.shingles))
    title, title_conflict, title_number = _short(a.title_key, b.title_key)
    chrome = mute_body(a, b, small, title)
    bodies = na > 0 and nb > 0
    containment = shared / min(na, nb) if bodies else None
    numbers, names = _context_counts(a, b)
    short, short_conflict, _number = _short(a.short_text, b.short_text)
    parts = a.has_parts and b.has_parts
    # codes on both sides (most pairs have none: no conversion of two empty lists)
    codes = _code_contexts(a.codes, b.codes) if parts and a.codes and b.codes else None
    conflicts = numbers[3] + names[3] + (codes[2] if codes else 0)
    differing = (1.0 - shared / min(na, nb)) * small if bodies else 0.0
    contexts = (numbers[0] and numbers[1]) or (names[0] and names[1]) or codes
    # the body's version-6 measures read two bodies of SHORT_SHINGLES or more: a short
    # text has its own comparisons (short_text, short_conflict), and a weight learned
    # on long bodies' chrome or main body says nothing of two short ones
    long = parts and bodies and small >= SHORT_SHINGLES
    chrome_shorter = chrome_longer = None
    if long:  # has_parts: both chrome shares measured
        shorter, longer = ((a, b) if sketch_a.shingles <= sketch_b.shingles else (b, a))
        chrome_shorter, chrome_longer = (shorter.chrome or 0) / 1000, (longer.chrome or 0) / 1000
    v7 = _names_and_quotes(a, b) if a.has_names and b.has_names else _NO_NAME_VALUES
    # the instance's __dict__ set once (_vector): the frozen dataclass's __init__ sets
    # each of the 27 fields through object.__setattr__
    return _vector({
        "jaccard": shared / (na + nb - shared) if bodies else None,
        "containment": containment,
        "containment_of_longer": shared / max(na, nb) if bodies else None,
        "length_ratio": small / large if small else None,
        "smaller_shingles": 0.0 if chrome else float(small),
        "long_containment": containment if bodies and small >= LONG_SHINGLES else None,
        "keys": _shared_keys(a.keys, b.keys),
        "title": title,
        "title_conflict": title_conflict,
        "title_number_conflict": title_number,
        "short_text": short,
        "short_conflict": short_conflict,
        "numbers_agree": _agree(numbers),
        "numbers_conflict": _conflict(numbers),
        "numbers_conflicts": float(numbers[3]) if numbers[0] and numbers[1] else None,
        "names_agree": _agree(names),
        "names_conflict": _conflict(names),
        "names_conflicts": float(names[3]) if names[0] and names[1] else None,
        "pictures": (None if not pictures or not a.pictures or not b.pictures
                     else float(nearest_picture(a, b, picture_bits) is not None)),
        "off_title": float(a.off_title + b.off_title),
        "char_bodies": float(a.char_shingles + b.char_shingles),
        "main_containment": _main_containment(a, b, shared, na, nb) if long else None,
        "codes_shared": codes[0] if codes else None,
        "codes_conflict": codes[1] if codes else None,
        "template_share": (min(1.0, TEMPLATE_SHINGLES * conflicts / differing)
                           if long and contexts and differing >= 1.0 else None),
        "chrome_shorter": chrome_shorter,
        "chrome_longer": chrome_longer,
        # the version-7 measures (_NAME_FIELDS), missing unless both rows have them
        "names_kind_conflict": v7[0],
        "names_kind_conflicts": v7[1],
        "names_person_conflict": v7[2],
        "names_place_conflict": v7[3],
        "names_organisation_conflict": v7[4],
        "names_other_conflict": v7[5],
        "quoted_shared": v7[6],
    })


Counts = tuple[int, int, int, int]  # a Contexts' fields: a, b, shared, conflicts

KINDS = ("person", "place", "organisation", "other")  # shorttext.KIND_NAMES
_NAME_FIELDS = ("names_kind_conflict", "names_kind_conflicts",
                *(f"names_{kind}_conflict" for kind in KINDS), "quoted_shared")
_NO_NAMES: dict[str, float | None] = dict.fromkeys(_NAME_FIELDS)
_NO_NAME_VALUES: tuple[float | None, ...] = (None,) * len(_NAME_FIELDS)
_MAX_NAMES = 32  # vocabulary.MAX_NAMES (this module does not import the vocabulary's tables)


def _names_and_quotes(a: Features, b: Features) -> tuple[float | None, ...]:
    """The version-7 measures of two rows that both have them, in ``_NAME_FIELDS``'
    order: the kernel's ``names_and_quotes`` when it is built (a merge of the sorted
    lists; the sets and dicts of the Python cost about 40k instructions an article of the
    online pass), else :func:`_names_and_quotes_py` (the same values: tested)."""
    if kernel is not None:
        values: tuple[float | None, ...] = kernel.names_and_quotes(
            a.names or b"", a.name_count, b.names or b"", b.name_count,
            a.keys or b"", a.quoted or 0, b.keys or b"", b.quoted or 0)
        return values
    return tuple(_names_and_quotes_py(a, b).values())


def _names_and_quotes_py(a: Features, b: Features) -> dict[str, float | None]:
    """The version-7 measures of two rows that both have them (the reference of the
    kernel's ``names_and_quotes``)."""
    out = dict(_NO_NAMES)
    out["quoted_shared"] = quoted_shared(a.keys, a.quoted or 0, b.keys, b.quoted or 0)
    by_a, by_b = _name_contexts(a, b)
    if not by_a or not by_b:
        return out
    weight_a, weight_b, conflict = [0] * 4, [0] * 4, [0] * 4
    conflicts = 0
    for by, weight in ((by_a, weight_a), (by_b, weight_b)):
        for context, (_values, rarity) in by.items():
            weight[context & 3] += rarity
    for context in by_a.keys() & by_b.keys():
        (values_a, rarity_a), (values_b, rarity_b) = by_a[context], by_b[context]
        if values_a.isdisjoint(values_b):
            conflict[context & 3] += max(rarity_a, rarity_b)
            conflicts += 1
    out["names_kind_conflict"] = min(1.0, sum(conflict) / min(sum(weight_a), sum(weight_b)))
    out["names_kind_conflicts"] = float(conflicts)
    for kind, name in enumerate(KINDS):
        if weight_a[kind] and weight_b[kind]:
            out[f"names_{name}_conflict"] = min(
                1.0, conflict[kind] / min(weight_a[kind], weight_b[kind]))
    return out


NameContexts = dict[int, tuple[set[int], int]]


def _name_contexts(a: Features, b: Features) -> tuple[NameContexts, NameContexts]:
    """Each side's names in context below the common cut (where both stored lists are
    complete): (context << 2 | kind) -> (its names' values, the largest rarity)."""
    va = np.frombuffer(a.names or b"", dtype="<u4").tolist()
    vb = np.frombuffer(b.names or b"", dtype="<u4").tolist()
    if not va or not vb:
        return {}, {}
    full = 0xFFFFFFFF
    cut = min(va[-1] if a.name_count > len(va) else full,
              vb[-1] if b.name_count > len(vb) else full)
    if cut != full:  # a truncated context may have lost names: whole contexts only
        below = (cut >> 14) << 14
        va = [v for v in va if v < below]
        vb = [v for v in vb if v < below]
    sides: list[NameContexts] = []
    for values in (va, vb):
        by: NameContexts = {}
        for v in values:
            found, rarity = by.get(v >> 14, (set(), 0))
            found.add(v)
            by[v >> 14] = (found, max(rarity, (v >> 10) & 15))
        sides.append(by)
    return sides[0], sides[1]


def quoted_shared(keys_a: bytes, quoted_a: int, keys_b: bytes, quoted_b: int) -> float | None:
    """The share of the keys both sides have that are quoted on both sides (bit i of
    ``quoted``: the i-th key); missing when no key is shared."""
    if not keys_a or not keys_b:
        return None
    ka = np.frombuffer(keys_a, dtype="<u4").tolist()
    kb = np.frombuffer(keys_b, dtype="<u4").tolist()
    quoted_in_a = {key for i, key in enumerate(ka) if quoted_a >> i & 1}
    quoted_in_b = {key for i, key in enumerate(kb) if quoted_b >> i & 1}
    shared = set(ka).intersection(kb)
    if not shared:
        return None
    return len(shared & quoted_in_a & quoted_in_b) / len(shared)


def mute_body(a: Features, b: Features, small: int, title: float | None) -> bool:
    """As the rule's mute bodies: the smaller body (``small`` shingles) is chrome off its
    title, or a short body under two titles (a "video from Tieba" stub under two posts'
    own titles), so it says nothing of which item it is; under titles (``title``, their
    similarity) at least OFF_TITLE_SIMILARITY alike it is compared as a body (one
    article crawled twice with its body off its title)."""
    if small >= _NEVER_MUTE:  # the common case, at once
        return False
    return ((a.off_title and a.sketch.shingles == small
             or b.off_title and b.sketch.shingles == small) and small < CHROME_SHINGLES
            or small < SHORT_SHINGLES and bool(a.title_key) and bool(b.title_key)) \
        and (title or 0.0) < OFF_TITLE_SIMILARITY


def _context_counts(a: Features, b: Features) -> tuple[Counts, Counts]:
    """:func:`both_contexts` as plain tuples (the kernel's own, without the dataclass)."""
    if kernel is None:
        numbers, names = _both_contexts_py(a, b)
        return ((numbers.a, numbers.b, numbers.shared, numbers.conflicts),
                (names.a, names.b, names.shared, names.conflicts))
    counts: tuple[Counts, Counts] = kernel.contexts(a.numbers, a.number_count, b.numbers,
                                                    b.number_count)
    return counts


TEMPLATE_SHINGLES = 8  # character 5-grams a replaced name or number of 2-4 changes


def _code_contexts(a: bytes | None, b: bytes | None) -> tuple[float, float, int] | None:
    """(share of the smaller side's codes the other has, share of the smaller side's
    code contexts that both have with other codes, their count); None when either side
    has no code."""
    if not a or not b:
        return None
    va = np.frombuffer(a, dtype="<u4").tolist()
    vb = np.frombuffer(b, dtype="<u4").tolist()
    # a side with MAX_CODES codes kept its smallest values: compare whole contexts below
    # the common cut, where both lists are complete (as the numbers in context)
    full = 0xFFFFFFFF
    cut = min(va[-1] if len(va) >= MAX_CODES else full, vb[-1] if len(vb) >= MAX_CODES else full)
    if cut != full:
        below = (cut >> 16) << 16
        va, vb = [v for v in va if v < below], [v for v in vb if v < below]
        if not va or not vb:
            return None
    codes_a, codes_b = {v & 0xFFFF for v in va}, {v & 0xFFFF for v in vb}
    shared = len(codes_a & codes_b) / min(len(codes_a), len(codes_b))
    by_a: dict[int, set[int]] = {}
    by_b: dict[int, set[int]] = {}
    for values, by in ((va, by_a), (vb, by_b)):
        for v in values:
            by.setdefault(v >> 16, set()).add(v & 0xFFFF)
    both = by_a.keys() & by_b.keys()
    conflicts = sum(1 for ctx in both if not by_a[ctx] & by_b[ctx])
    return shared, conflicts / min(len(by_a), len(by_b)), conflicts


def _main_containment(a: Features, b: Features, shared: int, na: int, nb: int
                      ) -> float | None:
    """The share of one side's main-body samples found in the other side (both at the
    common level), the larger of the two: the shorter side's, unless the other's main
    body is the shorter (a cut copy under a long header and footer). ``shared``, ``na``,
    ``nb``: the two whole sketches' :func:`overlap_counts`, the answer when neither side
    has lead or tail chrome (the common case)."""
    if not a.main_bits and not b.main_bits:
        return shared / min(na, nb) if na and nb else 0.0 if na or nb else None
    out = None
    for one, other in ((a, b), (b, a)):
        main = one.sketch
        if one.main_bits:
            values = main.values()
            main = Sketch(main.level, main.shingles,
                          values[main_mask(one.main_bits, len(values))].astype("<u4").tobytes())
        found, samples, _theirs = overlap_counts(main, other.sketch)
        if samples:
            out = found / samples if out is None else max(out, found / samples)
    return out


def _short(a: str, b: str) -> tuple[float | None, float | None, float | None]:
    """(edit similarity, the same when a replaced stretch is a number or name else 0,
    the same when it is a number else 0) of two keys; missing when either is empty."""
    if not a or not b:
        return None, None, None
    if a == b:  # nothing replaced: what difflib's matching finds, without it
        return 1.0, 0.0, 0.0
    # difflib's matching is not symmetric
    similarity, conflict, number = short_measures(min(a, b), max(a, b))
    return similarity, similarity if conflict else 0.0, similarity if number else 0.0


def _shared_keys(a: bytes, b: bytes) -> float | None:
    """The share of the smaller distinct key list found in the other; missing when
    either has none (the kernel's counts when it is built, the same as the sets')."""
    if not a or not b:
        return None
    if kernel is not None:
        shared, na, nb = kernel.shared_keys(a, b)
        return float(shared / min(na, nb))
    ka = set(np.frombuffer(a, dtype="<u4").tolist())
    kb = set(np.frombuffer(b, dtype="<u4").tolist())
    return len(ka & kb) / min(len(ka), len(kb))


def _agree(contexts: Counts) -> float | None:
    """The share of the smaller side's contexts both have with the same value."""
    side_a, side_b, shared, conflicts = contexts
    if not side_a or not side_b:
        return None
    return (shared - conflicts) / min(side_a, side_b)


def _conflict(contexts: Counts) -> float | None:
    """The share of the smaller side's contexts both have with other values."""
    side_a, side_b, _shared, conflicts = contexts
    if not side_a or not side_b:
        return None
    return conflicts / min(side_a, side_b)
