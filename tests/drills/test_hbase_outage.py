"""Drill: the HBase Thrift server dies (SIGKILL) while articles keep arriving.

Ingest must go on (docIds do not depend on HBase); representative changes
wait in the outbox while the push jobs retry with back-off; once the server is
back, the real RQ scheduler re-runs them and the outbox drains to zero; the
store then holds exactly MySQL's representatives (every docId, the right
member, size, hotness and version, and nothing else).
"""

from __future__ import annotations

import json
import time
from io import StringIO

import django_rq
import pytest
from django.core.management import call_command
from rq import SimpleWorker

from articles.models import Article, Doc, OutboxStatus, RepresentativeOutbox
from articles.representatives import outbox
from support import corpus
from support.drill_records import write_record
from support.hbase_server import spawn_server_process

pytestmark = [pytest.mark.drill, pytest.mark.django_db(transaction=True)]

STORIES = 15


def work() -> None:
    """One burst of a real RQ worker with its scheduler: due retries are enqueued and run."""
    queues = [django_rq.get_queue(name) for name in ("ingest", "push", "default")]
    SimpleWorker(queues, connection=queues[0].connection).work(burst=True, with_scheduler=True)


def pending() -> int:
    return RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING).count()


def post(client, auth, articles) -> None:
    response = client.post("/api/v1/articles", data=json.dumps({"articles": articles}),
                           content_type="application/json", **auth)
    assert response.status_code in (200, 202), response.content


def store_mismatches() -> list[str]:
    """Differences between the store and MySQL's representatives, in both directions."""
    store = outbox.store()
    stored = dict(store.scan())
    problems = []
    for doc in Doc.objects.select_related("representative").filter(size__gt=0):
        row = stored.pop(doc.doc_id, None)
        rep = doc.representative
        if row is None:
            problems.append(f"{doc.doc_id} missing")
        elif (row.get("nid"), row.get("clusterSize"), row.get("hotness"), row.get("version")) != (
                rep.nid, doc.size, rep.hotness, doc.rep_version):
            problems.append(f"{doc.doc_id}: store {row.get('nid')}/{row.get('clusterSize')}/"
                            f"{row.get('hotness')}/v{row.get('version')} != MySQL {rep.nid}/"
                            f"{doc.size}/{rep.hotness}/v{doc.rep_version}")
    problems += [f"{doc_id} orphaned" for doc_id in stored]
    return problems


def test_representatives_are_exact_after_an_hbase_outage(client, auth, redis_client, settings,
                                                         tmp_path):
    with spawn_server_process(port=0, data_path=tmp_path / "hbase.log") as hbase:
        settings.HBASE_URL = f"{hbase.url}?table=dedup_docs&timeout=2000"
        outbox.store.cache_clear()
        try:
            run_drill(client, auth, hbase)
        finally:
            outbox.store.cache_clear()


def run_drill(client, auth, hbase) -> None:
    post(client, auth, [corpus.article(f"s{n}", n, hotness=10) for n in range(STORIES)])
    work()
    assert pending() == 0 and not store_mismatches()

    hbase.kill()  # the Thrift gateway crashes; its tables survive (data file)
    down_at = time.monotonic()
    # Reposts, some hotter than their story (a new representative), new stories, PATCHes.
    post(client, auth, [corpus.article(f"r{n}", n, copy=1, hotness=20 if n % 2 else 5)
                        for n in range(STORIES)])
    post(client, auth, [corpus.article(f"new{n}", 100 + n) for n in range(5)])
    patched = []
    for n in range(0, STORIES, 3):
        response = client.patch(f"/api/v1/articles/s{n}", data=json.dumps({"hotness": 99}),
                                content_type="application/json", **auth)
        assert response.status_code == 200, response.content
        patched.append(f"s{n}")
    max_pending = 0
    while time.monotonic() - down_at < 6:  # the outage: retries keep failing
        work()
        max_pending = max(max_pending, pending())
        time.sleep(0.3)
    done_while_down = Article.objects.filter(status="done").count()
    attempts = max(RepresentativeOutbox.objects.filter(status=OutboxStatus.PENDING)
                   .values_list("attempts", flat=True), default=0)
    health = client.get("/api/v1/health").json()

    hbase.start()  # same port, same tables
    up_at = time.monotonic()
    outage_s = up_at - down_at
    drained_s = None
    while time.monotonic() - up_at < 90:
        work()
        if pending() == 0:
            drained_s = time.monotonic() - up_at
            break
        time.sleep(0.2)
    mismatches = store_mismatches()
    out = StringIO()
    call_command("sync_representatives", stdout=out, stderr=StringIO())
    sync_report = out.getvalue().strip().splitlines()[-1] if out.getvalue().strip() else ""
    expected_articles = 2 * STORIES + 5

    checks = {
        "ingest went on while HBase was down": done_while_down == expected_articles,
        "health reported HBase down": health.get("hbase", {}).get("ok") is False,
        "changes waited in the outbox": max_pending > 0 and attempts > 0,
        "outbox drained to zero after the restart": drained_s is not None,
        "store equals MySQL exactly": not mismatches,
        "sync_representatives finds nothing to repair": "0 missing, 0 stale, 0 orphaned"
                                                         in sync_report,
    }
    drained = f"in {drained_s:.1f} s" if drained_s is not None else "NOT"
    write_record(
        "hbase-outage",
        title="HBase Thrift server killed for a while",
        fault=f"SIGKILL of the HBase Thrift server for {outage_s:.1f} s during ingest, "
              f"{len(patched)} hotness PATCHes and new representatives",
        system_did=f"ingest went on ({done_while_down}/{expected_articles} articles done while "
                   f"HBase was down); up to {max_pending} representative changes waited in the "
                   f"outbox, push retried {attempts}× with back-off; drained "
                   f"{drained} after the "
                   "restart; store equals MySQL",
        lost="nothing" if not mismatches and drained_s is not None else
             f"{len(mismatches)} docIds differ",
        recovery_s=drained_s,
        checks=checks,
        figures={"outage_s": round(outage_s, 1), "max_outbox_pending": max_pending,
                 "push_attempts_while_down": attempts, "docs": Doc.objects.count(),
                 "drain_s_after_restart": None if drained_s is None else round(drained_s, 2),
                 "sync_report": sync_report, "mismatches": mismatches[:20],
                 "retry_backoff_s": [1, 2, 5, 10, 30, 60, 120, 300, 600, 600]},
    )
    assert all(checks.values()), (checks, mismatches[:10])
