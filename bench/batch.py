"""docs/s of spark_dedup at local[2] against the in-process batch engine, same input.

The input is the shared corpora (../shared/data, read in place) repeated with random
edits until it has ``--articles`` articles: each repeat of an article gets a new nid
and URL and, with probability 0.5, a light edit (a sentence dropped, a header or a
footer added, a few characters changed) — so the corpus has many near-duplicates, as
a crawl does. The generated file goes to a temporary folder, never into the project.

    .venv/bin/python bench/batch.py --articles 200000            # both engines
    .venv/bin/python bench/batch.py --articles 20000 --sizes 5000,20000  # crossover
    .venv/bin/python bench/batch.py --equality xinhua            # spark == local == online

``--equality`` also ingests the corpus article by article through the online engine
(the API's service and a burst RQ worker, against DATABASE_URL and REDIS_URL — use a
scratch database) and compares the three partitions. All three remove the same
boilerplate clauses: the ones the corpus teaches when it is streamed through the
engine in memory (``common.run_engine``, the workers' counting arithmetic), written
to the scratch database as learned clauses, with learning switched off for the
online pass (batch runs and Spark take the list fixed for the run, as in production:
docs/batch.md). ``--no-boilerplate`` compares them with no list at all.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import CORPORA, load_docs  # noqa: E402


def make_input(path: Path, articles: int, seed: int = 5) -> Path:
    rng = random.Random(seed)
    base = [d for name in ("xinhua", "thucnews", "bbc", "cnndm") for d in load_docs(name)]
    with path.open("w", encoding="utf-8") as out:
        for i in range(articles):
            doc = base[i % len(base)]
            round_ = i // len(base)
            content = doc.content
            if round_ and rng.random() < 0.5:
                content = _edit(rng, content)
            nid = f"{doc.id}~{round_}"
            out.write(json.dumps({
                "nid": nid, "url": f"https://bench.example/{nid}", "title": doc.title,
                "content": content, "hotness": rng.randrange(100),
            }, ensure_ascii=False) + "\n")
    return path


def _edit(rng: random.Random, text: str) -> str:
    choice = rng.randrange(4)
    if choice == 0:
        cut = rng.randrange(len(text) // 2, len(text))
        return text[:cut]
    if choice == 1:
        return "（转载）" + text + " 责任编辑：某某"
    if choice == 2:
        chars = list(text)
        for _ in range(3):
            chars[rng.randrange(len(chars))] = rng.choice("的一是在了不和有大这")
        return "".join(chars)
    return text.replace("。", "。\n", 3)


def run_local(path: Path, out: Path, workers: int,
              boilerplate: frozenset[int] = frozenset()) -> tuple[float, dict[str, Any]]:
    from fingerprints.batch import replay as batch

    started = time.perf_counter()
    records = list(batch.read_jsonl(path))
    items, _ = batch.prepare(records, workers=workers, boilerplate=boilerplate)
    result = batch.run_items(items)
    batch.write_result(out, records, items, result)
    return time.perf_counter() - started, result.stats


def run_spark(path: Path, out: Path, master: str, boilerplate: frozenset[int] = frozenset()
              ) -> tuple[float, float, dict[str, Any]]:
    from fingerprints.batch.spark import build_session, run_job

    started = time.perf_counter()
    spark = build_session(master, shuffle_partitions=8)
    session = time.perf_counter() - started
    try:
        stats = run_job(spark, str(path), str(out), boilerplate=boilerplate)
    finally:
        spark.stop()
    return time.perf_counter() - started, session, stats


def mapping(folder: Path) -> dict[str, str]:
    with (folder / "mapping.jsonl").open(encoding="utf-8") as lines:
        return {r["nid"]: r["docId"] for r in map(json.loads, lines)}


def partition(m: dict[str, str]) -> set[frozenset[str]]:
    groups: dict[str, set[str]] = {}
    for nid, doc in m.items():
        groups.setdefault(doc, set()).add(nid)
    return {frozenset(g) for g in groups.values()}


def scratch_database(docs: list[Any], boilerplate: bool) -> frozenset[int]:
    """Prepare the empty scratch database for ``--equality``: the boilerplate clauses
    the corpus teaches (``boilerplate``) written as learned clauses, learning switched
    off for the online pass; returns the list batch runs and Spark take."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedupsite.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from articles.index.reindex import apply_settings
    from articles.models import Article, BoilerplateClause, EngineSettings
    from articles.tuning.boilerplate import active_boilerplate
    from bench.common import run_engine
    from fingerprints.rule.ids import to_signed

    call_command("migrate", verbosity=0)
    if Article.objects.exists() or BoilerplateClause.objects.exists():
        raise SystemExit("--equality needs an empty scratch database (DATABASE_URL)")
    settings = EngineSettings.load()
    if boilerplate:
        learned: dict[int, str] = {}
        run_engine(docs, settings.engine_config(), learned=learned)
        BoilerplateClause.objects.bulk_create(
            BoilerplateClause(clause_hash=to_signed(h), text=text[:300],
                              stories=settings.boilerplate_min_docs)
            for h, text in learned.items())
    settings.boilerplate_min_docs = 0
    settings.version += 1
    settings.save()
    apply_settings(settings)
    return active_boilerplate(0)


def online(path: Path) -> dict[str, str]:
    """Ingest article by article through the online engine (the scratch database
    :func:`scratch_database` prepared); return nid -> docId."""
    import django_rq
    from rq import SimpleWorker

    from articles.ingest.intake import ArticleInput, accept_articles
    from articles.models import Article
    from fingerprints.batch.replay import read_jsonl

    queue = django_rq.get_queue("ingest")
    records = list(read_jsonl(path))
    for r in records:  # one article per request, as a crawler posting one by one
        accept_articles([ArticleInput(nid=r["nid"], url=r["url"], title=r["title"],
                                      content=r["content"], hotness=float(r["hotness"]))])
    SimpleWorker([queue], connection=queue.connection).work(burst=True, with_scheduler=False)
    return dict(Article.objects.values_list("nid", "doc__doc_id"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--articles", type=int, default=200_000)
    parser.add_argument("--sizes", default="", help="comma-separated sizes (crossover)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--workers", type=int, default=2, help="local engine processes")
    parser.add_argument("--equality", choices=sorted(CORPORA), default=None)
    parser.add_argument("--no-boilerplate", action="store_true",
                        help="--equality with no boilerplate list")
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        folder = Path(tmp)
        if args.equality:
            path = folder / "corpus.jsonl"
            docs = load_docs(args.equality)
            with path.open("w", encoding="utf-8") as out:
                for d in docs:
                    out.write(json.dumps({"nid": d.id, "url": f"https://bench.example/{d.id}",
                                          "title": d.title, "content": d.content,
                                          "hotness": 0}, ensure_ascii=False) + "\n")
            boilerplate = scratch_database(docs, not args.no_boilerplate)
            local_s, stats = run_local(path, folder / "local", args.workers, boilerplate)
            spark_s, _, _ = run_spark(path, folder / "spark", args.master, boilerplate)
            lm, sm = mapping(folder / "local"), mapping(folder / "spark")
            om = online(path)
            print(json.dumps({
                "corpus": args.equality, "articles": len(lm), "docs": stats["docs"],
                "boilerplateClauses": len(boilerplate),
                "clusters": stats["clusters"], "largestCluster": stats["largestCluster"],
                "localSeconds": round(local_s, 1), "sparkSeconds": round(spark_s, 1),
                "sparkEqualsLocalDocIds": sm == lm, "onlineEqualsLocalDocIds": om == lm,
                "partitionsEqual": partition(sm) == partition(lm) == partition(om),
            }, indent=2))
            return
        sizes = [int(s) for s in args.sizes.split(",") if s] or [args.articles]
        rows = []
        for size in sizes:
            path = make_input(folder / f"in-{size}.jsonl", size)
            local_s, stats = run_local(path, folder / f"local-{size}", args.workers)
            peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            spark_s, session_s, sstats = run_spark(path, folder / f"spark-{size}", args.master)
            same = mapping(folder / f"local-{size}") == mapping(folder / f"spark-{size}")
            row = {
                "articles": size, "docs": stats["docs"], "largestCluster":
                stats["largestCluster"], "localSeconds": round(local_s, 1),
                "localDocsPerSecond": round(size / local_s),
                "localPeakRssMB": round(peak_mb),  # the process holding every feature
                "sparkSeconds": round(spark_s, 1), "sparkSessionSeconds": round(session_s, 1),
                "sparkDocsPerSecond": round(size / spark_s), "sparkStages": sstats["timings"],
                "sameDocIds": same,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
