"""Verification of a SimHash candidate pair with the stored sketches.

The rule (reasoning and measurements in ``docs/engine.md``). Its steps are
*comparisons* put at *levels* (``body: copy``, ``numbers: differ``...), and the match
model (:mod:`fingerprints.rule.match_model`) turns the levels a pair reached into a
match probability. The boundaries named below (``jaccard``, ``short_shingles``...) are
the model's :class:`~fingerprints.rule.bounds.Bounds` (``config.bounds``). The pair
matches when its probability is at least ``match_threshold``. At the default threshold
the starting model decides as the steps below say ("match", "vetoed"); other thresholds
move the line between them in the order of the weights.

1. *Nothing to compare*: either side has no shingles (an empty body, or one that
   was only boilerplate), or the bodies cannot tell two items apart under titles
   with edit similarity below ``off_title_similarity`` (the smaller is site chrome
   off its title, or a short stub: :func:`_mute_bodies`) -> the titles decide:
   ``"title-only"`` when both title keys have >= ``title_only_min_chars`` letters and
   digits, edit similarity >= ``title_only_similarity`` and no other number or name;
   else ``"empty"``.
2. *Short text*: the smaller side has fewer than ``short_shingles`` shingles. SimHash
   of a few words is noise and a few shared words prove nothing, so only near-identical
   texts match: Jaccard >= ``short_jaccard`` (both sketches are exact at this size).
   Failing the short rules (here and in 4), a *stub* — a short body off its title, a
   source line or a download link (:func:`_stub`) — is no body: the titles decide as
   in 1.
3. *Copy*: Jaccard >= ``jaccard`` and containment >= ``copy_containment`` -> match
   (a repost with light edits, a new byline, a changed header or footer). The second
   condition rejects rewrites of one event that share many phrases but keep less than
   80% of either text. Two alphabetic bodies (word 5-gram sketches) of at least
   ``containment_min_shingles`` shingles are a copy at Jaccard >= ``word_jaccard``
   alone: independent write-ups do not share 60 % of their five-word sequences.
4. *Cut or padded copy*: containment of the smaller text in the larger >=
   ``containment`` and the smaller is at least ``containment_min_shingles`` long ->
   match (the shorter article's main body is inside the longer).
   Failing that, two short bodies kept whole (``Features.short_text``) match when
   their edit similarity is >= ``short_edit`` and no replaced stretch is a number or a
   name (:mod:`fingerprints.rule.shorttext`): ``"short-edit"``.
   Two CJK bodies (character 5-gram sketches) of at least ``containment_min_shingles``
   shingles match at containment >= ``cjk_containment`` (``"contained"``), or at
   containment >= ``cjk_strict_containment`` when not one number and not one name in
   context differs (``"contained-strict"``: a repost under chrome that is a third of
   the shorter text; templates and site listings show their other names and numbers).
   Two alphabetic bodies (word 5-gram sketches) of that size match at containment >=
   ``word_containment`` (a story kept whole under a later version's new lead).
   Two bodies of that size under one headline (title keys >= ``title_only_similarity``
   alike, both >= ``title_only_min_chars`` long, no other number or name) match at
   Jaccard >= ``title_jaccard``: the seeds' title match confirmed by the content
   (``"same-headline"``).
5. *Template guard*: a match by 2, 3 or 4 is vetoed when the same context carries
   different numbers (``上证综指报收3012`` vs ``上证综指报收2998``) in more than
   ``guard_conflicts`` of the contexts both texts share (so in one at least), and in
   at least ``guard_part_min_conflicts`` when the pair's
   Jaccard is under ``guard_part_jaccard`` (a part inside a page several times its
   size, not two fillings of one frame). The same bulletin for another day or
   company, item (3) vs (4) of a photo series, share nearly all words but not their
   numbers; a repost that drops a dateline or adds a footer has no conflicting context.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fingerprints.rule.comparison import (
    ComparisonVector,
    compare_pair,
    context_counts,
)
from fingerprints.rule.config import EngineConfig
from fingerprints.rule.features import Features
from fingerprints.rule.kernel import kernel
from fingerprints.rule.match_model import MatchModel, Score
from fingerprints.rule.picture_evidence import nearest_picture
from fingerprints.rule.shorttext import (
    ShortComparison,
    compare_short,
    matching_blocks,
    ratio,
    replaced,
)
from fingerprints.rule.simhash import hamming
from fingerprints.rule.sketch import Overlap, compare
from fingerprints.rule.vector_model import VectorModel, VectorScore


@dataclass(frozen=True)
class Verification:
    ok: bool  # the match probability reaches config.match_threshold
    similarity: float  # estimated shingle Jaccard
    containment: float  # estimated share of the smaller text found in the larger
    distance: int  # Hamming distance of the content fingerprints
    reason: str  # "copy", "contained", or why it was rejected
    # the comparisons made, their levels and weights (fingerprints/rule/match_model.py;
    # with a vector model every comparison of the vector: VectorExplanation)
    score: Score | VectorScore | None = None

    @property
    def probability(self) -> float:
        return self.score.probability if self.score is not None else float(self.ok)


@dataclass
class _Path:
    """Where the rule's walk over a pair ended: the comparisons it made (in order) and
    whether that exit is one of the rule's matches (the starting model agrees: a test
    checks every exit's weight sign) and its reason."""

    accepting: bool
    reason: str
    levels: list[tuple[str, str]]

    def level(self, comparison: str) -> str | None:
        return next((lvl for c, lvl in self.levels if c == comparison), None)


def number_conflicts(a: Features, b: Features, *, names: bool = False) -> tuple[int, int]:
    """(contexts whose numbers differ, contexts both texts have).

    A context is the word before a number. The same context with other numbers is the
    mark of a template (``收盘报3012`` vs ``收盘报2998``); a context only one side has
    (a dateline a repost dropped, a footer) says nothing. ``names=True``: the same for
    the names in context (``被告人 张伟`` vs ``被告人 王芳``) instead of the numbers.
    """
    if kernel is not None:
        found: tuple[int, int] = kernel.number_conflicts(a.numbers, a.number_count, b.numbers,
                                                         b.number_count, names)
        return found
    return _number_conflicts_py(a, b, names=names)


def _number_conflicts_py(a: Features, b: Features, *, names: bool = False) -> tuple[int, int]:
    """:func:`number_conflicts` in NumPy and Python (the kernel's gives the same)."""
    contexts = context_counts(a, b, names=names)
    return contexts.conflicts, contexts.shared


def verify(a: Features, b: Features, config: EngineConfig) -> Verification:
    """The text rules (:func:`verify_text`), then the pictures when both sides have
    pictures (stock ones removed by the caller), scored by ``config.model``:

    6. *Same picture*: a pair the text rules refused (except a template veto) matches
       when the two share a picture (hashes within ``picture_bits``) and their titles
       are at least ``picture_title_similarity`` alike with no other number or name
       (both at least ``title_only_min_chars`` letters and digits): a photo post with
       only a title, a repost whose text was rewritten around the same photo.
    7. *Other picture*: a pair of two short or empty bodies (under ``short_shingles``)
       that the title-only or short-text rules accepted stays apart when the two share
       no picture: item (3) and item (4) of a photo series under one caption.
    """
    if isinstance(config.model, VectorModel):
        return verify_vector(a, b, config, config.model)
    distance, ov, path = _walk(a, b, config)
    if a.pictures and b.pictures:
        path.levels.append(("pictures", _picture_level(a, b, config)))
    return _judged(distance, ov, path, config)


def verify_text(a: Features, b: Features, config: EngineConfig) -> Verification:
    """Rules 1-5 of the module's docstring: the texts alone (with a vector model: its
    vector without the pictures)."""
    if isinstance(config.model, VectorModel):
        return verify_vector(a, b, config, config.model, pictures=False)
    return _judged(*_walk(a, b, config), config)


@dataclass(frozen=True)
class VectorExplanation(VectorScore):
    """A vector model's score of a pair, explained comparison by comparison: ``weights``
    holds one :class:`Contribution` for *every* comparison of the vector (in its
    order), the weight of the spec in force for the pair's regime (0 for a missing
    measure or one the model does not weigh); ``values`` the measures themselves."""

    regime: int
    values: tuple[float | None, ...]

    def as_dict(self) -> dict[str, Any]:
        data = super().as_dict()
        data["kind"] = "vector"
        data["regime"] = self.regime
        for item, value in zip(data["weights"], self.values, strict=True):
            item["value"] = None if value is None else round(value, 4)
        return data


def explain_vector(model: VectorModel, vector: ComparisonVector) -> VectorExplanation:
    """``model``'s score of ``vector`` with one contribution per comparison: the specs
    are read generically, so a measure added to the vector is listed (``unweighed``
    until a model weighs it)."""
    regime, total, parts = model.explain(vector)
    # the instance's __dict__ set once, in field order (a frozen dataclass's __init__
    # sets each field through object.__setattr__): VectorExplanation(...) as a test checks
    return frozen_made(VectorExplanation, {
        "model": model.version, "centibits": total, "probability": model.calibrated(total),
        "prior": model.prior, "weights": parts, "regime": regime, "values": vector.values()})


def frozen_made(cls: type[Any], values: dict[str, Any], _new: Any = object.__new__,
          _set: Any = object.__setattr__) -> Any:
    """``cls(**values)`` for a frozen dataclass without ``__post_init__`` (``values``:
    every field, in field order) without its ``__init__``: the same instance."""
    made = _new(cls)
    _set(made, "__dict__", values)
    return made


def verify_vector(a: Features, b: Features, config: EngineConfig, model: VectorModel, *,
                  pictures: bool = True) -> Verification:
    """Engine v4: every comparison of the pair (:func:`compare_pair`, no short-circuit),
    scored by ``model``; the pair matches when its integer match weight reaches the
    model's cut for ``config.match_threshold`` (the same integers online, in batch and
    on Spark). ``pictures=False``: the texts alone (the pictures measure missing)."""
    vector = compare_pair(a, b, picture_bits=config.picture_bits, pictures=pictures)
    score = explain_vector(model, vector)
    ok = score.centibits >= model.cut(config.match_threshold)
    verification: Verification = frozen_made(Verification, {
        "ok": ok, "similarity": vector.jaccard or 0.0,
        "containment": vector.containment or 0.0,
        "distance": hamming(a.content_fp, b.content_fp),
        "reason": _vector_reason(score, ok), "score": score})
    return verification


def _vector_reason(score: VectorExplanation, ok: bool) -> str:
    """The comparison that pushed hardest the way the pair was decided."""
    top, most = None, 0.0  # the first of the largest weights pushing that way
    for w in score.weights:
        push = w.weight if ok else -w.weight
        if push > most:
            top, most = w, push
    if top is None:
        return "match weight" if ok else "below match threshold"
    return f"{'match' if ok else 'no match'}: {top.comparison} {top.level}"


def _picture_level(a: Features, b: Features, config: EngineConfig) -> str:
    """The pictures comparison of two articles that both have pictures."""
    if nearest_picture(a, b, config.picture_bits) is not None:
        short = _titles_alike(a, b, config.bounds.picture_title_similarity, config)
        return "shared" if short is not None and not short.conflict else "shared-other-title"
    if max(a.sketch.shingles, b.sketch.shingles) < config.bounds.short_shingles:
        return "none-shared-short"
    return "none-shared"


def _judged(distance: int, ov: Overlap, path: _Path, config: EngineConfig) -> Verification:
    """The pair's verification: its match probability under ``config.model`` against
    ``config.match_threshold``; the reason is the rule's, or what the model changed."""
    if not isinstance(config.model, MatchModel):
        raise TypeError("the rule's walk is scored by a model of its levels")
    score, probability = config.model.scored(path.levels)
    ok = probability >= config.match_threshold
    reason = path.reason
    if ok and not path.accepting:
        reason = "same-picture" if path.level("pictures") == "shared" else "match weight"
    elif not ok and path.accepting:
        reason = ("another picture" if path.level("pictures") == "none-shared-short"
                  else "below match threshold")
    return Verification(ok, ov.jaccard, ov.containment, distance, reason, score)


def _walk(a: Features, b: Features, config: EngineConfig) -> tuple[int, Overlap, _Path]:
    """The comparisons rules 1-5 make on the texts, in the rule's order."""
    distance = hamming(a.content_fp, b.content_fp)
    ov = compare(a.sketch, b.sketch)
    bounds = config.bounds  # a property: read once per pair
    small = min(a.sketch.shingles, b.sketch.shingles)
    if small == 0 or (_mute_bodies(a, b, small, config) and compare_short(
            a.title_key, b.title_key).similarity < bounds.off_title_similarity):
        # no body, or bodies that cannot tell two items apart under unrelated titles
        # (two redirect pages, two disclaimers, two "video from Tieba" stubs): only the
        # titles can tell
        return distance, ov, _title_only(a, b, config)
    if small < bounds.short_shingles:
        if ov.jaccard >= bounds.short_jaccard:
            return distance, ov, _guarded(a, b, config, ov.jaccard, "short-copy")
        if a.short_text and b.short_text:
            short = compare_short(a.short_text, b.short_text)
            if short.similarity >= bounds.short_edit:
                if short.conflict:
                    return distance, ov, _Path(False, f"template: another {short.conflict}",
                                               [("body", "short-template")])
                # a short text is never a part of a larger page: the full guard
                return distance, ov, _guarded(a, b, config, 1.0, "short-edit")
        if _stub(a, config) or _stub(b, config):
            # a stub that says nothing about its item is no body: as for an empty one,
            # only the titles can tell
            return distance, ov, _title_only(a, b, config)
        return distance, ov, _Path(False, "short-text", [("body", "short-different")])
    if ov.jaccard >= bounds.jaccard and ov.containment >= bounds.copy_containment:
        return distance, ov, _guarded(a, b, config, ov.jaccard, "copy")
    if small >= bounds.containment_min_shingles:
        return distance, ov, _long_bodies(a, b, ov, config)
    return distance, ov, _Path(False, "dissimilar", [("body", "different")])


def _mute_bodies(a: Features, b: Features, small: int, config: EngineConfig) -> bool:
    """Bodies that say nothing about which item they are: the smaller is off its title
    (``Features.off_title``) and under ``off_title_max_shingles`` (site chrome crawled
    as the body: a disclaimer, a forum's sign-in banner, found whole in another page
    that carries the same chrome; a long article crawled under the site's name as its
    title is compared as a body), or a short body (under ``short_shingles``) under two
    titles (a stub such as "视频来自：百度贴吧" under two posts' own titles)."""
    if small < config.bounds.off_title_max_shingles and any(
            side.off_title and side.sketch.shingles == small for side in (a, b)):
        return True
    return small < config.bounds.short_shingles and bool(a.title_key) and bool(b.title_key)


def _stub(side: Features, config: EngineConfig) -> bool:
    """A short body that says nothing about its item (a source line, a download link):
    off its title and under both ``short_shingles`` and ``off_title_max_shingles`` (0
    turns every off-title rule off)."""
    bounds = config.bounds
    return side.off_title and 0 < side.sketch.shingles < min(bounds.short_shingles,
                                                             bounds.off_title_max_shingles)


def _long_bodies(a: Features, b: Features, ov: Overlap, config: EngineConfig) -> _Path:
    """Rule 4 for two bodies of at least ``containment_min_shingles`` shingles that the
    copy rule did not accept: containment, the CJK containment rule and its strict
    band, the word Jaccard and word containment rules."""
    bounds = config.bounds
    if ov.containment >= bounds.containment:
        return _guarded(a, b, config, ov.jaccard, "contained")
    if a.char_shingles and b.char_shingles:
        if ov.containment >= bounds.cjk_containment:
            return _guarded(a, b, config, ov.jaccard, "contained", "cjk-contained")
        if (ov.containment >= bounds.cjk_strict_containment
                and ov.jaccard >= bounds.cjk_strict_jaccard):
            return _strictly_guarded(a, b, config)
    if not a.char_shingles and not b.char_shingles:
        if ov.jaccard >= bounds.word_jaccard:
            return _guarded(a, b, config, ov.jaccard, "copy", "word-copy")
        if ov.containment >= bounds.word_containment:
            return _guarded(a, b, config, ov.jaccard, "contained", "word-contained")
    if ov.jaccard >= bounds.title_jaccard:
        title = _title_level(_title_match(a, b, config))
        if title == "same":
            # two fillings of one frame under one headline are what the guard is for:
            # the full guard, whatever guard_part_jaccard says
            return _guarded(a, b, config, 1.0, "same-headline", "headline-overlap",
                            [("title", title)])
        return _Path(False, "dissimilar", [("body", "headline-overlap"), ("title", title)])
    return _Path(False, "dissimilar", [("body", "different")])


def _title_level(short: ShortComparison | None) -> str:
    """The title comparison's level from :func:`_title_match`."""
    if short is None:
        return "different"
    return "conflict" if short.conflict else "same"


def _title_match(a: Features, b: Features, config: EngineConfig) -> ShortComparison | None:
    """The titles' comparison when both have at least ``title_only_min_chars`` letters
    and digits (the site's name cut off already) and edit similarity >=
    ``title_only_similarity``; else None."""
    return _titles_alike(a, b, config.bounds.title_only_similarity, config)


def _titles_alike(a: Features, b: Features, similarity: float, config: EngineConfig
                  ) -> ShortComparison | None:
    """The titles' comparison when both have at least ``title_only_min_chars`` letters
    and digits and edit similarity >= ``similarity``; else None."""
    ta, tb = a.title_key, b.title_key
    if min(len(ta), len(tb)) < config.bounds.title_only_min_chars:
        return None
    short = compare_short(ta, tb)
    return short if short.similarity >= similarity else None


def _title_only(a: Features, b: Features, config: EngineConfig) -> _Path:
    """A pair where one body is empty (or only boilerplate, or a stub): the same item
    only when the titles say so — both at least ``title_only_min_chars`` letters and digits,
    edit similarity >= ``title_only_similarity``, no other number or name."""
    short = _title_match(a, b, config)
    title = _title_level(short)
    levels = [("body", "no-body"), ("title", title)]
    if short is None:
        return _Path(False, "empty", levels)
    if short.conflict:
        return _Path(False, f"template: another {short.conflict} in the title", levels)
    return _Path(True, "title-only", levels)


def title_numbers_differ(a: Features, b: Features, config: EngineConfig) -> bool:
    """Are the titles one frame with another number in it: edit similarity >=
    ``title_frame_similarity`` and
    a stretch of digits replaced by another (``3山西采煤明星村`` against ``4山西采煤明星村``,
    item (3) and item (4) of a photo series whose captions share the series' text)?"""
    ta, tb = a.title_key, b.title_key
    if ta == tb or not any(map(str.isdigit, ta)) or not any(map(str.isdigit, tb)):
        return False  # most titles have no digit: no matcher on the hot path
    blocks = matching_blocks(ta, tb)
    if ratio(ta, tb, blocks) < config.bounds.title_frame_similarity:
        return False
    return any(ta[i1:i2].isdigit() and tb[j1:j2].isdigit()
               for i1, i2, j1, j2 in replaced(blocks))


def _in_context(conflicts: int, shared: int) -> str:
    """The numbers or names comparison's level when the guard let the pair through."""
    if conflicts:
        return "some-differ"
    return "agree" if shared else "none-shared"


def _strictly_guarded(a: Features, b: Features, config: EngineConfig) -> _Path:
    """The strict band: a repost only when no number and no name in context differs."""
    levels = [("body", "cjk-partial")]
    if title_numbers_differ(a, b, config):
        levels.append(("title", "other-number"))
        return _Path(False, "template: another number in the title", levels)
    for names in (False, True):
        conflicts, shared = number_conflicts(a, b, names=names)
        kind = "names" if names else "numbers"
        if conflicts:
            levels.append((kind, "differ"))
            return _Path(False, f"template: {conflicts}/{shared} {kind} differ (strict band)",
                         levels)
        levels.append((kind, _in_context(conflicts, shared)))
    return _Path(True, "contained-strict", levels)


def _guarded(
    a: Features,
    b: Features,
    config: EngineConfig,
    jaccard: float,
    reason: str,
    body: str | None = None,
    before: list[tuple[str, str]] | None = None,
) -> _Path:
    """The template guard on a pair whose bodies reached level ``body`` (``reason``
    unless given). A pair whose Jaccard is under ``guard_part_jaccard`` is a
    part inside a page several times its size, not two fillings of one frame (a
    template's fillers are a small share of texts of about one size): one number that
    differs in a shared context there is the longer page's own, so the number guard
    needs ``guard_part_min_conflicts`` of them."""
    levels = [("body", body or reason), *(before or ())]
    if title_numbers_differ(a, b, config):
        levels = [lvl for lvl in levels if lvl[0] != "title"] + [("title", "other-number")]
        return _Path(False, "template: another number in the title", levels)
    conflicts, shared = number_conflicts(a, b)
    # more than a share of the shared contexts is at least one conflict; a part inside
    # a larger page needs guard_part_min_conflicts of them
    bounds = config.bounds
    least = bounds.guard_part_min_conflicts if jaccard < bounds.guard_part_jaccard else 1
    if conflicts >= least and conflicts > bounds.guard_conflicts * shared:
        levels.append(("numbers", "differ"))
        return _Path(False, f"template: {conflicts}/{shared} numbers differ", levels)
    levels.append(("numbers", _in_context(conflicts, shared)))
    conflicts, shared = number_conflicts(a, b, names=True)
    if (conflicts >= bounds.name_guard_min_conflicts
            and conflicts > bounds.name_guard_conflicts * shared):
        levels.append(("names", "differ"))
        return _Path(False, f"template: {conflicts}/{shared} names differ", levels)
    levels.append(("names", _in_context(conflicts, shared)))
    return _Path(True, reason, levels)
