"""Deduplicate a whole corpus in batch (Spark or in-process) and optionally import it."""

from __future__ import annotations

import gc
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from articles.tuning.boilerplate import active_boilerplate


class Command(BaseCommand):
    help = (
        "Deduplicate JSON lines or Parquet articles on Spark (or in this process) with the "
        "online engine's rule; write Parquet + JSON lines {nid, docId} + stats to --output; "
        "--import loads a result into the database, keeping editor decisions."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--input", help="JSON lines file/folder or Parquet (*.parquet)")
        parser.add_argument("--output", required=True, help="result folder")
        parser.add_argument("--master", default=None,
                            help="Spark master URL (default: SPARK_MASTER, local[*])")
        parser.add_argument("--k", type=int, default=None, help="content Hamming threshold")
        parser.add_argument("--format", choices=["json", "parquet"], default=None)
        parser.add_argument("--engine", choices=["spark", "local"], default="spark",
                            help="local: the in-process batch engine (same result)")
        parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                            help="processes for --engine local")
        parser.add_argument("--shuffle-partitions", type=int, default=None)
        parser.add_argument("--salts", type=int, default=8,
                            help="salt groups of the two-stage aggregations")
        parser.add_argument("--tile-size", type=int, default=2000,
                            help="largest sub-bucket compared in one task")
        parser.add_argument("--driver-memory", default="4g")
        parser.add_argument("--import", dest="do_import", action="store_true",
                            help="load the result into the database and rebuild the index")
        parser.add_argument("--no-rebuild", action="store_true",
                            help="with --import: do not rebuild the Redis index")

    def handle(self, *args: Any, **options: Any) -> None:
        from articles.tuning.state import active_config

        config = active_config()
        if options["k"] is not None:
            try:
                config = replace(config, k=options["k"])
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
        output = options["output"]
        if options["input"]:
            if "://" not in options["input"] and not Path(options["input"]).exists():
                raise CommandError(f"{options['input']} does not exist")
            stats = (self._local(options, config) if options["engine"] == "local"
                     else self._spark(options, config))
            self.stdout.write(
                f"{stats['articles']} articles -> {stats['docs']} docIds, "
                f"{stats['clusters']} clusters (largest {stats['largestCluster']}); "
                f"result in {output}"
            )
        elif not options["do_import"]:
            raise CommandError("give --input (to deduplicate) and/or --import")
        if options["do_import"]:
            self._import(output, rebuild=not options["no_rebuild"])

    def _spark(self, options: dict[str, Any], config: Any) -> dict[str, Any]:
        try:
            from pyspark.sql import SparkSession
        except ImportError as exc:
            raise CommandError(
                "--engine spark needs PySpark, an optional extra: pip install -e '.[spark]' "
                "(or `make spark`). --engine local gives the same result in this process."
            ) from exc

        from fingerprints.batch.spark import SparkOptions, build_session, run_job

        master = options["master"] or settings.SPARK_MASTER
        shared = SparkSession.getActiveSession()  # e.g. a test's session: leave it running
        spark = build_session(master, shuffle_partitions=options["shuffle_partitions"],
                              driver_memory=options["driver_memory"])
        try:
            return run_job(
                spark, options["input"], options["output"], config,
                input_format=options["format"],
                options=SparkOptions(salts=options["salts"], tile_size=options["tile_size"]),
                media_weights=_media_weights(), log=lambda line: self.stderr.write(line),
                boilerplate=active_boilerplate(0),
            )
        finally:
            if shared is None:
                spark.stop()

    def _local(self, options: dict[str, Any], config: Any) -> dict[str, Any]:
        from fingerprints.batch import replay as batch
        from fingerprints.rule import extract

        # Arrow's buffers from the C library's allocator, when this process has not
        # loaded Arrow yet (it reads the variable once): its default, mimalloc, faults
        # the result's first large buffers in at about 0.08 s of system time on a Xinhua
        # pass, a process that writes once. The bytes written are the same.
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
        # The engine's tables before the corpus (as a worker starts): loading them ends
        # with one collection and gc.freeze() (vocabulary.settle_tables), so the
        # collector's full passes while the corpus is read walk neither them nor
        # Django's modules (one such pass cost 0.04 s of a Xinhua run).
        extract("预热", "加载分词词典和逆文档频率表。warm up", config)
        # No collections while the corpus is read, replayed and written: what the batch
        # allocates is acyclic (records, features, items, the replay's maps) and lives to
        # the end, so every pass of the collector (young ones every 700 allocations, full
        # ones over the records and items) walked it for nothing. Enabled again after.
        collecting = gc.isenabled()
        gc.disable()
        try:
            path = Path(options["input"])
            # the texts' UTF-8 as read (JSON lines): the writing does not encode them again
            texts: list[tuple[bytes, ...] | None] | None = None
            if options["format"] == "parquet" or path.suffix == ".parquet":
                import pyarrow.parquet as pq

                records = pq.read_table(path).to_pylist()
                if records and "seq" in records[0]:
                    records.sort(key=lambda r: r["seq"])
            else:
                files = sorted(path.glob("*.json*")) if path.is_dir() else [path]
                records, texts = [], []
                for file in files:
                    more, more_texts = batch.read_jsonl_texts(file)
                    records += more
                    texts += more_texts
                if records and all("seq" in r for r in records):
                    order = sorted(range(len(records)), key=lambda i: records[i]["seq"])
                    records = [records[i] for i in order]
                    texts = [texts[i] for i in order]
            items, repeated = batch.prepare(records, config, workers=options["workers"],
                                            boilerplate=active_boilerplate(0))
            # the first record of each nid, in order (every record when no nid repeats)
            firsts: list[dict[str, Any]] = records
            if repeated:
                kept = {item.nid for item in items}
                first: list[int] = []
                for i, record in enumerate(records):
                    if str(record["nid"]) in kept:
                        kept.discard(str(record["nid"]))
                        first.append(i)
                firsts = [records[i] for i in first]
                texts = [texts[i] for i in first] if texts is not None else None
            result = batch.run_items(items, config, media_weights=_media_weights())
            result.stats["repeatedNids"] = repeated
            batch.write_result(options["output"], firsts, items, result, texts)
        finally:
            if collecting:
                gc.enable()
        return result.stats

    def _import(self, output: str, rebuild: bool) -> None:
        from articles.batch.importer import ResultError, import_result

        try:
            with tqdm(unit="article", disable=None, desc="import") as bar:
                report = import_result(output, rebuild=rebuild, progress=bar.update)
        except ResultError as exc:
            raise CommandError(str(exc)) from exc
        for note in report.notes:
            self.stderr.write(note)
        self.stdout.write("Imported: " + json.dumps(report.as_dict()))


def _media_weights() -> dict[str, float]:
    from articles.models import MediaWeight

    return dict(MediaWeight.objects.values_list("media", "weight"))
