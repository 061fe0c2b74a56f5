"""The pictures of articles as the engine reads them (fingerprints/rule/picture_evidence.py):
their hashes from MySQL, and which of them are stock pictures now.

MySQL is the record: ``ArticleImage`` rows hold each read picture's hash; the engine
copies them into ``Features.pictures`` when it decides the article again
(articles/images/jobs.py) or recomputes features (articles/index/reindex.py). The
images room sits below the index and the write path, so both read them from here.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from articles.models import ArticleImage, ArticleStatus, ImageStatus
from fingerprints.rule.picture_evidence import stock_among


def read_pictures(article_ids: Iterable[int]) -> dict[int, tuple[int, ...]]:
    """article id -> the sorted, distinct hashes of its pictures that were read: each
    picture's pHash, its mirror image's (a mirrored copy's pHash is near it) and its parts'
    (fingerprints/rule/picture.py, REGIONS: a copy with a caption strip or a logo over it,
    or cropped, is near one of them)."""
    ids = list(article_ids)
    if not ids:
        return {}
    found: dict[int, set[int]] = {}
    for article_id, *hashes in (ArticleImage.objects
                                .filter(article_id__in=ids, status=ImageStatus.READ,
                                        phash__isnull=False)
                                .values_list("article_id", *ArticleImage.HASH_COLUMNS)):
        # None: read before the mirror's or the parts' hashes were kept
        found.setdefault(article_id, set()).update(int(h) for h in hashes if h is not None)
    return {article_id: tuple(sorted(values)) for article_id, values in found.items()}


def stock_pictures(hashes: Iterable[int], exclude: Collection[int], min_docs: int
                   ) -> frozenset[int]:
    """The hashes among ``hashes`` seen in at least ``min_docs`` stories (docIds) of
    articles other than ``exclude`` (as any of a picture's hashes: its own, its mirror
    image's, its parts'): stock pictures (0 turns stock off). The hashes of one picture
    are seen in the same stories, so a stock picture's are all stock together."""
    wanted = sorted(set(hashes))
    if not min_docs or not wanted:
        return frozenset()
    read = (ArticleImage.objects
            .filter(status=ImageStatus.READ, article__status=ArticleStatus.DONE,
                    article__doc__isnull=False)
            .exclude(article_id__in=list(exclude)))
    stories: dict[int, set[int]] = {}
    for column in ArticleImage.HASH_COLUMNS:
        for value, doc in (read.filter(**{f"{column}__in": wanted})
                           .values_list(column, "article__doc").distinct()):
            stories.setdefault(int(value or 0), set()).add(doc)
    return stock_among(wanted, {h: len(docs) for h, docs in stories.items()}, min_docs)
