from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from articles.models import ApiKey, Article

CONTENT = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
           "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务。")

pytestmark = pytest.mark.django_db(transaction=True)


def test_create_api_key_prints_the_key_alone_on_the_last_line(redis_client):
    out = StringIO()
    call_command("create_api_key", "crawler-1", stdout=out, stderr=StringIO())
    key = out.getvalue().strip().splitlines()[-1]
    assert ApiKey.authenticate(key).name == "crawler-1"
    assert key not in ApiKey.objects.get().key_hash


def test_ingest_queues_a_file_and_export_mapping_writes_the_doc_ids(tmp_path, run_worker):
    rows = [
        {"nid": f"n{i}", "url": f"https://a.example/{i}", "title": "同一条新闻",
         "content": CONTENT}
        for i in range(3)
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows)
                    + "\n{broken\n", encoding="utf-8")
    out = StringIO()
    call_command("ingest", str(path), stdout=out, stderr=StringIO())
    assert "Queued 3 articles (3 new, 0 changed)" in out.getvalue()
    assert "rejected 1 lines." in out.getvalue()
    run_worker()
    assert set(Article.objects.values_list("status", flat=True)) == {"done"}
    out = StringIO()
    call_command("export_mapping", stdout=out, stderr=StringIO())
    mapping = [json.loads(line) for line in out.getvalue().splitlines()]
    assert sorted(m["nid"] for m in mapping) == ["n0", "n1", "n2"]
    assert len({m["docId"] for m in mapping}) == 1


def test_spark_dedup_without_pyspark_says_how_to_add_it(tmp_path, monkeypatch):
    import sys

    from django.core.management.base import CommandError

    corpus = tmp_path / "in.jsonl"
    corpus.write_text(json.dumps({"nid": "a", "url": "https://x.example/a", "title": "t",
                                  "content": CONTENT}, ensure_ascii=False) + "\n")
    monkeypatch.setitem(sys.modules, "pyspark", None)  # as if the extra were not installed
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    with pytest.raises(CommandError, match=r"pip install -e '\.\[spark\]'"):
        call_command("spark_dedup", "--input", str(corpus), "--output", str(tmp_path / "out"),
                     stdout=StringIO())
    # the in-process engine needs no PySpark
    call_command("spark_dedup", "--engine", "local", "--workers", "1", "--input", str(corpus),
                 "--output", str(tmp_path / "out"), stdout=StringIO())
    assert (tmp_path / "out" / "stats.json").exists()
