"""The ingest loop's one-statement writes (articles/bulksql.py) on the real database."""

from __future__ import annotations

import pytest
from django.utils import timezone

from articles import bulksql
from articles.models import Article, Doc

pytestmark = pytest.mark.django_db


def _docs(n: int) -> list[Doc]:
    now = timezone.now()
    stamp = bulksql.prep(Doc, "first_seen", now)
    bulksql.insert_rows(
        Doc, ("doc_id", "status", "representative_pinned", "rep_version", "size", "first_seen",
              "last_seen", "created_at", "updated_at"),
        [(f"d{i:05d}", "auto", False, 0, i, stamp, stamp, stamp, stamp) for i in range(n)])
    return list(Doc.objects.order_by("doc_id"))


def test_insert_rows_writes_every_row_in_chunks() -> None:
    docs = _docs(bulksql.CHUNK * 2 + 7)
    assert len(docs) == bulksql.CHUNK * 2 + 7
    assert [d.size for d in docs[:3]] == [0, 1, 2]


def test_update_rows_sets_per_row_values_increments_and_constants() -> None:
    docs = _docs(bulksql.CHUNK + 30)  # more rows than one statement takes
    article = Article.objects.create(nid="n1", url="https://e.example/1", content="x")
    rows = [(d.pk, (10, article.pk if i % 2 else None, 1)) for i, d in enumerate(docs)]
    rows = rows[:-5]  # the last five are left alone
    bulksql.update_rows(Doc, ("size", "representative", "rep_version"), rows,
                        increments=("size", "rep_version"), constants={"status": "confirmed"})
    after = list(Doc.objects.order_by("doc_id"))
    for i, doc in enumerate(after[:-5]):
        assert (doc.size, doc.rep_version, doc.status) == (i + 10, 1, "confirmed")
        assert doc.representative_id == (article.pk if i % 2 else None)
    assert all(d.status == "auto" and d.rep_version == 0 for d in after[-5:])


def test_update_rows_round_trips_unsigned_64_bit_values_and_bytes() -> None:
    a = Article.objects.create(nid="n1", url="https://e.example/1", content="x")
    b = Article.objects.create(nid="n2", url="https://e.example/2", content="y")
    big = (1 << 64) - 3
    bulksql.update_rows(Article, ("content_fp", "features"), [
        (a.pk, (bulksql.prep(Article, "content_fp", big), b"\x00\xff" * 300)),
        (b.pk, (bulksql.prep(Article, "content_fp", 5), b"")),
    ])
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.content_fp, bytes(a.features)) == (big, b"\x00\xff" * 300)
    assert (b.content_fp, bytes(b.features)) == (5, b"")


def test_insert_objects_writes_what_bulk_create_would() -> None:
    from articles.models import ArticleStatus

    when = timezone.now()
    objs = [Article(nid=f"n{i}", url=f"https://e.example/{i}", url_hash=(1 << 64) - 1 - i,
                    content="正文", status=ArticleStatus.QUEUED, published_at=when)
            for i in range(3)]
    bulksql.insert_objects(Article, objs)
    stored = list(Article.objects.order_by("nid"))
    assert [a.nid for a in stored] == ["n0", "n1", "n2"]
    assert [a.url_hash for a in stored] == [(1 << 64) - 1, (1 << 64) - 2, (1 << 64) - 3]
    assert all(a.status == "queued" and a.published_at == when and a.title == ""
               and a.received_at is not None and a.doc_id is None for a in stored)
