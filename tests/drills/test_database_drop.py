"""Drill: the database drops a long-lived worker's connection (a MariaDB restart).

`make worker` runs `dedup_worker`: jobs run in the worker process itself, on
one Django connection that lives as long as the process. After a MariaDB
restart that connection is dead; Django closes dead connections per request,
so a job must do the same, or every later job fails until the process is
restarted. The slow drill test_mariadb_restart.py does this with a real
restart; here the server kills the connection (KILL), in seconds.
"""

from __future__ import annotations

import json
import time

import django_rq
import MySQLdb
import pytest
from django.db import connection
from rq import SimpleWorker

from articles.models import Article
from support import corpus
from support.drill_records import write_record

pytestmark = [pytest.mark.drill, pytest.mark.mysql, pytest.mark.django_db(transaction=True)]


def work() -> None:
    queues = [django_rq.get_queue(name) for name in ("ingest", "push", "default")]
    SimpleWorker(queues, connection=queues[0].connection).work(burst=True, with_scheduler=True)


def admin_sql(query: str) -> tuple | None:
    """A statement on a connection of its own, so that Django's is left as it is."""
    s = connection.settings_dict
    admin = MySQLdb.connect(host=s["HOST"] or "localhost", port=int(s["PORT"] or 3306),
                            user=s["USER"], password=s["PASSWORD"], database=s["NAME"])
    try:
        cursor = admin.cursor()
        cursor.execute(query)
        return cursor.fetchone()
    finally:
        admin.close()


def kill_connection_of_this_process() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT CONNECTION_ID()")
        connection_id = cursor.fetchone()[0]
    admin_sql(f"KILL {int(connection_id)}")


def test_an_in_process_worker_recovers_when_the_database_drops_its_connection(
        client, auth, redis_client):
    if connection.vendor != "mysql":
        pytest.skip("needs MariaDB/MySQL")
    response = client.post("/api/v1/articles", data=json.dumps(corpus.article("a1", 1)),
                           content_type="application/json", **auth)
    assert response.status_code == 202
    kill_connection_of_this_process()  # what a MariaDB restart does to every connection
    dropped_at = time.monotonic()
    done_after = None
    for _ in range(4):  # the job, then its retries (1 s, 5 s back-off)
        work()
        row = admin_sql("SELECT status FROM articles_article WHERE nid = 'a1'")
        if row and row[0] == "done":
            done_after = time.monotonic() - dropped_at
            break
        time.sleep(1.5)
    connection.close()  # the test's own check must not depend on the fix
    article = Article.objects.get(nid="a1")
    status, attempts = article.status, article.attempts
    write_record(
        "database-drop",
        title="The database drops a worker's connection",
        fault="MariaDB kills the connection of a running dedup_worker-style in-process worker "
              "(as a MariaDB restart does), with an article queued",
        system_did=("every job failed on the dead connection: the worker never recovers "
                    "until it is restarted" if done_after is None else
                    "the worker reconnected by itself and processed the article "
                    f"{done_after:.1f} s after its connection was dropped"),
        lost="nothing" if status == "done" else "ingest stops: every job fails",
        recovery_s=done_after,
        checks={"the worker recovered on its own": status == "done"},
        figures={"status": status, "done_after_s": done_after, "attempts": attempts},
    )
    assert status == "done"
