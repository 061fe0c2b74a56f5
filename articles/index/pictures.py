"""The pictures of articles as the engine reads them (fingerprints/rule/picture_evidence.py):
their hashes from MySQL, and which of them are stock pictures now.

MySQL is the record: ``ArticleImage`` rows hold each read picture's hash; the engine
copies them into ``Features.pictures`` when it decides the article again
(articles/images/jobs.py) or recomputes features (articles/index/reindex.py). Here
(below the write path) so that both the write path and the index builder read them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from django.db.models import Count

from articles.models import ArticleImage, ArticleStatus, ImageStatus
from fingerprints.rule.picture_evidence import stock_among


def read_pictures(article_ids: Iterable[int]) -> dict[int, tuple[int, ...]]:
    """article id -> the sorted, distinct hashes of its pictures that were read."""
    ids = list(article_ids)
    if not ids:
        return {}
    found: dict[int, set[int]] = {}
    for article_id, value in (ArticleImage.objects
                              .filter(article_id__in=ids, status=ImageStatus.READ,
                                      phash__isnull=False)
                              .values_list("article_id", "phash")):
        found.setdefault(article_id, set()).add(int(value or 0))
    return {article_id: tuple(sorted(values)) for article_id, values in found.items()}


def stock_pictures(hashes: Iterable[int], exclude: Collection[int], min_docs: int
                   ) -> frozenset[int]:
    """The hashes among ``hashes`` seen in at least ``min_docs`` stories (docIds) of
    articles other than ``exclude``: stock pictures (0 turns stock off)."""
    wanted = sorted(set(hashes))
    if not min_docs or not wanted:
        return frozenset()
    rows = (ArticleImage.objects
            .filter(phash__in=wanted, status=ImageStatus.READ,
                    article__status=ArticleStatus.DONE, article__doc__isnull=False)
            .exclude(article_id__in=list(exclude))
            .values("phash").annotate(stories=Count("article__doc", distinct=True))
            .values_list("phash", "stories"))
    return stock_among(wanted, {int(h or 0): n for h, n in rows}, min_docs)
