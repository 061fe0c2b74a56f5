"""The batch engine on PySpark: the same fingerprints, the same clusters as online.

Stages (docs/batch.md explains each and how to run it on a cluster):

1. *Read* JSON lines (arrival order = line order, or a ``seq`` field) or Parquet.
2. *Fingerprint* in ``mapPartitions`` with :func:`fingerprints.rule.extract`, the
   code the web workers run; the first record of a nid wins.
3. *Candidate pairs*: identical fingerprints collapse onto their earliest article
   (a two-stage salted aggregation, the 2019 seed's method against skew); every
   distinct fingerprint emits its ``k + 1`` pigeonhole blocks keyed with their block
   number; bucket sizes are counted with the same salted two-stage aggregation; a
   bucket larger than ``tile_size`` is cut into sub-buckets whose pairs are compared
   tile by tile, so no task sees more than ``tile_size**2`` comparisons; candidates are
   kept when the exact Hamming distance is within ``k`` (title: ``title_k``), each pair
   once (by the first block it shares). Same canonical URL links articles too.
4. *Connected components* of those links in Spark: min-label propagation with
   pointer jumping, DataFrames only; nothing is collected to the driver.
5. *Replay*: inside each component, :class:`fingerprints.batch.replay.Replayer` assigns the
   articles in arrival order with ``decide`` — the online rule. Every online join
   follows a candidate link, so components never split a doc, and within one the
   replay makes the online decisions exactly.
6. *docIds* ``make_doc_id(anchor nid)``; representative = the hottest member
   (ties: earliest). Output: Parquet of articles with their docId and features,
   JSON lines ``{nid, docId}``, Parquet of clusters, ``stats.json``.
"""

from __future__ import annotations

import json
import os
import tarfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fingerprints.batch.replay import DEFAULT_CONFIG, Item, Replayer, record_pictures
from fingerprints.rule import EngineConfig, Features, content_probes, extract_many
from fingerprints.rule.blocks import block_layout
from fingerprints.rule.ids import make_doc_id, to_signed, to_unsigned, url_hash
from fingerprints.rule.keys import query_keys

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

__all__ = ["SparkOptions", "build_session", "package_engine", "run_job"]

ROOT = Path(__file__).resolve().parents[2]


class SparkOptions:
    """Tunables of the job (not of the engine: clusters do not depend on them)."""

    def __init__(self, *, salts: int = 8, tile_size: int = 2000,
                 max_cc_iterations: int = 50) -> None:
        if salts < 1:
            raise ValueError(f"salts must be at least 1, not {salts!r}")
        if tile_size < 2:
            raise ValueError(f"tile_size must be at least 2, not {tile_size!r}")
        self.salts = salts
        self.tile_size = tile_size
        self.max_cc_iterations = max_cc_iterations


# --- session ---------------------------------------------------------------------------


def package_engine(path: str | Path) -> Path:
    """The ``fingerprints`` package (code, word lists and the compiled C kernel when it
    is built) as a ``.tar.gz`` for ``spark.archives``: each executor unpacks it into
    its working directory, where Python imports it (a shared library cannot be
    imported from a ``--py-files`` zip)."""
    path = Path(path)
    with tarfile.open(path, "w:gz") as archive:
        for file in sorted((ROOT / "fingerprints").rglob("*")):
            if file.is_file() and "__pycache__" not in file.parts:
                archive.add(file, str(file.relative_to(ROOT)))
    return path


#: the folder an executor unpacks the engine into (``spark.archives`` alias)
ENGINE_ALIAS = "dedupsite-engine"


def build_session(
    master: str = "local[*]",
    *,
    app_name: str = "dedupsite-spark-dedup",
    shuffle_partitions: int | None = None,
    driver_memory: str = "4g",
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """A SparkSession whose Python workers can import the engine.

    Local masters get the project on ``PYTHONPATH``. Any other master (a standalone
    ``spark://`` cluster, YARN, Kubernetes) gets the engine shipped: the package with
    its compiled kernel as an archive every executor unpacks and puts first on its
    ``PYTHONPATH`` (:func:`package_engine`); the executors' Python needs the engine's
    dependencies only (numpy, mmh3, rjieba, jieba: docs/batch.md).
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", os.environ.get("PYSPARK_PYTHON") or _python())
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    local = master.startswith("local")
    partitions = shuffle_partitions or (8 if local else 200)
    builder = (
        SparkSession.builder.master(master).appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.shuffle.partitions", str(partitions))
        .config("spark.default.parallelism", str(partitions))
        .config("spark.sql.adaptive.enabled", "true")
    )
    if local:
        builder = builder.config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
    else:
        import tempfile

        archive = package_engine(Path(tempfile.mkdtemp(prefix="dedupsite-")) / "engine.tar.gz")
        builder = (builder.config("spark.archives", f"{archive}#{ENGINE_ALIAS}")
                   .config("spark.executorEnv.PYTHONPATH", ENGINE_ALIAS))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _engine_of_executor(_rows: Iterable[Any]) -> Iterator[tuple[str, bool]]:
    from fingerprints import __file__ as package_file
    from fingerprints.rule.kernel import kernel

    yield (str(Path(package_file).parent), kernel is not None)


def executor_engine(spark: SparkSession) -> list[tuple[str, bool]]:
    """Where the executors' Python workers imported the engine from, and whether its C
    kernel loaded there (distinct answers of one task per default partition)."""
    n = max(1, spark.sparkContext.defaultParallelism)
    found = spark.sparkContext.parallelize(range(n), n).mapPartitions(_engine_of_executor)
    return sorted({(str(path), bool(k)) for path, k in found.collect()})


def _python() -> str:
    import sys

    return sys.executable


# --- stage 1 and 2: read and fingerprint ----------------------------------------------

RAW_SCHEMA = (
    "seq long, nid string, url string, title string, content string, category string, "
    "media string, imageCount long, hotness double, publishedAt string, pictures array<long>"
)
FEATURE_SCHEMA = (
    "seq long, nid string, urlHash long, titleFp long, contentFp long, features binary, "
    "hotness double, media string, probes array<long>, keys array<long>, pictures array<long>"
)


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _raw_row(record: Mapping[str, Any], seq: int) -> tuple[Any, ...]:
    if record.get("seq") is not None:
        seq = int(record["seq"])
    nid = record.get("nid")
    if nid is None or nid == "":
        raise ValueError("nid is required")
    image_count = record.get("imageCount") or 0
    hotness = record.get("hotness") or 0.0
    return (
        seq, str(nid), _text(record.get("url")), _text(record.get("title")),
        _text(record.get("content")), _text(record.get("category")), _text(record.get("media")),
        int(image_count), float(hotness), _text(record.get("publishedAt")) or None,
        [to_signed(p) for p in record_pictures(record)],
    )


def read_input(spark: SparkSession, path: str, input_format: str | None = None
               ) -> tuple[DataFrame, Any]:
    """Raw articles (RAW_SCHEMA) and an accumulator counting rejected records.

    JSON lines are read with the Hadoop text reader, whose partitions keep file order,
    so ``seq`` is the line number unless the record carries its own ``seq``. Parquet
    keeps a ``seq`` column when it has one, else the reader's row order.
    """
    sc = spark.sparkContext
    rejected = sc.accumulator(0)
    fmt = input_format or ("parquet" if path.rstrip("/").endswith(".parquet") else "json")
    if fmt == "json":

        def parse(rows: Iterable[tuple[str, int]]) -> Iterator[tuple[Any, ...]]:
            for line, index in rows:
                if not line.strip():
                    continue
                try:
                    yield _raw_row(json.loads(line), index)
                except (ValueError, TypeError, AttributeError):
                    rejected.add(1)

        rdd = sc.textFile(path).zipWithIndex().mapPartitions(parse)
    elif fmt == "parquet":
        frame = spark.read.parquet(path)
        has_seq = "seq" in frame.columns
        columns = frame.columns

        def convert(rows: Iterable[tuple[Any, int]]) -> Iterator[tuple[Any, ...]]:
            for row, index in rows:
                record = {name: row[name] for name in columns}
                if not has_seq:
                    record.pop("seq", None)
                try:
                    yield _raw_row(record, index)
                except (ValueError, TypeError):
                    rejected.add(1)

        rdd = frame.rdd.zipWithIndex().mapPartitions(convert)
    else:
        raise ValueError(f"input format must be 'json' or 'parquet', not {fmt!r}")
    return spark.createDataFrame(rdd, RAW_SCHEMA), rejected


def _chunks(rows: Iterable[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _extract_partition(config: EngineConfig, boilerplate: frozenset[int]):
    def run(rows: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
        for chunk in _chunks(rows, 256):
            features = extract_many([(row[3], row[4]) for row in chunk], config,
                                    boilerplate=boilerplate)
            for (seq, nid, url, _title, _content, media, hotness, pictures), feats in zip(
                chunk, features, strict=True
            ):
                if pictures:  # the picture hashes of the input (as online: read ones)
                    feats = replace(feats, pictures=tuple(sorted(
                        to_unsigned(p) for p in pictures)))
                uhash = to_signed(url_hash(url)) if url else None
                # the multi-probe fingerprints (engine.content_probes), computed here
                # rather than by a UDF over the features later (one Python pass less)
                probes = [to_signed(p) for p in content_probes(feats, config)]
                yield (seq, nid, uhash, to_signed(feats.title_fp), to_signed(feats.content_fp),
                       bytearray(feats.to_bytes()), hotness, media, probes,
                       query_keys(feats.keys), list(pictures or ()))

    return run


def fingerprint(raw: DataFrame, config: EngineConfig,
                boilerplate: frozenset[int] = frozenset()) -> DataFrame:
    """FEATURE_SCHEMA rows, one per nid (its first record)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    spark = raw.sparkSession
    rdd = raw.select("seq", "nid", "url", "title", "content", "media", "hotness",
                     "pictures").rdd
    every = spark.createDataFrame(rdd.mapPartitions(_extract_partition(config, boilerplate)),
                                  FEATURE_SCHEMA)
    every = every.persist(StorageLevel.MEMORY_AND_DISK)
    first = every.groupBy("nid").agg(F.min("seq").alias("seq"))
    return every.join(first.select("seq"), "seq", "left_semi")


# --- stage 3: candidate links ------------------------------------------------------------


def leaders(keyed: DataFrame, key: str, salts: int) -> DataFrame:
    """(key, leader = earliest seq, copies) by a two-stage salted aggregation: partial
    (key, salt) groups first, then per key, so a key shared by very many articles is
    spread over ``salts`` groups in the first shuffle."""
    from pyspark.sql import functions as F

    partial = (
        keyed.withColumn("salt", F.pmod(F.col("seq"), F.lit(salts)))
        .groupBy(key, "salt")
        .agg(F.min("seq").alias("m"), F.count(F.lit(1)).alias("c"))
    )
    return partial.groupBy(key).agg(F.min("m").alias("leader"), F.sum("c").alias("copies"))


def _block_value(fp: Column, shift: int, width: int) -> Column:
    from pyspark.sql import functions as F

    return F.shiftrightunsigned(fp, shift).bitwiseAND(F.lit((1 << width) - 1))


def near_pairs(
    distinct: DataFrame, k: int, options: SparkOptions, radius: int | None = None
) -> tuple[DataFrame, DataFrame]:
    """Pairs (a, b) of leaders whose fingerprints share one of the ``k + 1`` blocks and
    are within ``radius`` (default ``k``: then every pair within ``k``), and the bucket
    sizes (block, value, size) of buckets holding two or more distinct fingerprints.

    ``distinct`` has one row per distinct fingerprint: (fp, leader).
    """
    from pyspark.sql import functions as F

    layout = block_layout(k)
    blocks = F.array(*[
        F.struct(F.lit(i).alias("block"), _block_value(F.col("fp"), shift, width).alias("value"))
        for i, (shift, width) in enumerate(layout)
    ])
    keys = distinct.select("fp", "leader", F.explode(blocks).alias("b")).select(
        "fp", "leader", "b.block", "b.value"
    )
    sizes = (
        keys.withColumn("salt", F.pmod(F.xxhash64("fp"), F.lit(options.salts)))
        .groupBy("block", "value", "salt").count()
        .groupBy("block", "value").agg(F.sum("count").alias("size"))
        .where(F.col("size") > 1)
    )
    tiled = (
        keys.join(sizes, ["block", "value"])
        .withColumn("parts", F.ceil(F.col("size") / F.lit(options.tile_size)).cast("long"))
        .withColumn("r", F.pmod(F.xxhash64("fp", F.lit("tile")), F.col("parts")))
    )
    left = tiled.select(
        "block", "value", F.col("r").alias("ti"),
        F.explode(F.sequence(F.col("r"), F.col("parts") - 1)).alias("tj"),
        F.col("fp").alias("fa"), F.col("leader").alias("la"),
    )
    right = tiled.select(
        "block", "value", F.explode(F.sequence(F.lit(0).cast("long"), F.col("r"))).alias("ti"),
        F.col("r").alias("tj"), F.col("fp").alias("fb"), F.col("leader").alias("lb"),
    )
    xor = F.col("fa").bitwiseXOR(F.col("fb"))
    first_block: Column = F.lit(len(layout))
    for i, (shift, width) in reversed(list(enumerate(layout))):
        first_block = F.when(_block_value(xor, shift, width) == 0, F.lit(i)).otherwise(first_block)
    pairs = (
        left.join(right, ["block", "value", "ti", "tj"])
        .where((F.col("ti") != F.col("tj")) | (F.col("fa") < F.col("fb")))
        .where(F.bit_count(xor) <= (k if radius is None else radius))
        .where(F.col("block") == first_block)
        .select(F.least("la", "lb").alias("src"), F.greatest("la", "lb").alias("dst"))
    )
    return pairs, sizes


def candidate_links(feats: DataFrame, config: EngineConfig, options: SparkOptions
                    ) -> tuple[DataFrame, dict[str, DataFrame]]:
    """Undirected links (src, dst) between seqs whose articles can meet online, and
    the intermediate frames for statistics."""
    from pyspark.sql import functions as F

    links = []
    parts: dict[str, DataFrame] = {}
    # What the online lookups return: fingerprints sharing a block and within the
    # candidate radius; zero content fingerprints are indexed online too, zero titles not.
    # Multi-probe lookups (engine.content_probes): each probe stands for its article
    # like a second fingerprint; the links this adds are a superset of what the online
    # probe lookups return, so components still hold every doc. Pictures: every hash
    # (stock ones too: a superset of the online picture lookups).
    content = feats.select("seq", F.col("contentFp").alias("fp")).unionByName(
        feats.select("seq", F.explode("probes").alias("fp")))
    title = feats.select("seq", F.col("titleFp").alias("fp")).where(F.col("fp") != 0)
    pictures = feats.select("seq", F.explode("pictures").alias("fp"))
    for name, keyed, k, radius in (
        ("content", content, config.k, config.content_radius),
        ("title", title, config.title_k, config.title_radius),
        ("picture", pictures, config.picture_k, config.picture_bits),
    ):
        lead = leaders(keyed, "fp", options.salts).cache()
        links.append(keyed.join(lead.select("fp", "leader"), "fp")
                     .where(F.col("seq") != F.col("leader"))
                     .select(F.col("seq").alias("src"), F.col("leader").alias("dst")))
        pairs, sizes = near_pairs(lead.select("fp", "leader"), k, options, radius)
        pairs = pairs.cache()
        links.append(pairs)
        parts[f"{name}Pairs"] = pairs
        parts[f"{name}Buckets"] = sizes
        parts[f"{name}Copies"] = lead
    # The key index (fingerprints/stores/key_index.py): articles sharing a key are linked (a
    # superset of "one's key is among the other's stored keys", what a lookup returns).
    keyed = feats.select("seq", F.explode("keys").alias("key"))
    key_lead = leaders(keyed, "key", options.salts)
    links.append(keyed.join(key_lead.select("key", "leader"), "key")
                 .where(F.col("seq") != F.col("leader"))
                 .select(F.col("seq").alias("src"), F.col("leader").alias("dst")))
    keyed = feats.where(F.col("urlHash").isNotNull()).select("seq", F.col("urlHash").alias("u"))
    url_lead = leaders(keyed, "u", options.salts)
    links.append(keyed.join(url_lead.select("u", "leader"), "u")
                 .where(F.col("seq") != F.col("leader"))
                 .select(F.col("seq").alias("src"), F.col("leader").alias("dst")))
    edges = links[0]
    for more in links[1:]:
        edges = edges.unionByName(more)
    partitions = int(feats.sparkSession.conf.get("spark.sql.shuffle.partitions") or 8)
    return edges.coalesce(partitions), parts


# --- stage 4: connected components ---------------------------------------------------


def connected_components(edges: DataFrame, max_iterations: int = 50) -> tuple[DataFrame, int]:
    """(node, label = smallest node of its component) for every node with a link.

    Min-label propagation (each node takes the smallest label among itself and its
    neighbours) alternated with pointer jumping (label := label of the label), which
    halves the remaining distance each round. Runs until no label changes.
    """
    from pyspark.sql import functions as F

    both = (
        edges.select("src", "dst")
        .unionByName(edges.select(F.col("dst").alias("src"), F.col("src").alias("dst")))
        .where(F.col("src") != F.col("dst"))
        .distinct()
        .localCheckpoint()
    )
    labels = both.groupBy("src").agg(F.least(F.col("src"), F.min("dst")).alias("label")) \
        .withColumnRenamed("src", "node").localCheckpoint()
    for iteration in range(1, max_iterations + 1):
        neighbour = (
            both.join(labels.withColumnRenamed("node", "dst"), "dst")
            .groupBy("src").agg(F.min("label").alias("seen"))
            .withColumnRenamed("src", "node")
        )
        step = labels.join(neighbour, "node").select(
            "node", F.least("label", "seen").alias("label"))
        jumped = (
            step.alias("a")
            .join(step.alias("b"), F.col("a.label") == F.col("b.node"))
            .select(F.col("a.node").alias("node"), F.col("b.label").alias("label"))
            .localCheckpoint()
        )
        changed = (
            jumped.alias("n").join(labels.alias("o"), "node")
            .where(F.col("n.label") != F.col("o.label")).limit(1).count()
        )
        labels = jumped
        if not changed:
            return labels, iteration
    raise RuntimeError(f"connected components did not converge in {max_iterations} rounds")


# --- stage 5: replay inside components -------------------------------------------------


def _replay_component(config: EngineConfig):
    def run(group: tuple[int, Iterable[Any]]) -> Iterator[tuple[Any, ...]]:
        _label, rows = group
        items = sorted(
            (Item(seq, nid, Features.from_bytes(bytes(features)),
                  to_unsigned(uhash) if uhash is not None else None)
             for seq, nid, uhash, features in rows),
            key=lambda item: item.seq,
        )
        replayer = Replayer(config)
        for item in items:
            a = replayer.add(item)
            yield (a.seq, a.anchor, a.matched_by, a.matched_seq, a.distance, a.similarity)

    return run


ASSIGNMENT_SCHEMA = (
    "seq long, anchor long, matchedBy string, matchedSeq long, distance int, similarity double"
)


def assign(feats: DataFrame, labels: DataFrame, config: EngineConfig) -> DataFrame:
    from pyspark.sql import functions as F

    spark = feats.sparkSession
    joined = feats.join(labels.withColumnRenamed("node", "seq"), "seq", "left")
    grouped = (
        joined.where(F.col("label").isNotNull())
        .select("label", "seq", "nid", "urlHash", "features").rdd
        .map(lambda r: (r[0], (r[1], r[2], r[3], r[4])))
        .groupByKey()
        .flatMap(_replay_component(config))
    )
    replayed = spark.createDataFrame(grouped, ASSIGNMENT_SCHEMA)
    singles = joined.where(F.col("label").isNull()).select(
        "seq", F.col("seq").alias("anchor"), F.lit(None).cast("string").alias("matchedBy"),
        F.lit(None).cast("long").alias("matchedSeq"), F.lit(None).cast("int").alias("distance"),
        F.lit(None).cast("double").alias("similarity"),
    )
    return replayed.unionByName(singles)


# --- stage 6: docIds, representatives, output -------------------------------------------


def doc_ids(assignments: DataFrame, feats: DataFrame) -> DataFrame:
    """(anchor, docId): make_doc_id(anchor nid), salted only on a collision."""
    from pyspark.sql import functions as F

    spark = feats.sparkSession
    named = (
        assignments.where(F.col("seq") == F.col("anchor")).select("anchor")
        .join(feats.select(F.col("seq").alias("anchor"), "nid"), "anchor")
    )
    anchors = spark.createDataFrame(
        named.rdd.map(lambda r: (r[0], r[1], make_doc_id(r[1]))),
        "anchor long, nid string, docId string",
    ).cache()
    clashes = (
        anchors.groupBy("docId").agg(F.count(F.lit(1)).alias("n")).where("n > 1")
        .join(anchors, "docId").select("anchor", "nid").collect()
    )
    if not clashes:
        return anchors.select("anchor", "docId")
    # 128-bit collisions: replay the online salting ("#1", "#2"...) for the few involved.
    from fingerprints.batch.replay import doc_ids_for

    salted = doc_ids_for((int(r["anchor"]), str(r["nid"])) for r in clashes)
    fix = feats.sparkSession.createDataFrame(list(salted.items()), "anchor long, fixed string")
    return (anchors.join(fix, "anchor", "left")
            .select("anchor", F.coalesce("fixed", "docId").alias("docId")))


def run_job(
    spark: SparkSession,
    input_path: str,
    output_dir: str,
    config: EngineConfig = DEFAULT_CONFIG,
    *,
    input_format: str | None = None,
    options: SparkOptions | None = None,
    media_weights: Mapping[str, float] | None = None,
    log: Any = None,
    boilerplate: frozenset[int] = frozenset(),
) -> dict[str, Any]:
    """Run every stage; write the outputs under ``output_dir``; return the statistics.
    ``boilerplate``: clause hashes removed from bodies, fixed for the run (the online
    engine's learned list)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    options = options or SparkOptions()
    timings: dict[str, float] = {}
    started = last = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal last
        now = time.perf_counter()
        timings[name] = round(now - last, 2)
        last = now
        if log is not None:
            log(f"{name}: {timings[name]:.1f}s")

    raw, rejected = read_input(spark, input_path, input_format)
    feats = fingerprint(raw, config, boilerplate).persist(StorageLevel.MEMORY_AND_DISK)
    articles = feats.count()
    lap("fingerprints")

    edges, parts = candidate_links(feats, config, options)
    edges = edges.localCheckpoint()
    link_count = edges.count()
    lap("candidates")

    labels, iterations = connected_components(edges, options.max_cc_iterations)
    labels = labels.cache()
    lap("components")

    assignments = assign(feats, labels, config).persist(StorageLevel.MEMORY_AND_DISK)
    assignments.count()
    lap("replay")

    ids = doc_ids(assignments, feats)
    scored = feats.select("seq", "nid", "hotness", "media")
    if media_weights:
        weights = spark.createDataFrame(list(media_weights.items()), "media string, w double")
        scored = scored.join(F.broadcast(weights), "media", "left")
    else:
        scored = scored.withColumn("w", F.lit(None).cast("double"))
    scored = scored.withColumn("score", F.col("hotness") * F.coalesce("w", F.lit(1.0)))
    clusters = (
        assignments.join(scored, "seq")
        .groupBy("anchor")
        .agg(F.count(F.lit(1)).alias("size"),
             F.max(F.struct("score", (-F.col("seq")).alias("order"), "nid")).alias("best"))
        .join(ids, "anchor")
        .join(feats.select(F.col("seq").alias("anchor"), F.col("nid").alias("anchorNid")),
              "anchor")
        .select("docId", "size", "anchorNid", F.col("best.nid").alias("representativeNid"),
                F.col("anchor").alias("anchorSeq"))
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    nids = feats.select(F.col("seq").alias("matchedSeq"), F.col("nid").alias("matchedNid"))
    result = (
        assignments.join(ids, "anchor")
        .join(nids, "matchedSeq", "left")
        .join(clusters.select("docId", "representativeNid"), "docId")
        .join(feats.select("seq", "urlHash", "titleFp", "contentFp", "features"), "seq")
        .join(raw.drop("nid", "hotness", "media"), "seq")
        .join(feats.select("seq", "nid", "hotness", "media"), "seq")
        .withColumn("isAnchor", F.col("seq") == F.col("anchor"))
        .withColumn("isRepresentative", F.col("nid") == F.col("representativeNid"))
        .drop("anchor", "representativeNid")
    )
    out = output_dir.rstrip("/")
    result.orderBy("seq").write.mode("overwrite").parquet(f"{out}/articles")
    written = spark.read.parquet(f"{out}/articles")
    written.orderBy("seq").select("nid", "docId").write.mode("overwrite").json(f"{out}/mapping")
    clusters.orderBy("anchorSeq").write.mode("overwrite").parquet(f"{out}/clusters")
    lap("output")

    stats = _statistics(spark, articles, rejected.value, written, clusters, parts, labels,
                        link_count, iterations, config, options)
    stats["timings"] = {**timings, "total": round(time.perf_counter() - started, 2)}
    stats["input"] = input_path
    stats["master"] = spark.sparkContext.master
    stats["executorEngine"] = executor_engine(spark)
    if "://" not in out or out.startswith("file://"):
        local = Path(out.removeprefix("file://"))
        (local / "stats.json").write_text(json.dumps(stats, indent=2, ensure_ascii=False))
        _concatenate(local / "mapping", local / "mapping.jsonl")
    else:
        spark.createDataFrame([(json.dumps(stats),)], "value string").coalesce(1) \
            .write.mode("overwrite").text(f"{out}/stats")
    return stats


def _statistics(spark: SparkSession, articles: int, rejected: int, written: DataFrame,
                clusters: DataFrame, parts: dict[str, DataFrame], labels: DataFrame,
                link_count: int, iterations: int, config: EngineConfig,
                options: SparkOptions) -> dict[str, Any]:
    from pyspark.sql import functions as F

    sizes = clusters.groupBy("size").count().collect()
    histogram: dict[str, int] = {}
    for row in sizes:
        size = int(row["size"])
        label = ("1" if size == 1 else "2" if size == 2 else "3-4" if size <= 4
                 else "5-9" if size <= 9 else "10+")
        histogram[label] = histogram.get(label, 0) + int(row["count"])
    components = labels.groupBy("label").count().agg(
        F.count(F.lit(1)).alias("n"), F.max("count").alias("largest")).first()
    matched = {str(r["matchedBy"]): int(r["count"])
               for r in written.groupBy("matchedBy").count().collect()}
    stats: dict[str, Any] = {
        "articles": articles,
        "rejectedRecords": rejected,
        "docs": sum(int(r["count"]) for r in sizes),
        "clusters": sum(int(r["count"]) for r in sizes if int(r["size"]) > 1),
        "duplicates": sum((int(r["size"]) - 1) * int(r["count"]) for r in sizes),
        "largestCluster": max((int(r["size"]) for r in sizes), default=0),
        "sizeHistogram": dict(sorted(histogram.items())),
        "matchedBy": matched,
        "links": link_count,
        "components": int(components["n"] or 0) if components else 0,
        "largestComponent": int(components["largest"] or 0) if components else 0,
        "componentRounds": iterations,
        "k": config.k,
        "titleK": config.title_k,
        "salts": options.salts,
        "tileSize": options.tile_size,
    }
    for name in ("content", "title", "picture"):
        buckets = parts[f"{name}Buckets"].agg(
            F.count(F.lit(1)).alias("n"), F.max("size").alias("largest"),
            F.sum(F.ceil(F.col("size") / F.lit(options.tile_size))).alias("subBuckets"),
        ).first()
        copies = parts[f"{name}Copies"].agg(F.max("copies").alias("m")).first()
        stats[f"{name}CandidatePairs"] = parts[f"{name}Pairs"].count()
        stats[f"{name}SharedBuckets"] = int(buckets["n"] or 0) if buckets else 0
        stats[f"{name}LargestBucket"] = int(buckets["largest"] or 0) if buckets else 0
        stats[f"{name}SubBuckets"] = int(buckets["subBuckets"] or 0) if buckets else 0
        stats[f"{name}MaxIdenticalFingerprints"] = int(copies["m"] or 0) if copies else 0
    return stats


def _concatenate(folder: Path, target: Path) -> None:
    """Spark writes part files; also give local users one ``mapping.jsonl``."""
    with target.open("wb") as out:
        for part in sorted(folder.glob("part-*")):
            out.write(part.read_bytes())
