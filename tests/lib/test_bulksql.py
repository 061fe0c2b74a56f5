"""The ingest loop's one-statement writes (articles/lib/bulksql.py) on the real database."""

from __future__ import annotations

import pytest
from django.utils import timezone

from articles.lib import bulksql
from articles.models import Article, Doc

# dialect: raw SQL per dialect (placeholders, CASE updates, inserted ids)
pytestmark = [pytest.mark.django_db, pytest.mark.dialect]


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


def test_locked_docs_read_what_the_orm_reads() -> None:
    from articles.ingest.assign import _locked_docs

    docs = _docs(3)
    rep = Article.objects.create(nid="rep", url="https://e.example/r", content="正文", hotness=7.5,
                                 title_fp=(1 << 64) - 1, content_fp=1 << 63, features=b"\x00\xff")
    Doc.objects.filter(pk=docs[0].pk).update(representative=rep, representative_pinned=True)
    got = _locked_docs([docs[0].doc_id, docs[1].doc_id, "missing"])
    assert sorted(got) == [docs[0].doc_id, docs[1].doc_id]
    orm = {d.doc_id: d for d in Doc.objects.select_related("representative")
           .filter(doc_id__in=got)}
    for key, doc in got.items():
        for field in Doc._meta.concrete_fields:  # converted like the ORM: aware datetimes...
            assert getattr(doc, field.attname) == getattr(orm[key], field.attname), field.name
        assert doc._state.adding is False
    first = got[docs[0].doc_id]
    assert first.representative_pinned is True
    assert first.representative.pk == rep.pk and first.representative.hotness == 7.5
    assert first.representative.title_fp == (1 << 64) - 1  # unsigned 64-bit converter
    assert first.representative.received_at == Article.objects.get(pk=rep.pk).received_at
    # the text is deferred (read on access), not loaded with the row
    assert "content" in first.representative.get_deferred_fields()
    assert first.representative.content == "正文"
    assert got[docs[1].doc_id].representative is None  # outer join, no representative


def test_load_candidates_gives_members_and_their_docs_anchors() -> None:
    from articles.index.candidates import load_candidates
    from fingerprints.rule import extract

    feats = extract("标题", "正文内容" * 20).to_bytes()
    docs = _docs(2)
    anchor = Article.objects.create(nid="a", url="https://e.example/a", content="x",
                                    features=feats, status="done", doc=docs[0])
    member = Article.objects.create(nid="m", url="https://e.example/m", content="x",
                                    features=feats, status="done", doc=docs[0])
    queued = Article.objects.create(nid="q", url="https://e.example/q", content="x",
                                    features=feats, status="queued", doc=docs[1])
    moved = Article.objects.create(nid="v", url="https://e.example/v", content="x",
                                   features=feats, status="done", doc=docs[1])
    Doc.objects.filter(pk=docs[0].pk).update(anchor=anchor)
    Doc.objects.filter(pk=docs[1].pk).update(anchor=member)  # an anchor now in another doc
    got = {(c.article_id, c.doc_key, c.is_anchor) for c in load_candidates(
        [member.pk, queued.pk, moved.pk, 10**9])}
    assert got == {
        (member.pk, docs[0].doc_id, False),
        (anchor.pk, docs[0].doc_id, True),  # the anchor of the member's doc, not asked for
        (moved.pk, docs[1].doc_id, False),  # its doc's anchor is `member`, listed once
    }
    assert load_candidates([]) == []
