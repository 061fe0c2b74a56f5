"""The pictures of articles: stored with the article, fetched by jobs on their own RQ
queue (``images``: slow picture hosts never hold up the text queue, which workers serve
first), fingerprinted and reported per picture. A picture that fails never fails its
article. The same URL is fetched once: a picture read before gives its fingerprint to
every later article that names it.

Once an article's pictures are read it is decided again with them
(articles/ingest/redecide.py); docs/api.md, docs/engine.md ("Pictures").
"""

from __future__ import annotations

import hashlib
import logging

from django.db import transaction
from django.utils import timezone
from PIL import Image

from articles.images.fetch import Refused, fetch
from articles.images.thumbs import make_thumbnail
from articles.models import Article, ArticleImage, ImageStatus
from dedupsite import metrics, redis_store
from fingerprints.rule.picture import NotAPicture, decode, picture_hashes

log = logging.getLogger(__name__)

# named, not imported: the write path (articles.ingest) queues this module's jobs
REDECIDE = "articles.ingest.redecide.on_pictures_read"


def attach(pictures: dict[str, tuple[str, ...]]) -> None:
    """Record each article's picture URLs (nid -> URLs, in order) and queue their fetch;
    an article whose list is unchanged is left alone, a changed list replaces the old."""
    if not pictures:
        return
    ids = dict(Article.objects.filter(nid__in=list(pictures)).values_list("nid", "pk"))
    have: dict[int, list[str]] = {}
    for article_id, url in (ArticleImage.objects.filter(article_id__in=ids.values())
                            .order_by("position").values_list("article_id", "url")):
        have.setdefault(article_id, []).append(url)
    changed = []
    for nid, urls in pictures.items():
        found = ids.get(nid)
        if found is None or have.get(found, []) == list(urls):
            continue
        article_id = int(found)
        with transaction.atomic():
            ArticleImage.objects.filter(article_id=article_id).delete()
            ArticleImage.objects.bulk_create(
                ArticleImage(article_id=article_id, position=n, url=url,
                             url_digest=ArticleImage.digest(url))
                for n, url in enumerate(urls))
        if urls:
            changed.append(article_id)
    for article_id in changed:
        redis_store.queue("images").enqueue(fetch_pictures, article_id)


def fetch_pictures(article_id: int) -> int:
    """Fetch and fingerprint the article's queued pictures; return how many were read."""
    read = 0
    for image in ArticleImage.objects.filter(article_id=article_id,
                                             status=ImageStatus.QUEUED).order_by("position"):
        outcome = _read(image)
        metrics.inc("dedupsite_images_fetched_total", outcome=outcome)
        read += outcome in ("read", "known", "known_bytes")
    if read:  # the pictures are evidence now: the article is decided again with them,
        # by a text worker (the ingest queue, behind the article's own text job)
        redis_store.queue("ingest").enqueue(REDECIDE, article_id)
    return read


def _read(image: ArticleImage) -> str:
    known = ArticleImage.read_at(image.url).exclude(pk=image.pk).first()
    if known is not None:  # fetched for another article: the same picture
        _done(image, known.final_url, known.content_hash, _hashes_of(known),
              known.width, known.height, bytes(known.thumbnail))
        return "known"
    try:
        fetched = fetch(image.url)
        digest = hashlib.md5(fetched.data, usedforsecurity=False).hexdigest()
        same = (ArticleImage.objects.filter(content_hash=digest, status=ImageStatus.READ)
                .exclude(pk=image.pk).first())
        if same is not None:  # the same bytes under another URL: read once
            _done(image, fetched.url, digest, _hashes_of(same), same.width,
                  same.height, bytes(same.thumbnail))
            return "known_bytes"
        picture = decode(fetched.data)
    except (Refused, NotAPicture) as exc:
        image.status, image.reason = ImageStatus.FAILED, exc.reason[:64]
        image.fetched_at = timezone.now()
        image.save(update_fields=["status", "reason", "fetched_at"])
        return exc.reason
    _done(image, fetched.url, digest, picture_hashes(picture).all(), picture.width, picture.height,
          _thumbnail(picture, image))
    return "read"


def _thumbnail(picture: Image.Image, image: ArticleImage) -> bytes:
    """The picture's thumbnail, or b"" when it cannot be made: the picture is read and
    fingerprinted all the same (the cluster page shows it without a preview)."""
    try:
        return make_thumbnail(picture)
    except (OSError, ValueError, SyntaxError) as exc:  # Pillow's errors on odd files
        log.warning("no thumbnail for picture %s (%s): %s", image.pk, image.url[:200], exc)
        return b""


def _hashes_of(known: ArticleImage) -> tuple[int | None, ...]:
    """The hashes of a picture read before, column by column (None: not kept then)."""
    return tuple(getattr(known, column) for column in ArticleImage.HASH_COLUMNS)


def _done(image: ArticleImage, final_url: str, content_hash: str,
          hashes: tuple[int | None, ...], width: int | None, height: int | None,
          thumbnail: bytes = b"") -> None:
    """Record a read picture: ``hashes`` in the order of ``ArticleImage.HASH_COLUMNS`` (its
    pHash, its mirror image's, its parts')."""
    image.status, image.reason = ImageStatus.READ, ""
    image.final_url, image.content_hash = final_url[:2048], content_hash
    for column, value in zip(ArticleImage.HASH_COLUMNS, hashes, strict=True):
        setattr(image, column, value)
    image.width, image.height, image.fetched_at = width, height, timezone.now()
    image.url_digest, image.thumbnail = ArticleImage.digest(image.url), thumbnail
    image.save(update_fields=["status", "reason", "final_url", "content_hash",
                              *ArticleImage.HASH_COLUMNS, "width", "height", "fetched_at",
                              "url_digest", "thumbnail"])
