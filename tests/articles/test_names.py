"""One word per concept in the product's code (docs/glossary.md): ``doc_id`` is a docId
string; an article's foreign key to its Doc row is read as ``Article.doc_pk``; the
engine's answer is a ``Match``, an editor's act a ``Decision``."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = [p for folder in ("articles", "fingerprints", "dedupsite")
           for p in (ROOT / folder).rglob("*.py") if "migrations" not in p.parts]


def test_no_code_reads_the_foreign_key_of_an_article_as_doc_id() -> None:
    article_fk = re.compile(r"\b(article|articles?\[\w+\]|a|member)\.doc_id\b")
    found = [f"{p.relative_to(ROOT)}:{n}" for p in PRODUCT
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if article_fk.search(line)]
    assert found == []


def test_the_doc_pk_of_an_article_is_its_foreign_key() -> None:
    from articles.models import Article

    assert Article(doc_id=7).doc_pk == 7 and Article().doc_pk is None


def test_the_engine_has_no_decision_and_the_editor_no_match() -> None:
    engine = "\n".join(p.read_text(encoding="utf-8") for p in PRODUCT
                       if "fingerprints" in p.parts)
    assert not re.search(r"\bclass Decision\b|\bDecision\(", engine)
    models = "\n".join(p.read_text(encoding="utf-8")
                       for p in (ROOT / "articles" / "models").glob("*.py"))
    assert "class Article(" in models
    assert not re.search(r"\bclass Match\b", models)
