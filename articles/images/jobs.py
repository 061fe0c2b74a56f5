"""The pictures of articles: stored with the article, fetched by jobs on their own RQ
queue (``images``), fingerprinted and reported per picture. A picture that fails never
fails its article. The same URL is fetched once: a picture read before gives its
fingerprint to every later article that names it.

Slow picture hosts never hold up the text. A picture has 15 s in all
(articles/images/fetch.py) and a job :data:`JOB_DEADLINE_S`: it starts a picture only
with a picture's full time left, and queues itself again for the rest. A worker serving
the text queues too (``dedup_worker``'s default) serves them first, and its picture job
gives way to them: when a text job waits, the read in progress stops within half a
second, the picture stays queued and the job goes to the back of the ``images`` queue.
A job that fails is retried once; after that its article's queued pictures fail
(``job_failed``) and the job stays in the failed registry (health, /ops/). A job lost
with its worker (killed) is found by the watchdog (:func:`recover_lost`): queued once
more, then its pictures fail (``job_lost``). No picture stays ``queued`` for ever.

Once an article's pictures are read it is decided again with them
(articles/ingest/redecide.py); docs/api.md, docs/engine.md ("Pictures").
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable

from django.db import transaction
from django.utils import timezone
from PIL import Image
from rq import Retry, get_current_job
from rq.worker import Worker

from articles.images import fetch
from articles.images.thumbs import make_thumbnail
from articles.models import Article, ArticleImage, ImageStatus
from dedupsite import metrics, redis_store
from fingerprints.rule.picture import NotAPicture, decode, picture_hashes

log = logging.getLogger(__name__)

# named, not imported: the write path (articles.ingest) queues this module's jobs
REDECIDE = "articles.ingest.redecide.on_pictures_read"
#: seconds a picture job reads in all (a picture is started only with
#: fetch.PICTURE_DEADLINE_S left; the rest waits for the job queued again)
JOB_DEADLINE_S = 60.0
#: RQ stops a picture job after this many seconds (its own deadline comes well before)
JOB_TIMEOUT_S = 120
#: the queues a worker serves before ``images`` (dedup_worker's order)
TEXT_QUEUES = ("ingest", "push", "default")


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
        enqueue(article_id)


def enqueue(article_id: int) -> None:
    """Queue the job that reads the article's queued pictures (retried once)."""
    redis_store.queue("images").enqueue(fetch_pictures, article_id,
                                        job_timeout=JOB_TIMEOUT_S, retry=Retry(max=1))


def fetch_pictures(article_id: int) -> int:
    """Fetch and fingerprint the article's queued pictures; return how many were read.
    Within :data:`JOB_DEADLINE_S`, giving way to text jobs (the module's docstring)."""
    deadline = time.monotonic() + JOB_DEADLINE_S
    text_waiting = _text_waiting()
    read = 0
    try:
        for image in ArticleImage.objects.filter(
                article_id=article_id, status=ImageStatus.QUEUED).order_by("position"):
            if deadline - time.monotonic() < fetch.PICTURE_DEADLINE_S or text_waiting():
                enqueue(article_id)  # the rest later, behind the text
                break
            outcome = _read(image, text_waiting)
            metrics.inc("dedupsite_images_fetched_total", outcome=outcome)
            read += outcome in ("read", "known", "known_bytes")
            if outcome == "interrupted":
                enqueue(article_id)
                break
    except Exception:
        job = get_current_job()
        if job is None or not job.retries_left:  # the last try: fail, never queued for ever
            fail_queued(article_id, "job_failed")
        raise
    if read:  # the pictures are evidence now: the article is decided again with them,
        # by a text worker (the ingest queue, behind the article's own text job)
        redis_store.queue("ingest").enqueue(REDECIDE, article_id)
    return read


def fail_queued(article_id: int, reason: str) -> int:
    """Mark the article's pictures still queued failed with ``reason``; return how many."""
    failed = ArticleImage.objects.filter(article_id=article_id,
                                         status=ImageStatus.QUEUED).update(
        status=ImageStatus.FAILED, reason=reason, fetched_at=timezone.now())
    if failed:
        log.warning("%s picture(s) of article %s failed: %s", failed, article_id, reason)
        metrics.inc("dedupsite_images_fetched_total", failed, outcome=reason)
    return failed


def _text_waiting() -> Callable[[], bool]:
    """Whether a text job waits on a queue the worker running this job also serves
    (never, for a worker of the ``images`` queue alone, or outside a worker)."""
    job = get_current_job()
    served: list[str] = []
    if job is not None and job.worker_name:
        worker = Worker.find_by_key(Worker.redis_worker_namespace_prefix + job.worker_name,
                                    connection=job.connection)
        served = [name for name in (worker.queue_names() if worker else [])
                  if name in TEXT_QUEUES]
    queues = [redis_store.queue(name) for name in served]
    return lambda: any(queue.count for queue in queues)


def recover_lost(running_for_s: float = 2 * JOB_TIMEOUT_S, limit: int = 1000) -> int:
    """Articles with pictures still queued whose job is gone (its worker killed, Redis
    emptied) or has run for more than ``running_for_s``: queued once more, then failed
    (``job_lost``) the next time. Return how many articles were recovered."""
    held = {int(job.args[0]) for job in redis_store.held_jobs(
        "images", f"{__name__}.fetch_pictures", running_for_s)}
    waiting = (ArticleImage.objects.filter(status=ImageStatus.QUEUED)
               .values_list("article_id", flat=True).distinct()[:limit])
    client = redis_store.client()
    recovered = 0
    for article_id in sorted(set(waiting) - held):
        tries = redis_store.key(f"pictures-lost:{article_id}")
        if client.incr(tries) == 1:
            client.expire(tries, 86400)
            enqueue(article_id)
        else:
            fail_queued(article_id, "job_lost")
            client.delete(tries)
        recovered += 1
    return recovered


def _read(image: ArticleImage, stop: Callable[[], bool]) -> str:
    known = ArticleImage.read_at(image.url).exclude(pk=image.pk).first()
    if known is not None:  # fetched for another article: the same picture
        _done(image, known.final_url, known.content_hash, _hashes_of(known),
              known.width, known.height, bytes(known.thumbnail))
        return "known"
    try:
        fetched = fetch.fetch(image.url, stop=stop)
        digest = hashlib.md5(fetched.data, usedforsecurity=False).hexdigest()
        same = (ArticleImage.objects.filter(content_hash=digest, status=ImageStatus.READ)
                .exclude(pk=image.pk).first())
        if same is not None:  # the same bytes under another URL: read once
            _done(image, fetched.url, digest, _hashes_of(same), same.width,
                  same.height, bytes(same.thumbnail))
            return "known_bytes"
        picture = decode(fetched.data)
    except fetch.Refused as exc:
        if exc.reason == "interrupted":  # a text job waits: this picture stays queued
            return exc.reason
        return _failed(image, exc.reason)
    except NotAPicture as exc:
        return _failed(image, exc.reason)
    _done(image, fetched.url, digest, picture_hashes(picture).all(), picture.width, picture.height,
          _thumbnail(picture, image))
    return "read"


def _failed(image: ArticleImage, reason: str) -> str:
    image.status, image.reason = ImageStatus.FAILED, reason[:64]
    image.fetched_at = timezone.now()
    image.save(update_fields=["status", "reason", "fetched_at"])
    return reason


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
