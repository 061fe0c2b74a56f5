"""Drill: two jobs for the same articles run at once.

Duplicate jobs are part of the design: the workers' watchdog re-enqueues every
article queued for more than 30 s (a backlog included), RQ retries a job whose
worker died, the admin re-queues. "Enqueueing an article twice is harmless: a
job skips done ones" — this drill runs two jobs for one batch concurrently, the
worst case, and checks that every doc's size still equals its members.
"""

from __future__ import annotations

import json
import threading

import pytest
from django.db import connection

from articles.ingest import assign
from articles.models import Article, Doc
from articles.representatives import outbox
from support import corpus
from support.drill_records import write_record

pytestmark = [pytest.mark.drill, pytest.mark.django_db(transaction=True)]


def post(client, auth, articles) -> None:
    response = client.post("/api/v1/articles", data=json.dumps({"articles": articles}),
                           content_type="application/json", **auth)
    assert response.status_code in (200, 202), response.content


def run_twice_at_once(nids: list[str], monkeypatch) -> list[BaseException]:
    """Two jobs for `nids`, both past their first read before either goes on."""
    real = assign.extract_many
    barrier = threading.Barrier(2, timeout=60)

    def in_step(*args, **kwargs):
        barrier.wait()  # both jobs have loaded the queued articles
        return real(*args, **kwargs)

    monkeypatch.setattr(assign, "extract_many", in_step)
    errors: list[BaseException] = []

    def job() -> None:
        try:
            assign.process_articles(nids)
        except BaseException as exc:  # noqa: BLE001  (reported by the test)
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=job) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return errors


def size_mismatches() -> list[str]:
    out = []
    for doc in Doc.objects.all():
        members = Article.objects.filter(doc=doc, status="done").count()
        if doc.size != members:
            out.append(f"{doc.doc_id}: size {doc.size}, {members} members")
    return out


def test_two_jobs_at_once_keep_doc_sizes_right(client, auth, run_worker, monkeypatch):
    # New articles, twice at once.
    post(client, auth, [corpus.article(f"a{n}", n) for n in range(6)]
         + [corpus.article(f"b{n}", n, copy=1) for n in range(6)])
    new_errors = run_twice_at_once([f"a{n}" for n in range(6)] + [f"b{n}" for n in range(6)],
                                   monkeypatch)
    run_worker()  # the queued jobs find nothing left to do
    after_new = size_mismatches()
    # Changed bodies (a crawler corrects articles): each must leave its old doc once.
    post(client, auth, [{**corpus.article(f"a{n}", n), "content": corpus.story(500 + n)}
                        for n in range(3)])
    changed_errors = run_twice_at_once([f"a{n}" for n in range(3)], monkeypatch)
    run_worker()  # the queued jobs, and the representative pushes
    after_changed = size_mismatches()
    done = Article.objects.filter(status="done").count()
    store = outbox.store()
    unrepresented = [doc.doc_id for doc in Doc.objects.all()
                     if Article.objects.filter(doc=doc, status="done").exists()
                     and store.get(doc.doc_id) is None]
    checks = {
        "new articles: sizes = members": not after_new,
        "changed bodies: sizes = members": not after_changed,
        "every article done": done == 12,
        "every doc with members has its representative in the store": not unrepresented,
        "no job crashed": not new_errors and not changed_errors,
    }
    write_record(
        "duplicate-jobs",
        title="Two jobs for the same batch at once",
        fault="the same batch processed by two jobs at the same moment (watchdog re-enqueue "
              "of a backlog, RQ retry, admin re-queue): 12 new articles, then 3 changed bodies",
        system_did="new articles: one job assigned them, the other found them done "
                   f"({len(after_new)} size errors); changed bodies: "
                   f"{len(after_changed)} docs left with a wrong size, "
                   f"{len(unrepresented)} docs with members but no representative in the store",
        lost="nothing" if all(checks.values()) else
             f"{len(after_new + after_changed)} docs left with a wrong size; "
             f"{len(unrepresented)} representatives deleted from the store although their "
             "doc still has members",
        recovery_s=None,
        checks=checks,
        figures={"size_mismatches_new": after_new, "size_mismatches_changed": after_changed,
                 "docs_without_representative_in_store": unrepresented,
                 "errors": [repr(e) for e in new_errors + changed_errors]},
        findings=[] if not after_changed else [
            "articles/assign.py detach(): both jobs take a re-posted article out of its old "
            "doc, so the doc's size drops twice. Detach only if the row still points at the "
            "doc: Article.objects.filter(pk=..., doc=doc).update(doc=None) == 1."],
    )
    assert not new_errors and not changed_errors, new_errors + changed_errors
    assert not after_new, after_new
    assert not after_changed, after_changed
    assert not unrepresented, unrepresented
