"""spark_dedup at local[2] == the in-process batch engine == online ingestion via the API."""

from __future__ import annotations

import json
import random

import pytest
from django.core.management import call_command

from fingerprints.batch import replay as batch
from fingerprints.batch.spark import SparkOptions, leaders, near_pairs, to_signed
from fingerprints.rule.blocks import block_keys

from .conftest import partition, read_mapping, write_jsonl
from .corpus import EXPECTED, corpus


def test_spark_gives_the_in_process_engines_doc_ids(spark_result) -> None:
    out, stats = spark_result
    assert read_mapping(out) == batch.run(corpus()).mapping()
    assert partition(read_mapping(out)) == EXPECTED
    assert stats["articles"] == len(corpus()) and stats["docs"] == len(EXPECTED)
    assert stats["largestCluster"] == 4
    # content 5: the cut copy, the WeChat repost and the seed pair (the last two
    # through the key index), the greenway repost (CJK containment), the lake repost
    # (the strict band); title 8 includes the title-only video page; the two redirect
    # pages found a docId each
    assert stats["matchedBy"] == {"None": 20, "title": 8, "content": 5, "url": 1}


def test_spark_writes_parquet_with_representatives(spark, spark_result) -> None:
    out, _ = spark_result
    rows = {r["nid"]: r for r in spark.read.parquet(str(out / "articles")).collect()}
    assert rows["bridge-repost"]["isRepresentative"] and not rows["bridge-1"]["isRepresentative"]
    assert rows["bridge-cut"]["matchedNid"] == "bridge-1"
    clusters = {r["anchorNid"]: r for r in spark.read.parquet(str(out / "clusters")).collect()}
    assert clusters["bridge-1"]["size"] == 4
    assert clusters["bridge-1"]["representativeNid"] == "bridge-repost"
    assert json.loads((out / "stats.json").read_text())["docs"] == len(EXPECTED)


@pytest.mark.django_db(transaction=True)
def test_online_ingestion_one_by_one_gives_the_same_doc_ids(
    client, auth, run_worker, spark_result
) -> None:
    out, _ = spark_result
    for item in corpus():
        response = client.post("/api/v1/articles", data=json.dumps(item),
                               content_type="application/json", **auth)
        assert response.status_code == 202
    run_worker()
    online = {}
    for item in corpus():
        result = client.get(f"/api/v1/articles/{item['nid']}", **auth).json()
        assert result["status"] == "done"
        online[item["nid"]] = result["docId"]
    assert online == read_mapping(out)


@pytest.mark.django_db
def test_the_local_engine_of_the_command_gives_sparks_result(tmp_path, spark_result) -> None:
    source = write_jsonl(tmp_path / "corpus.jsonl", corpus())
    call_command("spark_dedup", "--input", str(source), "--output", str(tmp_path / "l"),
                 "--engine", "local", "--workers", "1")
    assert read_mapping(tmp_path / "l") == read_mapping(spark_result[0])


def test_thousands_of_identical_fingerprints_collapse_before_blocking(spark) -> None:
    fp = to_signed(0x9E3779B97F4A7C15)
    rows = [(seq, fp) for seq in range(5000)] + [(5000, fp ^ 0b111), (5001, 12345)]
    frame = spark.createDataFrame(rows, "seq long, fp long")
    lead = leaders(frame, "fp", salts=8)
    copies = {r["fp"]: (r["leader"], r["copies"]) for r in lead.collect()}
    assert copies[fp] == (0, 5000)
    # The two-stage aggregation: no first-stage group holds more than 5000/8 rows.
    partial = frame.groupBy("fp", (frame["seq"] % 8).alias("salt")).count().collect()
    assert max(r["count"] for r in partial) == 625
    pairs, sizes = near_pairs(lead.select("fp", "leader"), 3, SparkOptions())
    assert {(r["src"], r["dst"]) for r in pairs.collect()} == {(0, 5000)}
    assert sizes.agg({"size": "max"}).first()[0] == 2  # buckets hold distinct fingerprints


def test_a_skewed_bucket_is_cut_into_tiles_and_finds_every_pair(spark) -> None:
    from fingerprints.table.allpairs import all_pairs

    rng = random.Random(3)
    top = 0xBEEF << 48  # 3000 distinct fingerprints that all share block 0
    fps = sorted({top | rng.getrandbits(48) for _ in range(3000)})
    fps += [fps[i] ^ (1 << rng.randrange(48)) for i in range(0, 300, 3)]  # near copies
    fps = sorted(set(fps))
    frame = spark.createDataFrame(
        [(to_signed(fp), i) for i, fp in enumerate(fps)], "fp long, leader long")
    options = SparkOptions(tile_size=400)
    pairs, sizes = near_pairs(frame, 3, options)
    found = {(r["src"], r["dst"]) for r in pairs.collect()}
    expected = {(int(a), int(b)) for a, b in all_pairs(fps, 3)}
    assert found == expected and len(expected) >= 100
    biggest = sizes.orderBy(sizes["size"].desc()).first()
    assert biggest["size"] == len(fps) and biggest["block"] == block_keys(fps[0], 3)[0][0]
    # Each task compares at most two sub-buckets of about tile_size fingerprints.
    per_tile = (
        frame.selectExpr("pmod(xxhash64(fp, 'tile'), 8) as r").groupBy("r").count().collect()
    )
    assert max(r["count"] for r in per_tile) < 1.3 * len(fps) / 8


def test_spark_given_picture_hashes_gives_the_batch_engines_doc_ids(spark, tmp_path) -> None:
    """The input's picture hashes decide as online (tests/images/test_picture_decisions.py
    shows online == the in-process engine on the same stream), under either model: with
    the rule's (labels-1) the photo post and the rewrite join their original by its
    same-picture level and the photo series stays apart by its veto; with the default
    model on the comparison vector the photo post joins too."""
    from fingerprints.batch.spark import run_job
    from fingerprints.rule import EngineConfig
    from fingerprints.rule.match_model import starting_model
    from tests.images.test_picture_decisions import STREAM, _hashes

    records = [{"nid": nid, "url": f"https://site-{nid}.example/{nid}", "title": title,
                "content": content,
                "pictures": [f"{h:016x}" for path in images for h in _hashes(path)]}
               for nid, title, content, images in STREAM]
    source = write_jsonl(tmp_path / "pictures.jsonl", records)
    mappings = {}
    for name, config in (("rule", EngineConfig(model=starting_model())),
                         ("default", EngineConfig())):
        run_job(spark, str(source), str(tmp_path / name), config)
        mappings[name] = read_mapping(tmp_path / name)
        assert mappings[name] == batch.run(records, config).mapping(), name
    rule = mappings["rule"]
    assert rule["o1"] == rule["o2"] == rule["o3"] and rule["s3"] != rule["s4"]
    assert mappings["default"]["o2"] == mappings["default"]["o1"]
