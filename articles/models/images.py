from __future__ import annotations

import hashlib

from django.db import models
from django.utils.translation import gettext_lazy as _

from articles.fields import UnsignedBigIntegerField


class ImageStatus(models.TextChoices):
    QUEUED = "queued", _("queued")
    READ = "read", _("read")
    FAILED = "failed", _("failed")


class ArticleImage(models.Model):
    """One picture an article carries (``images`` in the API), fetched by its own job
    (articles/images/) and fingerprinted with a 64-bit pHash. A picture that fails never
    fails its article: ``status`` failed and ``reason`` say why."""

    article = models.ForeignKey("Article", on_delete=models.CASCADE, related_name="images")
    position = models.PositiveSmallIntegerField()
    url = models.CharField(max_length=2048)
    status = models.CharField(max_length=8, choices=ImageStatus.choices,
                              default=ImageStatus.QUEUED)
    reason = models.CharField(max_length=64, blank=True, default="")
    final_url = models.CharField(max_length=2048, blank=True, default="")
    content_hash = models.CharField(max_length=32, blank=True, default="")
    phash = UnsignedBigIntegerField(null=True, blank=True)
    # the hash of the picture mirrored left to right: a mirrored copy's phash is near it
    mirror_phash = UnsignedBigIntegerField(null=True, blank=True)
    # the hashes of parts of the picture (fingerprints/rule/picture.py, REGIONS): a copy
    # with a caption strip or a logo drawn over it, or cropped, is near one of them. None:
    # read before they were kept (such a picture is compared by its two hashes above)
    top_phash = UnsignedBigIntegerField(null=True, blank=True)
    bottom_phash = UnsignedBigIntegerField(null=True, blank=True)
    centre90_phash = UnsignedBigIntegerField(null=True, blank=True)
    centre95_phash = UnsignedBigIntegerField(null=True, blank=True)
    width = models.PositiveIntegerField(null=True, blank=True)
    height = models.PositiveIntegerField(null=True, blank=True)
    fetched_at = models.DateTimeField(null=True, blank=True)
    #: MD5 hex of ``url``: the same URL read before is found through this short indexed
    #: column, not the 2048-character ``url``
    url_digest = models.CharField(max_length=32, blank=True, default="")
    #: a JPEG of at most 160 px on its longer side made when the picture is read
    #: (articles/images/thumbs.py): the editors' pages show it, never the crawled URL
    thumbnail = models.BinaryField(blank=True, default=b"")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["article", "position"],
                                               name="articles_image_position")]
        indexes = [
            models.Index(fields=["phash"], name="articles_image_phash"),
            # Stock pictures: the stories a hash was seen in, as any of a picture's hashes
            # (articles/images/hashes.py, stock_pictures)
            models.Index(fields=["mirror_phash"], name="articles_image_mirror"),
            models.Index(fields=["top_phash"], name="articles_image_top"),
            models.Index(fields=["bottom_phash"], name="articles_image_bottom"),
            models.Index(fields=["centre90_phash"], name="articles_image_centre90"),
            models.Index(fields=["centre95_phash"], name="articles_image_centre95"),
            # The picture job: has this URL been read for another article already?
            models.Index(fields=["url_digest"], name="articles_image_url_digest"),
            # ... or these bytes under another URL?
            models.Index(fields=["content_hash"], name="articles_image_content"),
            # The watchdog: which articles still have pictures queued (a lost job's)?
            models.Index(fields=["status", "article"], name="articles_image_status"),
        ]

    #: the columns of :data:`fingerprints.rule.picture.REGIONS`' hashes, in its order
    REGION_COLUMNS = ("top_phash", "bottom_phash", "centre90_phash", "centre95_phash")
    #: every hash column: two pictures are one when a hash of one is near one of the other
    HASH_COLUMNS = ("phash", "mirror_phash", *REGION_COLUMNS)

    def hashes(self) -> tuple[int, ...]:
        """The picture's hashes that were kept (:data:`HASH_COLUMNS`, None left out)."""
        return tuple(int(v) for v in (getattr(self, c) for c in self.HASH_COLUMNS)
                     if v is not None)

    @classmethod
    def read_at(cls, url: str) -> models.QuerySet[ArticleImage]:
        """The pictures read from ``url`` (for any article): the indexed digest finds
        them, the URL itself settles a collision."""
        return cls.objects.filter(url_digest=cls.digest(url), url=url,
                                  status=ImageStatus.READ)

    @staticmethod
    def digest(url: str) -> str:
        """The ``url_digest`` of ``url``."""
        return hashlib.md5(url.encode("utf-8"), usedforsecurity=False).hexdigest()
