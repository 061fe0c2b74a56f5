"""MySQL bytes per article, with and without body retention.

    DATABASE_URL=mysql://... REDIS_URL=redis://... .venv/bin/python bench/storage.py \\
        [--corpus xinhua --corpus bdci]

The corpora (real news: Xinhua re-issues, crawled web news) go through the real
ingest path in process (``accept_articles`` then ``process_articles``, 500 articles a
batch, the Redis index on REDIS_URL) into a scratch database ``<name>_bench_storage``
made next to DATABASE_URL's (dropped afterwards). Then the articles are aged past a
one-day retention period and ``clear_old_bodies`` runs to the end. The article table's
InnoDB data + index bytes (``information_schema``, after ``OPTIMIZE TABLE`` so that
freed pages are given back) and the body column's own bytes are printed before and
after, per article, with the share
of articles whose body was cleared (only members that are neither their docId's
representative nor its anchor lose it: the share depends on how many reposts the
stream has). Needs MySQL/MariaDB; nothing is written to the project's own database.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import load_docs, table  # noqa: E402


def table_bytes(connection: object, name: str) -> tuple[int, int]:
    with connection.cursor() as cursor:  # type: ignore[attr-defined]
        for statement in ("OPTIMIZE", "ANALYZE"):  # rebuilt, then statistics read anew
            cursor.execute(f"{statement} TABLE {name}")
            cursor.fetchall()
        cursor.execute("SELECT data_length, index_length FROM information_schema.tables "
                       "WHERE table_schema = DATABASE() AND table_name = %s", [name])
        data, index = cursor.fetchone()
    return int(data), int(index)


def body_column_bytes(connection: object, name: str) -> int:
    with connection.cursor() as cursor:  # type: ignore[attr-defined]
        cursor.execute(f"SELECT COALESCE(SUM(LENGTH(content)), 0) FROM {name}")
        return int(cursor.fetchone()[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", action="append", choices=["xinhua", "bdci", "thucnews"])
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("mysql"):
        print("bench/storage.py measures InnoDB: set DATABASE_URL to a MySQL/MariaDB server",
              file=sys.stderr)
        return 2
    warnings.filterwarnings("ignore")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedupsite.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    from articles.ingest.assign import process_articles
    from articles.ingest.intake import ArticleInput, accept_articles
    from articles.models import Article, EngineSettings
    from articles.representatives.retention import clear_old_bodies

    test_settings = settings.DATABASES["default"].setdefault("TEST", {})
    test_settings["NAME"] = f"{settings.DATABASES['default']['NAME']}_bench_storage"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    rows = []
    try:
        for corpus in args.corpus or ["xinhua", "bdci"]:
            Article.objects.all().delete()
            docs = load_docs(corpus)
            started = time.perf_counter()
            for lo in range(0, len(docs), 500):
                items = [ArticleInput(nid=f"{corpus}-{d.id}",
                                      url=f"https://{corpus}.example/{d.id}",
                                      title=d.title, content=d.content or d.title or "-")
                         for d in docs[lo:lo + 500]]
                accept_articles(items, enqueue=False)
                process_articles([item.nid for item in items], count_attempt=False)
            load_s = time.perf_counter() - started
            n = Article.objects.count()
            table_name = Article._meta.db_table
            data, index = table_bytes(connection, table_name)
            body_bytes = body_column_bytes(connection, table_name)
            body_chars = sum(len(d.content) for d in docs)
            Article.objects.update(received_at=timezone.now() - timedelta(days=2))
            settings_row = EngineSettings.load()
            settings_row.retention_days = 1
            settings_row.save()
            result = clear_old_bodies(batches=None)
            data2, index2 = table_bytes(connection, table_name)
            body_bytes2 = body_column_bytes(connection, table_name)
            settings_row.retention_days = 0
            settings_row.save()
            rows.append([corpus, f"{n:,}", f"{body_chars / n:,.0f}", f"{load_s:.0f}",
                         f"{(data + index) / n:,.0f}", f"{body_bytes / n:,.0f}",
                         f"{result.cleared:,} ({result.cleared / n:.1%})",
                         f"{(data2 + index2) / n:,.0f}", f"{body_bytes2 / n:,.0f}"])
            print(f"  {corpus}: {rows[-1]}", file=sys.stderr, flush=True)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    print("MySQL article table (InnoDB data + indexes, after OPTIMIZE TABLE), per article")
    print(table(["corpus", "articles", "body chars/article", "ingest s",
                 "table bytes/article, every body kept", "of which body column",
                 "bodies cleared", "table bytes/article after retention",
                 "body column after"], rows))
    print("(InnoDB gives pages back in whole extents, so the table figure moves in steps "
          "of about a megabyte; the body column's bytes are exact: SUM(LENGTH(content)).)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
