"""An article decided again when its pictures are read (queued on the ingest queue by
articles/images/jobs.py).

An article is decided on its text when it arrives; its pictures are fetched after, on
their own queue. Once they are read, the article is decided again with them
(``Features.pictures``: verify's same-picture and other-picture rules), through the
write path like any article processed again (:func:`articles.ingest.assign.assign`):
it may join a story by its picture, or leave one it joined by a title its pictures
contradict. Never:

* an article an editor placed (pinned) or in a docId an editor confirmed;
* the anchor of a docId with other members (that would split the story it founded);
* an article whose body retention cleared (there is no text to decide on).

Those keep their docId; their pictures are still written into their features and the
picture index, so that later articles find them by picture. An article alone in its
docId that stays alone keeps its docId (``assign`` gives the emptied doc back).
"""

from __future__ import annotations

from dataclasses import replace

from articles.images.hashes import read_pictures, stock_pictures
from articles.index import reindex
from articles.index.candidates import Indexes
from articles.ingest.assign import assign
from articles.models import Article, ArticleStatus, DocStatus
from articles.tuning.state import active_config
from dedupsite import redis_store
from fingerprints.rule.features import Features

LATER_ATTEMPTS = 3  # tries behind a text job that has not run yet


def on_pictures_read(article_id: int, attempt: int = 0) -> str:
    """Decide the article again with its pictures, or only record them; returns what was
    done: ``"decided"``, ``"recorded"``, ``"later"`` or ``"none"`` (nothing to do).

    An article whose text is not decided yet (a picture known from another article is
    read at once, maybe before the text job ran) is tried again from the text's own
    queue, behind its text job, up to :data:`LATER_ATTEMPTS` times."""
    article = (Article.objects.select_related("doc").filter(pk=article_id).first())
    if article is None or article.status == ArticleStatus.FAILED:
        return "none"
    if article.status == ArticleStatus.QUEUED or article.doc is None:
        if attempt >= LATER_ATTEMPTS:
            return "none"  # the text never got decided: the watchdog's business
        redis_store.queue("ingest").enqueue(on_pictures_read, article_id, attempt + 1)
        return "later"
    pictures = read_pictures([article.pk]).get(article.pk, ())
    if not pictures:
        return "none"
    doc = article.doc
    movable = (not article.pinned and doc.status != DocStatus.CONFIRMED
               and article.body_cleared_at is None
               and (doc.size <= 1 or doc.anchor_id != article.pk))
    if movable:
        queued = Article.objects.filter(pk=article.pk, status=ArticleStatus.DONE,
                                        doc=doc).update(status=ArticleStatus.QUEUED)
        if queued:
            assign([article.nid], count_attempt=False)
            return "decided"
        return "none"  # decided again meanwhile (a new body): that decision read them
    _record(article, pictures)
    return "recorded"


def _record(article: Article, pictures: tuple[int, ...]) -> None:
    """Write the pictures into the article's features and the picture index, its
    docId unchanged."""
    if not article.features:
        return
    stored = Features.from_bytes(bytes(article.features))
    Article.objects.filter(pk=article.pk).update(
        features=replace(stored, pictures=pictures).to_bytes())
    generation = reindex.active_generation()
    if generation is None:
        return  # being rebuilt: the rebuild reads the features written above
    config = active_config()
    stock = stock_pictures(pictures, [article.pk], config.boilerplate_min_docs)
    Indexes.open(config, generation).pictures.add_many(
        (article.pk, p) for p in pictures if p not in stock)
