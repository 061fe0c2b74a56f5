"""spark_dedup on a real Spark standalone cluster: a master and two workers on loopback
(separate JVMs and Python workers, started from the installed pyspark by
scripts/spark_cluster.py), the engine and its C kernel shipped to the executors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from tests.ingest.test_concurrency import database_url

from .conftest import read_mapping, write_jsonl
from .corpus import corpus

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import spark_cluster  # noqa: E402


@pytest.mark.django_db(transaction=True)
def test_a_standalone_cluster_gives_the_in_process_engines_doc_ids(tmp_path, spark_result):
    source = write_jsonl(tmp_path / "corpus.jsonl", corpus())
    env = {**os.environ, "DATABASE_URL": database_url(), "REDIS_URL": settings.REDIS_URL,
           "DJANGO_SETTINGS_MODULE": "dedupsite.settings", "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable}
    with spark_cluster.cluster(workers=2) as master:
        done = subprocess.run(
            [sys.executable, "manage.py", "spark_dedup", "--master", master,
             "--input", str(source), "--output", str(tmp_path / "out"),
             "--shuffle-partitions", "2", "--driver-memory", "1g"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["master"] == master
    # the executors imported the shipped engine (with its kernel), not the checkout
    assert stats["executorEngine"] and all(
        "dedupsite-engine" in path and kernel for path, kernel in stats["executorEngine"])
    assert read_mapping(tmp_path / "out") == read_mapping(spark_result[0])
