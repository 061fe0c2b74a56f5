"""``manage.py train_matcher``: fit a match model version to the editors' decisions."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from articles.index.reindex import apply_settings
from articles.tuning.held_out import HELD_OUT
from articles.tuning.matcher import (
    SAMPLE,
    NotEnoughLabels,
    activate,
    train,
    train_unlabelled,
    train_vector,
)
from fingerprints.rule.match_training import STRENGTH
from fingerprints.rule.vector_training import STRENGTH as VECTOR_STRENGTH


class Command(BaseCommand):
    help = ("Fit a new match model version to the editors' decisions (confirmed, merged and "
            "moved pairs are one story, split pairs are not), starting from the active "
            f"model; one decision in {HELD_OUT} is held out whole (every pair it labelled) "
            "and both models are scored on those pairs. "
            "The new version is not active until --activate or the admin's activate "
            "action.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--strength", type=float, default=None,
                            help="how strongly weights stay near the active model's (per "
                                 f"bit squared; default {STRENGTH}, {VECTOR_STRENGTH} with "
                                 "--vector)")
        parser.add_argument("--vector", action="store_true",
                            help="fit a model on the comparison vector (engine v4) to the "
                                 "pairs the engine compared in the editors' decisions, "
                                 "from the active vector model or the shipped one; whole "
                                 "decisions are held out")
        parser.add_argument("--bounds", action="store_true",
                            help="fit the level bounds too (where each level begins: "
                                 "docs/parameters.md), each moved only when, "
                                 "cross-validated, it decides more of the decisions "
                                 "right; without it the active model's bounds stay")
        parser.add_argument("--unlabelled", action="store_true",
                            help="estimate the weights without labels (EM) from the candidate "
                                 "pairs of the most recent articles; every editors' decision "
                                 "is then held out for the comparison")
        parser.add_argument("--sample", type=int, default=SAMPLE,
                            help=f"recent articles replayed for --unlabelled (default {SAMPLE})")
        parser.add_argument("--activate", action="store_true",
                            help="make the new version the engine's model at once")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["strength"] is not None and options["strength"] <= 0:
            raise CommandError("--strength must be positive")
        if options["sample"] < 1:
            raise CommandError("--sample must be 1 or more")
        if options["bounds"] and options["unlabelled"]:
            raise CommandError("--bounds needs labels: it cannot go with --unlabelled")
        if options["vector"] and (options["bounds"] or options["unlabelled"]):
            raise CommandError("--vector fits from labels, with its own cut points: "
                               "not with --bounds or --unlabelled")
        try:
            if options["vector"]:
                version = train_vector(strength=options["strength"] or VECTOR_STRENGTH)
            elif options["unlabelled"]:
                version = train_unlabelled(sample=options["sample"])
            else:
                version = train(strength=options["strength"] or STRENGTH,
                                bounds=options["bounds"])
        except NotEnoughLabels as exc:
            what = "candidate pairs" if options["unlabelled"] else "editors' decisions"
            raise CommandError(f"not enough {what}: {exc}") from exc
        report = version.report
        self.stdout.write(f"{version.version}: {version.weights['description']}; "
                          f"{version.held_out_pairs} pairs of {report['heldOutDecisions']} "
                          "editors' decisions held out.")
        self.stdout.write("threshold  current P / R / F1     proposed P / R / F1"
                          + ("    merges, to review: current -> proposed"
                             if "merges" in report["current"][0] else ""))
        for cur, new in zip(report["current"], report["proposed"], strict=True):
            extra = (f"    {cur['merges']}, {cur['review']} -> {new['merges']}, {new['review']}"
                     if "merges" in cur else "")
            self.stdout.write(f"{cur['threshold']:<9}  {_prf(cur):<21}  {_prf(new)}{extra}")
        for flag in report.get("flags", []):
            self.stdout.write(f"Flagged: {flag}.")
        if options["activate"] and report.get("flags"):
            raise CommandError(f"{version.version} is flagged (one editor's decisions dominate "
                               "it): check it in the admin and activate it there if it is "
                               "right")
        if options["activate"]:
            apply_settings(activate(version))
            self.stdout.write(f"{version.version} is active.")
        else:
            self.stdout.write("Not active: compare it in the admin (match model versions) "
                              "and activate it there or with --activate.")


def _prf(row: dict[str, Any]) -> str:
    def f(value: float | None) -> str:
        return "—" if value is None else f"{value:.3f}"
    return f"{f(row['precision'])} / {f(row['recall'])} / {f(row['f1'])}"
