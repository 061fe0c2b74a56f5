"""Bulk decisions: one job over many clusters, each cluster version-checked, audited and
undone with the rest; bad input changes nothing; only editors may start or undo one."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from articles.editor import actions, bulk
from articles.models import (
    Article,
    AuditEntry,
    BulkAction,
    BulkStatus,
    Decision,
    Doc,
    DocStatus,
    EditorLink,
)

from .conftest import _run_worker, htmx, login
from .test_undo import state

pytestmark = pytest.mark.django_db

AUTO = ("river", "library", "museum", "xss")


def selected(*docs: Doc) -> list[str]:
    """The checkboxes of a page: docId and the version the page showed."""
    return [f"{d.doc_id}:{Doc.objects.get(pk=d.pk).version}" for d in docs]


def post_bulk(client, data: dict, *, htmx_target: str | None = "bulk-status", **extra):
    headers = htmx(htmx_target) if htmx_target else {}
    return client.post("/bulk/", data={"next": "/clusters/", **data}, **headers, **extra)


def run_jobs(django_capture_on_commit_callbacks, client, data: dict):
    """Start a bulk action through the view and run its job (on commit, then the worker's
    function itself: the tests' transaction is never committed)."""
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = post_bulk(client, data)
    assert response.status_code == 200, response.content
    job = BulkAction.objects.order_by("-pk").first()
    assert job is not None and len(callbacks) == 1
    bulk.run(job.pk)
    job.refresh_from_db()
    return response, job


def test_a_bulk_confirm_confirms_every_selected_cluster_and_audits_each(
        client, corpus, editor, django_capture_on_commit_callbacks):
    login(client, editor)
    docs = [corpus[k] for k in AUTO]
    response, job = run_jobs(django_capture_on_commit_callbacks, client,
                             {"action": "confirm", "doc": selected(*docs), "note": "one story"})
    assert 'id="bulk-status"' in response.content.decode()
    assert (job.status, job.processed, job.changed, job.skipped) == (BulkStatus.DONE, 4, 4, [])
    for doc in docs:
        assert Doc.objects.get(pk=doc.pk).status == DocStatus.CONFIRMED
        assert not Article.objects.filter(doc=doc, pinned=False).exists()
        entry = AuditEntry.objects.get(doc_id=doc.doc_id, action="confirm")
        assert (entry.actor, entry.note, entry.data["bulk"]) == (editor, "one story", job.pk)
    assert job.decisions.count() == 4
    page = client.get(f"/bulk/{job.pk}/", **htmx("bulk-status"))
    assert page["HX-Trigger"] == "bulkDone"
    html = page.content.decode()
    assert "4 clusters confirmed" in html and "hx-trigger" not in html  # done: no more polls
    assert f'action="/bulk/{job.pk}/undo/"' in html


def test_a_cluster_changed_since_the_selection_is_skipped_and_reported(
        client, corpus, editor, django_capture_on_commit_callbacks):
    from django.contrib.auth.models import User

    login(client, editor)
    river, library = corpus["river"], corpus["library"]
    shown = selected(river, library)
    wang = User.objects.create_user("wang")
    member = Article.objects.get(nid="river-3")
    actions.split_article(member, wang, "another event")  # decided while the page was open
    after_split = state()
    _response, job = run_jobs(django_capture_on_commit_callbacks, client,
                              {"action": "confirm", "doc": shown})
    assert (job.changed, job.processed) == (1, 2)
    assert job.skipped == [{"doc_id": river.doc_id, "reason": "changed", "who": "wang",
                            "what": "split"}]
    assert Doc.objects.get(pk=river.pk).status != DocStatus.CONFIRMED  # not overwritten
    assert Doc.objects.get(pk=library.pk).status == DocStatus.CONFIRMED
    assert not AuditEntry.objects.filter(doc_id=river.doc_id, action="confirm").exists()
    html = client.get(f"/bulk/{job.pk}/").content.decode()
    assert "changed since it was selected: wang (split an article out)" in html
    assert state() != after_split  # the library was confirmed


def test_mark_for_review_puts_the_clusters_in_the_queue_and_leaves_confirmed_ones(
        client, corpus, editor, django_capture_on_commit_callbacks):
    login(client, editor)
    actions.confirm_doc(corpus["museum"], editor)
    _response, job = run_jobs(django_capture_on_commit_callbacks, client, {
        "action": "flag_for_review", "doc": selected(corpus["library"], corpus["museum"])})
    assert Doc.objects.get(pk=corpus["library"].pk).status == DocStatus.NEEDS_REVIEW
    assert Doc.objects.get(pk=corpus["museum"].pk).status == DocStatus.CONFIRMED
    assert job.skipped == [{"doc_id": corpus["museum"].doc_id, "reason": "confirmed"}]
    assert AuditEntry.objects.filter(doc_id=corpus["library"].doc_id,
                                     action="mark_for_review", data__bulk=job.pk).exists()
    queue = client.get("/review/").content.decode()
    assert "library-2" in queue and "flagged for review" in queue


def test_all_that_match_the_filter_takes_the_filter_of_the_clusters_page(
        client, corpus, editor, django_capture_on_commit_callbacks):
    login(client, editor)
    query = urlencode({"media": "City Daily", "min_size": 2})
    page = client.get(f"/clusters/?{query}").content.decode()
    assert "all 3 clusters that match this filter" in page
    upto = Doc.objects.order_by("-pk").first().pk
    _response, job = run_jobs(django_capture_on_commit_callbacks, client, {
        "action": "confirm", "scope": "filter", "filter": query, "count": 3, "upto": upto})
    confirmed = set(Doc.objects.filter(status=DocStatus.CONFIRMED).values_list("pk", flat=True))
    # river-2, library-2 and xss-2 are City Daily's; the museum is not
    assert confirmed == {corpus[k].pk for k in ("river", "library", "xss")}
    assert job.selection["scope"] == "filter" and job.changed == 3


def test_a_filter_that_now_matches_another_number_starts_nothing(client, corpus, editor):
    login(client, editor)
    before = state()
    upto = Doc.objects.order_by("-pk").first().pk
    response = post_bulk(client, {"action": "confirm", "scope": "filter", "filter": "",
                                  "count": 3, "upto": upto})
    assert "The filter now matches 4 clusters, not the 3 the page showed" in \
        response.content.decode()
    assert not BulkAction.objects.exists() and state() == before


@pytest.mark.parametrize(("data", "message"), [
    ({"action": "confirm"}, "Select at least one cluster."),
    ({"action": "delete", "doc": ["x:1"]}, "Choose an action."),
    ({"action": "confirm", "doc": ["0000000000000000-0000000000000000:0"]},
     "There is no docId 0000000000000000-0000000000000000."),
    ({"action": "confirm", "doc": ["no-version"]}, "no-version is not a cluster."),
    ({"action": "confirm", "scope": "filter", "filter": "min_size=abc", "count": 1,
      "upto": 10}, "Min. size: Enter a whole number."),
])
def test_bad_input_gets_a_clear_error_and_changes_nothing(client, corpus, editor, data,
                                                          message):
    login(client, editor)
    before = state()
    response = post_bulk(client, data)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not BulkAction.objects.exists() and state() == before
    # without JavaScript: back to the list with the same message
    response = post_bulk(client, data, htmx_target=None, follow=True)
    assert message in response.content.decode()


def test_too_many_clusters_are_refused(client, corpus, editor, settings):
    settings.BULK_MAX_CLUSTERS = 3
    login(client, editor)
    response = post_bulk(client, {"action": "confirm",
                                  "doc": selected(*[corpus[k] for k in AUTO])})
    assert "A bulk decision takes at most 3 clusters" in response.content.decode()
    assert not BulkAction.objects.exists()


def test_only_editors_start_or_undo_a_bulk_action(client, corpus, editor, viewer):
    data = {"action": "confirm", "doc": selected(corpus["river"])}
    response = client.post("/bulk/", data=data)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    login(client, viewer)  # staff may look, not act
    assert client.post("/bulk/", data=data).status_code == 403
    job = bulk.start(editor, "confirm", [(corpus["river"].pk, corpus["river"].version)])
    bulk.run(job.pk)
    assert client.post(f"/bulk/{job.pk}/undo/").status_code == 403
    assert client.get(f"/bulk/{job.pk}/").status_code == 200  # but may see it
    assert client.get("/bulk/").status_code == 405
    assert Doc.objects.get(pk=corpus["river"].pk).status == DocStatus.CONFIRMED


def test_the_undo_of_a_bulk_action_restores_every_cluster_it_can(
        client, corpus, editor, django_capture_on_commit_callbacks):
    from django.contrib.auth.models import User

    login(client, editor)
    before = state()
    docs = [corpus[k] for k in AUTO]
    _response, job = run_jobs(django_capture_on_commit_callbacks, client,
                              {"action": "confirm", "doc": selected(*docs)})
    wang = User.objects.create_user("wang")
    actions.choose_representative(Article.objects.get(nid="museum-2"), wang)  # decided since
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(f"/bulk/{job.pk}/undo/", **htmx("bulk-status"))
    undo = BulkAction.objects.get(undoes=job)
    assert f'hx-get="/bulk/{undo.pk}/"' in response.content.decode()  # progress, polling
    assert bulk.run(undo.pk) == 3
    undo.refresh_from_db()
    assert undo.skipped == [{"doc_id": corpus["museum"].doc_id, "reason": "changed",
                             "who": "wang", "what": "representative"}]
    for key in ("river", "library", "xss"):
        assert Doc.objects.get(pk=corpus[key].pk).status == corpus[key].status
        assert AuditEntry.objects.filter(doc_id=corpus[key].doc_id, action="undo",
                                         data__bulk=undo.pk).exists()
    museum = Doc.objects.get(pk=corpus["museum"].pk)
    assert museum.status == DocStatus.CONFIRMED  # keeps the confirm wang built on
    # undoing wang's choice, then the museum's confirm, gives back the state before
    actions.undo(Decision.objects.get(doc_id=museum.doc_id, action="representative"), editor)
    actions.undo(job.decisions.get(doc_id=museum.doc_id), editor)
    assert state() == before
    assert not EditorLink.objects.exists()
    # a bulk action is undone once
    again = client.post(f"/bulk/{job.pk}/undo/", **htmx("bulk-status"))
    assert "It was undone already." in again.content.decode()
    assert BulkAction.objects.filter(undoes=job).count() == 1


def test_the_job_runs_once_and_through_the_queue(client, corpus, editor,
                                                 django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):  # as the commit would
        job = bulk.start(editor, "confirm",
                         [(corpus["library"].pk, corpus["library"].version)])
    _run_worker()
    job.refresh_from_db()
    assert (job.status, job.changed) == (BulkStatus.DONE, 1)
    assert bulk.run(job.pk) == 0  # a second delivery: claimed already, nothing happens
    assert Decision.objects.filter(bulk=job).count() == 1


def test_the_progress_page_works_without_javascript(client, corpus, editor):
    login(client, editor)
    response = post_bulk(client, {"action": "confirm", "doc": selected(corpus["river"])},
                         htmx_target=None)
    job = BulkAction.objects.get()
    assert response["Location"] == f"/bulk/{job.pk}/"
    html = client.get(response["Location"]).content.decode()
    assert '<meta http-equiv="refresh" content="2">' in html  # queued: the page reloads
    assert "0 of 1 clusters" in html and 'href="/clusters/"' in html
    bulk.run(job.pk)
    html = client.get(response["Location"]).content.decode()
    assert "http-equiv" not in html and "1 cluster confirmed" in html



class WorkerDied(BaseException):
    """A worker's death as the job sees it: nothing after it runs, no except clause."""


def test_a_bulk_job_whose_worker_died_is_resumed_by_the_watchdog_and_loses_nothing(
        corpus, editor, monkeypatch, settings, django_capture_on_commit_callbacks):
    from datetime import timedelta

    from django.utils import timezone

    from articles.ingest import watchdog

    docs = [corpus[k] for k in AUTO]
    job = bulk.start(editor, "confirm", [(d.pk, d.version) for d in docs])
    decide, calls = bulk._decide_one, []

    def dies_after_the_second(action, doc_pk, version):
        calls.append(doc_pk)
        skip = decide(action, doc_pk, version)
        if len(calls) == 2:  # the second cluster is decided; its progress is never written
            raise WorkerDied
        return skip

    monkeypatch.setattr(bulk, "_decide_one", dies_after_the_second)
    with pytest.raises(WorkerDied):
        bulk.run(job.pk)
    monkeypatch.setattr(bulk, "_decide_one", decide)
    job.refresh_from_db()
    assert (job.status, job.processed, job.changed) == (BulkStatus.RUNNING, 1, 1)
    assert watchdog.resume_bulk_actions() == 0  # not silent for long enough yet
    later = timezone.now() + timedelta(seconds=settings.BULK_STALE_SECONDS + 1)
    with django_capture_on_commit_callbacks(execute=True):  # as the commit would
        assert watchdog.resume_bulk_actions(now=later) == 1
    job.refresh_from_db()
    assert job.status == BulkStatus.QUEUED
    assert watchdog.resume_bulk_actions(now=later) == 0  # queued again once
    _run_worker()  # the queued job, through RQ
    job.refresh_from_db()
    assert (job.status, job.processed, job.changed, job.skipped) == (
        BulkStatus.DONE, 4, 4, [])
    assert all(Doc.objects.get(pk=d.pk).status == DocStatus.CONFIRMED for d in docs)
    assert job.decisions.count() == 4  # the second cluster decided once, not twice


def test_a_job_the_watchdog_handed_on_stops_at_its_next_step(corpus, editor):
    docs = [corpus[k] for k in AUTO]
    job = bulk.start(editor, "confirm", [(d.pk, d.version) for d in docs])
    seen = []

    def handed_on(action, doc_pk, version):
        seen.append(doc_pk)
        # meanwhile the watchdog gave the action to another job, which claimed it
        BulkAction.objects.filter(pk=action.pk).update(heartbeat_at=timezone_now())
        return None

    import articles.editor.bulk as module

    original = module._decide_one
    module._decide_one = handed_on
    try:
        assert bulk.run(job.pk) == 1
    finally:
        module._decide_one = original
    assert len(seen) == 1  # stopped after the step whose progress it could not write
    job.refresh_from_db()
    assert (job.status, job.processed) == (BulkStatus.RUNNING, 0)


def timezone_now():
    from django.utils import timezone

    return timezone.now()
