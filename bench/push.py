"""Representative pushes per second through the outbox to an HBase Thrift server.

    .venv/bin/python bench/push.py [--docs 5000] [--workers 2]

Creates N docIds with a representative and a pending outbox row each, starts
the test HBase Thrift server (support/hbase_server.py: HBase's Thrift interface,
in-memory tables — no real HBase can run here) and W real RQ workers, and
times until the outbox is drained. Baseline in the same run: the same rows
written straight to the table with happybase's batch API from one process
(no outbox, no versions, no per-docId lock).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL") or not os.environ.get("REDIS_URL"):
        os.execv(PY, [PY, str(ROOT / "scripts" / "testenv.py"), "run", "--", PY, *sys.argv])
    sys.path.insert(0, str(ROOT))
    from support.hbase_server import spawn_server_process

    server = spawn_server_process(port=0)
    os.environ["HBASE_URL"] = f"{server.url}?table=bench_docs"
    os.environ["LOG_LEVEL"] = "WARNING"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedupsite.settings")
    subprocess.run([PY, "manage.py", "migrate", "--noinput"], cwd=ROOT, check=True,
                   capture_output=True)
    import django

    django.setup()
    import redis
    from django.utils import timezone

    from articles.models import Article, ArticleStatus, Doc, RepresentativeOutbox
    from articles.representatives.stores import HBaseStore

    redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()
    RepresentativeOutbox.objects.all().delete()
    Article.objects.all().delete()
    Doc.objects.all().delete()
    body = "新华社北京电 " + "这是一篇用于测试推送速度的文章内容。" * 60
    now = timezone.now()
    Article.objects.bulk_create([
        Article(nid=f"p{i}", url=f"https://p.example/{i}", title=f"标题 {i}", content=body,
                status=ArticleStatus.DONE, hotness=i % 97) for i in range(args.docs)], 2000)
    ids = dict(Article.objects.values_list("nid", "id"))
    Doc.objects.bulk_create([
        Doc(doc_id=f"{i:016x}-{i * 7919:016x}", representative_id=ids[f"p{i}"], size=1,
            rep_version=1, first_seen=now, last_seen=now) for i in range(args.docs)], 2000)
    RepresentativeOutbox.objects.bulk_create([
        RepresentativeOutbox(doc_id=d, version=1, shard=RepresentativeOutbox.shard_of(d))
        for d in Doc.objects.values_list("doc_id", flat=True)], 2000)

    import django_rq
    from rq import Worker

    from articles.representatives.outbox import enqueue_push

    workers = [subprocess.Popen([PY, "manage.py", "rqworker", "push"], cwd=ROOT)
               for _ in range(args.workers)]
    connection = django_rq.get_connection("push")
    while len(Worker.all(connection=connection)) < args.workers:  # wait until they listen
        time.sleep(0.2)
    start = time.perf_counter()
    enqueue_push()
    while RepresentativeOutbox.objects.filter(status="pending").exists():
        time.sleep(0.05)
    elapsed = time.perf_counter() - start
    for worker in workers:
        worker.terminate()
        worker.wait(timeout=30)
    store = HBaseStore(os.environ["HBASE_URL"])
    stored = sum(1 for _ in store.scan())

    import happybase

    conn = happybase.Connection(server.host, server.port)
    conn.create_table("bench_raw", {"d": {}})
    table = conn.table("bench_raw")
    rows = list(Doc.objects.select_related("representative").all())
    t0 = time.perf_counter()
    with table.batch(batch_size=500) as batch:
        for doc in rows:
            rep = doc.representative
            batch.put(doc.doc_id.encode(), {b"d:nid": rep.nid.encode(),
                                            b"d:title": rep.title.encode(),
                                            b"d:content": rep.content.encode()})
    raw = time.perf_counter() - t0
    server.stop()
    rate = args.docs / elapsed
    print(f"outbox -> HBase Thrift, {args.workers} RQ workers: {args.docs} docIds in "
          f"{elapsed:.1f} s = {rate:,.0f} pushes/s; rows stored {stored}")
    print(f"baseline happybase batch puts, one process, no outbox: {args.docs / raw:,.0f} rows/s"
          f" (outbox path = {rate / (args.docs / raw):.2f}x of it)")


if __name__ == "__main__":
    main()
