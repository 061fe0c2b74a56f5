"""Find duplicate rows of a relational table (read-only) and write the groups as CSV."""

from __future__ import annotations

import csv
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm


class Command(BaseCommand):
    help = (
        "Group duplicate rows of TABLE: per-field weighted SimHash and other blockings, then "
        "field-by-field comparison. Reads with a server-side cursor; never writes to the "
        "source. Output: CSV of groups with per-field scores."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--database-url", required=True,
                            help="mysql://user:pw@host:port/db or sqlite:////path/file.db")
        parser.add_argument("--table", required=True)
        parser.add_argument("--key", required=True, help="the table's key column")
        parser.add_argument("--fields", required=True,
                            help='e.g. "name:2,addr:2,body:text" (name:WEIGHT, col:text[:W])')
        parser.add_argument("--k", type=int, default=3, help="row SimHash blocking distance")
        parser.add_argument("--threshold", type=float, default=0.8,
                            help="weighted field similarity needed for a duplicate")
        parser.add_argument("--chunk", type=int, default=5000, help="rows fetched at a time")
        parser.add_argument("--output", required=True, help="CSV file of groups")

    def handle(self, *args: Any, **options: Any) -> None:
        from fingerprints.table import TableConfig, dedup_rows, parse_fields, read_rows

        try:
            fields = parse_fields(options["fields"])
            config = TableConfig(k=options["k"], threshold=options["threshold"])
            total, rows = read_rows(options["database_url"], options["table"], options["key"],
                                    [f.name for f in fields], chunk=options["chunk"])
        except (ValueError, ImportError) as exc:
            raise CommandError(str(exc)) from exc
        except Exception as exc:  # the driver's own errors: no such table, bad login...
            raise CommandError(f"cannot read {options['table']}: {exc}") from exc
        with tqdm(total=total, unit="row", disable=None, desc="read") as bar:
            result = dedup_rows(rows, fields, config, progress=bar.update)
        columns = ["group", "size", "key", "matched_key", "score",
                   *[f"score_{f.name}" for f in fields]]
        with open(options["output"], "w", newline="", encoding="utf-8") as out:
            writer = csv.DictWriter(out, fieldnames=columns)
            writer.writeheader()
            writer.writerows(result.group_rows())
        self.stderr.write(json.dumps(result.stats))
        self.stdout.write(
            f"{result.stats['rows']} rows: {result.stats['groups']} groups of duplicates "
            f"({result.stats['rowsInGroups']} rows) -> {options['output']}"
        )
