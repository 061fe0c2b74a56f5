"""How much each hand-set level boundary of verification decides (the groundwork for fitting them).

    .venv/bin/python bench/thresholds.py

Every human-labelled pair of the crawled corpus (``bench/labels/``: both samples) and
every candidate pair of each of the five corpora replayed through the online rule
(``Replayer(record_pairs=True)``) is verified with the default configuration, then
again with one level bound of the match model (:class:`~fingerprints.rule.bounds.Bounds`)
moved down and up (a share by 0.1, a count by a tenth and at least 1, clipped to its
range).
For each field and move: how many pair decisions change, and the labelled pairs' F1.
A field whose moves change no decision anywhere is a boundary the data does not see;
one that changes many is one a fitted grid of levels has to replace with care.
Pair-level figures, features with the shipped boilerplate list.
"""

from __future__ import annotations

import sys
from dataclasses import fields
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import load_docs, load_labels, table  # noqa: E402

from fingerprints.batch.replay import Item, Replayer  # noqa: E402
from fingerprints.rule import EngineConfig, Features, extract_many, verify  # noqa: E402
from fingerprints.rule.boilerplate import shipped_hashes  # noqa: E402
from fingerprints.rule.bounds import Bounds, least_count  # noqa: E402
from fingerprints.rule.match_model import starting_model  # noqa: E402


def moves(name: str, value: float | int) -> list[float | int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        step = max(1, round(value / 10))
        low = least_count(name)
        return [v for v in (value - step, value + step) if v >= low and v != value]
    return [v for v in (round(max(0.0, value - 0.1), 3), round(min(1.0, value + 0.1), 3))
            if v != value]


def f1(decisions: list[bool], labels: list[bool]) -> float:
    tp = sum(d and y for d, y in zip(decisions, labels, strict=True))
    fp = sum(d and not y for d, y in zip(decisions, labels, strict=True))
    fn = sum(y and not d for d, y in zip(decisions, labels, strict=True))
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


CORPORA = ("bdci", "xinhua", "thucnews", "bbc", "cnndm")


def candidate_pairs(features: list[Features], ids: list[str], config: EngineConfig
                    ) -> list[tuple[int, int]]:
    replayer = Replayer(config, record_pairs=True)
    for seq, (nid, feats) in enumerate(zip(ids, features, strict=True)):
        replayer.add(Item(seq=seq, nid=nid, features=feats))
    assert replayer.pairs is not None
    return [(b, a) for a, b in replayer.pairs]


def main() -> int:
    config = EngineConfig(model=starting_model())  # the rule's levels, not the default
    known = frozenset(shipped_hashes())
    corpora: dict[str, tuple[list[Features], list[tuple[int, int]]]] = {}
    for corpus in CORPORA:
        docs = load_docs(corpus)
        feats = extract_many([(d.title, d.content) for d in docs], config, boilerplate=known)
        corpora[corpus] = (feats, candidate_pairs(feats, [d.id for d in docs], config))
        if corpus == "bdci":
            at = {d.id: i for i, d in enumerate(docs)}
    labelled = {**load_labels("bdci"), **load_labels("bdci", validation=True)}
    pairs = [(at[a], at[b]) for a, b in sorted(labelled)]
    labels = [labelled[key][0] == 1 for key in sorted(labelled)]

    def decisions(cfg: EngineConfig, corpus: str, among: list[tuple[int, int]] | None = None
                  ) -> list[bool]:
        feats, candidates = corpora[corpus]
        return [verify(feats[a], feats[b], cfg).ok for a, b in
                (candidates if among is None else among)]

    base_labelled = decisions(config, "bdci", pairs)
    base = {corpus: decisions(config, corpus) for corpus in CORPORA}
    rows: list[list[object]] = []
    quiet = []
    for field in fields(Bounds):
        value = getattr(config.bounds, field.name)
        changed_any = False
        for moved in moves(field.name, value):
            cfg = config.with_bounds(**{field.name: moved})
            on_labelled = decisions(cfg, "bdci", pairs)
            changed = [sum(x != y for x, y in zip(on_labelled, base_labelled, strict=True))]
            for corpus in CORPORA:
                changed.append(sum(x != y for x, y in zip(decisions(cfg, corpus), base[corpus],
                                                          strict=True)))
            changed_any |= any(changed)
            rows.append([field.name, value, moved, *changed, f"{f1(on_labelled, labels):.3f}"])
        if not changed_any:
            quiet.append(field.name)
    print(f"{len(pairs)} labelled pairs (F1 {f1(base_labelled, labels):.3f} at the defaults); "
          "candidate pairs: " + ", ".join(f"{c} {len(corpora[c][1])}" for c in CORPORA))
    print(table(["bound", "default", "moved to", "labelled pairs changed",
                 *(f"{c} candidates changed" for c in CORPORA), "labelled F1"], rows))
    print(f"\nno decision changed by either move: {', '.join(quiet) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
