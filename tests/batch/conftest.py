"""Fixtures of the batch tests: one local[2] Spark session for the whole run."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

logging.getLogger("py4j").setLevel(logging.WARNING)

# The JVMs of these tests (the local session, the standalone cluster's master, workers
# and executors, the commands' drivers) run jobs of tens of rows, where C2's compiling
# and the parallel collector's threads cost more than they win: C1 only and the serial
# collector halve their CPU (60 s to 30 s for spark_result's job). The same bytecode
# runs; a JAVA_TOOL_OPTIONS of your own is kept.
SHORT_JOB_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


@pytest.fixture(scope="session", autouse=True)
def _short_job_jvms() -> Iterator[None]:
    given = os.environ.get("JAVA_TOOL_OPTIONS")
    if given is None:
        os.environ["JAVA_TOOL_OPTIONS"] = SHORT_JOB_JVM
    yield
    if given is None:
        os.environ.pop("JAVA_TOOL_OPTIONS", None)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from fingerprints.batch.spark import build_session

    session = build_session("local[2]", shuffle_partitions=2, driver_memory="2g")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark_result(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """spark_dedup's job on the test corpus at local[2]: (result folder, statistics)."""
    from fingerprints.batch.spark import run_job

    from .corpus import corpus

    folder = tmp_path_factory.mktemp("spark")
    source = write_jsonl(folder / "corpus.jsonl", corpus())
    stats = run_job(spark, str(source), str(folder / "out"))
    return folder / "out", stats


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def read_mapping(folder: Path) -> dict[str, str]:
    with (folder / "mapping.jsonl").open(encoding="utf-8") as lines:
        return {row["nid"]: row["docId"] for row in map(json.loads, lines)}


def partition(mapping: dict[str, str]) -> set[frozenset[str]]:
    groups: dict[str, set[str]] = {}
    for nid, doc_id in mapping.items():
        groups.setdefault(doc_id, set()).add(nid)
    return {frozenset(g) for g in groups.values()}
