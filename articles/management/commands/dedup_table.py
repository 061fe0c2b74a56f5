"""Find duplicate rows of a relational table (read-only) and write the groups as CSV."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm


def _beside(output: str, suffix: str) -> str:
    path = Path(output)
    return str(path.with_name(path.stem + suffix))


class Command(BaseCommand):
    help = (
        "Group duplicate rows of TABLE: per-field weighted SimHash and other blockings, then "
        "field-by-field comparison scored by Fellegi-Sunter weights learned from the table "
        "(EM, no labels; --method similarity: the weighted mean of field similarities). "
        "Reads with a server-side cursor; never writes to the source. Output: CSV of groups "
        "with per-field scores and match weights, the learned weights (JSON) and an HTML "
        "report beside it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--database-url", required=True,
                            help="mysql://user:pw@host:port/db or sqlite:////path/file.db")
        parser.add_argument("--table", required=True)
        parser.add_argument("--key", required=True, help="the table's key column")
        parser.add_argument("--fields", required=True,
                            help='e.g. "name:2,addr:2,body:text" (name:WEIGHT, col:text[:W]); '
                                 "the weights weigh the row SimHash blocking (and the "
                                 "similarity method's mean)")
        parser.add_argument("--method", choices=["fs", "similarity"], default="fs",
                            help="fs: Fellegi-Sunter weights learned by EM (default); "
                                 "similarity: weighted mean of field similarities")
        parser.add_argument("--k", type=int, default=3, help="row SimHash blocking distance")
        parser.add_argument("--threshold", type=float, default=None,
                            help="fs: match probability needed for a duplicate (default: "
                                 "chosen from the data for the best expected F1); "
                                 "similarity: weighted field similarity (default 0.8)")
        parser.add_argument("--chunk", type=int, default=5000, help="rows fetched at a time")
        parser.add_argument("--output", required=True, help="CSV file of groups")
        parser.add_argument("--weights", help="fs: JSON of the learned weights "
                                              "(default: OUTPUT's name + .weights.json)")
        parser.add_argument("--report", help="HTML report of the groups "
                                             "(default: OUTPUT's name + .html)")
        parser.add_argument("--engine", choices=["local", "spark"], default="local",
                            help="spark: compare the candidate pairs on Spark")
        parser.add_argument("--master", default=None,
                            help="Spark master (default $SPARK_MASTER or local[*])")

    def handle(self, *args: Any, **options: Any) -> None:
        from articles.batch.table_report import render_report
        from fingerprints.table.match import TableConfig, dedup_rows, parse_fields, read_rows

        method = options["method"]
        threshold = options["threshold"]
        if options["engine"] == "spark" and method != "fs":
            raise CommandError("--engine spark runs the fs method only")
        if options["weights"] and method != "fs":
            raise CommandError("--weights needs --method fs (the similarity method learns none)")
        try:
            fields = parse_fields(options["fields"])
            if method == "fs":
                config = TableConfig(k=options["k"], method="fs", match_threshold=threshold)
            else:
                config = TableConfig(k=options["k"], method="similarity",
                                     threshold=0.8 if threshold is None else threshold)
            total, rows = read_rows(options["database_url"], options["table"], options["key"],
                                    [f.name for f in fields], chunk=options["chunk"])
        except (ValueError, ImportError) as exc:
            raise CommandError(str(exc)) from exc
        except Exception as exc:  # the driver's own errors: no such table, bad login...
            raise CommandError(f"cannot read {options['table']}: {exc}") from exc
        with tqdm(total=total, unit="row", disable=None, desc="read") as bar:
            if options["engine"] == "spark":
                from fingerprints.batch.spark import build_session
                from fingerprints.table.spark import dedup_rows_spark

                spark = build_session(options["master"] or os.environ.get("SPARK_MASTER")
                                      or "local[*]", app_name="dedupsite-dedup-table")
                result = dedup_rows_spark(spark, rows, fields, config, progress=bar.update)
            else:
                result = dedup_rows(rows, fields, config, progress=bar.update)
        with open(options["output"], "w", newline="", encoding="utf-8") as out:
            writer = csv.DictWriter(out, fieldnames=result.columns())
            writer.writeheader()
            writer.writerows(result.group_rows())
        written = [options["output"]]
        if result.model is not None:
            weights_path = options["weights"] or _beside(options["output"], ".weights.json")
            weights = result.model.as_dict() | {
                key: result.stats[key] for key in ("threshold", "thresholdFromData",
                                                   "expectedPrecision", "expectedRecall")}
            Path(weights_path).write_text(json.dumps(weights, indent=2), encoding="utf-8")
            written.append(weights_path)
            self.stdout.write(self._weights_table(result))
        report_path = options["report"] or _beside(options["output"], ".html")
        Path(report_path).write_text(render_report(result, options["table"]), encoding="utf-8")
        written.append(report_path)
        self.stderr.write(json.dumps(result.stats))
        self.stdout.write(
            f"{result.stats['rows']} rows: {result.stats['groups']} groups of duplicates "
            f"({result.stats['rowsInGroups']} rows) -> {', '.join(written)}"
        )

    @staticmethod
    def _weights_table(result: Any) -> str:
        from fingerprints.table.fellegi import LEVELS

        model, stats = result.model, result.stats
        table = model.level_weights()
        lines = ["match weights (log2 m/u) per field and level, learned by EM "
                 f"({model.iterations} iterations); prior {model.prior_weight():+.2f}",
                 f"{'field':<20}" + "".join(f"{level:>12}" for level in LEVELS)]
        for f, name in enumerate(model.names):
            lines.append(f"{name:<20}" + "".join(f"{table[f, x]:>+12.2f}"
                                                 for x in range(len(LEVELS))))
        origin = "chosen from the data" if stats["thresholdFromData"] else "given"
        lines.append(f"threshold: match probability >= {stats['threshold']:.4f} ({origin}); "
                     f"expected precision {stats['expectedPrecision']:.3f}, "
                     f"recall {stats['expectedRecall']:.3f}")
        return "\n".join(lines)
