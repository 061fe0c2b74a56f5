"""spark_dedup --import: the batch result in the database, editor decisions kept."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from articles.batch.importer import ImportReport, plan_targets
from articles.editor.actions import merge_docs, split_article
from articles.models import Article, AuditEntry, Doc, MatchedBy
from fingerprints.batch.replay import make_doc_id

from .conftest import read_mapping
from .corpus import corpus, record


def post(client, auth, item):
    response = client.post("/api/v1/articles", data=json.dumps(item),
                           content_type="application/json", **auth)
    assert response.status_code in (200, 202), response.content


def doc_of(nid: str) -> str:
    return Article.objects.select_related("doc").get(nid=nid).doc.doc_id


@pytest.mark.django_db(transaction=True)
def test_import_keeps_a_split_and_a_merge_and_loads_the_rest(
    client, auth, run_worker, spark_result
) -> None:
    out, _ = spark_result
    for item in corpus():
        if item["nid"] != "museum-repost":  # new in the batch
            post(client, auth, item)
    run_worker()
    assert doc_of("bridge-cut") == doc_of("bridge-1")
    split_article(Article.objects.get(nid="bridge-cut"), None, "not the same story")
    merge_docs(Article.objects.get(nid="stock-13").doc, Article.objects.get(nid="stock-14").doc,
               None, "one bulletin, corrected")
    split_doc = doc_of("bridge-cut")

    call_command("spark_dedup", "--output", str(out), "--import")
    batch = read_mapping(out)
    assert batch["bridge-cut"] == batch["bridge-1"]  # the batch alone would undo the split

    assert doc_of("bridge-cut") == split_doc != doc_of("bridge-1")  # cannot-link kept
    assert doc_of("stock-13") == doc_of("stock-14")  # must-link kept
    untouched = set(batch) - {"bridge-cut", "stock-13", "stock-14"}
    assert {nid: doc_of(nid) for nid in untouched} == {nid: batch[nid] for nid in untouched}
    museum = Doc.objects.get(doc_id=doc_of("museum-1"))
    assert museum.size == 3 and museum.representative.nid == "museum-repost"
    assert museum.anchor.nid == "museum-1"
    assert Article.objects.get(nid="museum-repost").matched_by in {"title", "content"}
    bridge = Doc.objects.get(doc_id=doc_of("bridge-1"))
    assert bridge.size == 3 and bridge.anchor.nid == "bridge-1"
    assert AuditEntry.objects.filter(action="batch_import").exists()

    # The Redis index was rebuilt from the imported rows: a new copy joins online.
    post(client, auth, record("bridge-late", "江汉七桥今天正式通车", corpus()[0]["content"]))
    run_worker()
    assert doc_of("bridge-late") == doc_of("bridge-1")


def test_plan_moves_the_later_unpinned_side_of_a_cannot_link() -> None:
    batch = {"a": (0, "D1"), "b": (1, "D1"), "c": (2, "D1"), "d": (3, "D2")}
    existing = {"a": (10, "D1", False), "b": (11, "D1", False)}
    report = ImportReport()
    target, why = plan_targets(batch, existing, must=[("c", "d")], cannot=[("a", "b")],
                               report=report)
    assert target["a"] == "D1" and target["b"] == make_doc_id("b")
    assert why == {"b": "split", "d": MatchedBy.EDITOR}
    assert target["d"] == "D1"  # must-linked to c: the earliest member's batch doc
    assert report.moved_by_cannot_link == 1 and report.moved_by_must_link == 1


def test_plan_keeps_pinned_articles_and_pulls_their_must_links() -> None:
    batch = {"a": (0, "D1"), "b": (1, "D2")}
    existing = {"a": (10, "OLD", True), "b": (11, "D2", False)}
    report = ImportReport()
    target, _ = plan_targets(batch, existing, must=[("a", "b")], cannot=[], report=report)
    assert target == {"a": "OLD", "b": "OLD"}
    assert report.kept_pinned == 1
