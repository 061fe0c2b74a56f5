"""Why a member joined its docId: the engine's stored explanation as a waterfall.

``Article.match_explanation`` is the match model's score of the article against the
member it was verified with (``Score.as_dict``: the prior, then one weight in bits per
comparison's level) or a hard rule (``{"rule": "url"}``). :func:`explain` turns it into
the steps of a waterfall like Splink's: each step's bar starts where the previous one
ended, the last bar is the match weight. The geometry is in SVG user units (attributes,
not styles), the labels are translated here.

The JSON comes from the database: only known comparison and level names get a label;
anything else is shown as its raw text (the template escapes it), and an explanation
that is not the expected shape is no explanation.

A model on the comparison vector (engine v4, ``"kind": "vector"``) explains *every*
comparison of the vector: one step each, its level (the cut points the measure lies
between, "missing" when one side has no data for it) and the measure itself; the
probability is calibrated (the model's Platt scaling of the match weight).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from fingerprints.rule.match_model import probability

# The plain words an editor reads for each comparison's level (match_model.LEVELS).
LEVEL_LABELS: dict[tuple[str, str], Promise] = {
    ("body", "copy"): _("body: copy (most of the text shared)"),
    ("body", "word-copy"): _("body: copy (most of the wording shared)"),
    ("body", "contained"): _("body: contained (the shorter text is inside the longer)"),
    ("body", "cjk-contained"): _(
        "body: mostly contained (most of the shorter Chinese text is inside the longer)"),
    ("body", "word-contained"): _(
        "body: mostly contained (most of the shorter text's wording is inside the longer)"),
    ("body", "short-copy"): _("body: short copy (two short texts, nearly identical)"),
    ("body", "short-edit"): _("body: short edit (two short texts, a few words changed)"),
    ("body", "cjk-partial"): _("body: partial copy (much of the shorter text; checked strictly)"),
    ("body", "headline-overlap"): _("body: some text shared (counts only under one headline)"),
    ("body", "no-body"): _("body: nothing to compare (empty, boilerplate or a stub)"),
    ("body", "different"): _("body: different texts"),
    ("body", "short-different"): _("body: different short texts"),
    ("body", "short-template"): _("body: short template (same words, another number or name)"),
    ("title", "same"): _("title: the same headline"),
    ("title", "different"): _("title: different headlines"),
    ("title", "conflict"): _("title: alike, but another number or name"),
    ("title", "other-number"): _("title: one frame, another number (a series)"),
    ("numbers", "agree"): _("numbers in context: the same numbers"),
    ("numbers", "none-shared"): _("numbers in context: none to compare"),
    ("numbers", "some-differ"): _("numbers in context: a few differ"),
    ("numbers", "differ"): _("numbers in context: other numbers (template)"),
    ("names", "agree"): _("names in context: the same names"),
    ("names", "none-shared"): _("names in context: none to compare"),
    ("names", "some-differ"): _("names in context: a few differ"),
    ("names", "differ"): _("names in context: other names (template)"),
    ("pictures", "shared"): _("pictures: a picture shared (titles alike)"),
    ("pictures", "shared-other-title"): _("pictures: a picture shared (other titles)"),
    ("pictures", "none-shared"): _("pictures: none shared"),
    ("pictures", "none-shared-short"): _("pictures: none shared (two short texts)"),
}
# The comparisons of the vector (fingerprints/rule/comparison.py: ComparisonVector); a
# measure without a label here is shown by its field name.
VECTOR_LABELS: dict[str, Promise] = {
    "jaccard": _("body: shared text (Jaccard)"),
    "containment": _("body: share of the shorter text inside the longer"),
    "containment_of_longer": _("body: share of the longer text inside the shorter"),
    "length_ratio": _("body: length ratio (shorter / longer)"),
    "smaller_shingles": _("body: size of the shorter text (shingles; 0 for site chrome or a "
                          "stub under other titles)"),
    "long_containment": _("body: a real body inside the other (shorter one long enough)"),
    "keys": _("shared clauses (share of the shorter's clause keys)"),
    "title": _("title: similarity"),
    "title_conflict": _("title: alike, but another number or name"),
    "title_number_conflict": _("title: alike, but another number (an item of a series)"),
    "short_text": _("short texts: similarity"),
    "short_conflict": _("short texts: alike, but another number or name"),
    "numbers_agree": _("numbers in context: share agreeing"),
    "numbers_conflict": _("numbers in context: share differing"),
    "numbers_conflicts": _("numbers in context: how many differ"),
    "names_agree": _("names in context: share agreeing"),
    "names_conflict": _("names in context: share differing"),
    "names_conflicts": _("names in context: how many differ"),
    "pictures": _("pictures: a picture shared"),
    "off_title": _("bodies that share no word with their title"),
    "char_bodies": _("Chinese bodies (character shingles)"),
}
VECTOR_LEVELS: dict[str, Promise] = {
    "missing": _("missing (no data on one side)"),
    "unweighed": _("not weighed by this model"),
}
COMPARISON_AT_LEVEL = _("%(comparison)s: %(level)s")
RULE_LABELS: dict[str, Promise] = {"url": _("same canonical URL (rule)")}
PRIOR_LABEL = _("starting weight (before any comparison)")
TOTAL_LABEL = _("match weight")

# The bars' drawing (SVG user units): BAR_WIDTH across the whole range of running
# totals, PAD each side so that a bar at either end keeps its outline.
BAR_WIDTH, PAD, BAR_HEIGHT = 200.0, 4.0, 14
MIN_BAR = 2.0  # a weight of 0 still shows where its step stands
# a vector model lists every comparison of the vector (twenty, and measures to come);
# more is not an explanation of ours
MAX_STEPS = 64


@dataclass(frozen=True)
class Step:
    """One bar of the waterfall: from the running total ``start`` to ``end`` (bits)."""

    label: str
    weight: float
    start: float
    end: float
    kind: str  # "prior", "up", "down", "zero" or "total": the bar's CSS class
    x: float  # the bar's left edge and width, SVG units
    width: float
    measure: str = ""  # a vector comparison's measured value, as the page prints it

    @property
    def weight_text(self) -> str:
        return signed(self.weight) if self.kind != "total" else bits(self.weight)

    @property
    def end_text(self) -> str:
        return bits(self.end)


@dataclass(frozen=True)
class Tick:
    x: float
    text: str
    anchor: str  # SVG text-anchor


@dataclass(frozen=True)
class Waterfall:
    """A scored match: its steps, the match weight and the probability."""

    model: str
    steps: tuple[Step, ...]  # the prior, then each comparison's level
    total: Step
    probability: str
    zero_x: float
    ticks: tuple[Tick, ...]
    view_width: float = BAR_WIDTH + 2 * PAD
    bar_height: int = BAR_HEIGHT
    calibrated: bool = False  # a vector model's: the probability is not 1 / (1 + 2**-w)


@dataclass(frozen=True)
class RuleMatch:
    """A hard rule (the canonical URL): no weights, probability 1."""

    label: str
    probability: str


def bits(value: float) -> str:
    """A match weight as the page prints it (one decimal; a minus sign, not a hyphen)."""
    return f"{value:.1f}".replace("-", "\u2212")


def signed(value: float) -> str:
    return ("+" if value >= 0 else "") + bits(value)


def probability_text(value: float) -> str:
    """Five decimals, never rounded up to a certainty the model did not state."""
    if value >= 1.0 or value <= 0.0:
        return f"{value:g}"
    text = f"{value:.5f}"
    if text == "1.00000":
        return "> 0.99999"
    if text == "0.00000":
        return "< 0.00001"
    return text


def level_label(comparison: str, level: str) -> str:
    """The plain words for a comparison's level; unknown names as their raw text."""
    label = LEVEL_LABELS.get((comparison, level))
    return str(label) if label is not None else f"{comparison}: {level}"


def vector_label(comparison: str, level: str) -> str:
    """A vector comparison and its level in plain words (``containment: 0.6-0.7``);
    unknown names as their raw text."""
    name = VECTOR_LABELS.get(comparison)
    shown = VECTOR_LEVELS.get(level)
    return str(COMPARISON_AT_LEVEL % {"comparison": name if name is not None else comparison,
                                      "level": shown if shown is not None else level})


def measure_text(value: Any) -> str:
    """A measure as the page prints it: three decimals, a count as a whole number."""
    number = _number(value)
    if number is None:
        return ""
    return f"{number:.0f}" if number.is_integer() and abs(number) >= 2 else f"{number:.3f}"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _levels(raw: Any) -> list[tuple[str, str, float, str]] | None:
    if not isinstance(raw, list) or len(raw) > MAX_STEPS:
        return None
    levels = []
    for item in raw:
        if not isinstance(item, Mapping):
            return None
        weight = _number(item.get("weight"))
        if weight is None:
            return None
        levels.append((str(item.get("comparison", "")), str(item.get("level", "")), weight,
                       measure_text(item.get("value"))))
    return levels


def explain(explanation: Any, stored_probability: float | None = None
            ) -> Waterfall | RuleMatch | None:
    """The waterfall of a stored ``match_explanation`` (None: none, or not one the page
    can read). ``stored_probability`` is the article's ``match_probability``, shown when
    it is there (it is the one the engine decided with)."""
    if not isinstance(explanation, Mapping):
        return None
    if "rule" in explanation:
        rule = str(explanation["rule"])
        label = RULE_LABELS.get(rule)
        return RuleMatch(str(label) if label is not None else rule,
                         probability_text(1.0 if stored_probability is None
                                          else stored_probability))
    prior = _number(explanation.get("prior"))
    levels = _levels(explanation.get("weights"))
    if prior is None or levels is None:
        return None
    vector = explanation.get("kind") == "vector"
    running = [0.0, prior]
    for _comparison, _level, weight, _measure in levels:
        running.append(running[-1] + weight)
    total = running[-1]
    low, high = min(running), max(running)
    span = (high - low) or 1.0

    def at(value: float) -> float:
        return round(PAD + (value - low) / span * BAR_WIDTH, 1)

    def step(label: str, start: float, end: float, kind: str, measure: str = "") -> Step:
        left, right = sorted((at(start), at(end)))
        if right - left < MIN_BAR:
            left, right = left - MIN_BAR / 2, left + MIN_BAR / 2
        return Step(label, end - start, start, end, kind, left, round(right - left, 1),
                    measure)

    def kind(weight: float) -> str:
        return "up" if weight > 0 else "down" if weight < 0 else "zero"

    steps = [step(str(PRIOR_LABEL), 0.0, prior, "prior")]
    for (comparison, level, weight, measure), start in zip(levels, running[1:], strict=False):
        words = vector_label(comparison, level) if vector else level_label(comparison, level)
        steps.append(step(words, start, start + weight, kind(weight), measure))
    ticks = [Tick(at(low), bits(low), "start"), Tick(at(high), bits(high), "end")]
    if min(at(0.0) - at(low), at(high) - at(0.0)) >= 24:  # room for its label
        ticks.append(Tick(at(0.0), "0", "middle"))
    stated = _number(explanation.get("probability")) if vector else None
    shown = (stored_probability if stored_probability is not None
             else stated if stated is not None else probability(total))
    return Waterfall(
        model=str(explanation.get("model", "")),
        steps=tuple(steps),
        total=step(str(TOTAL_LABEL), 0.0, total, "total"),
        probability=probability_text(shown),
        zero_x=at(0.0),
        ticks=tuple(ticks),
        calibrated=vector,
    )
