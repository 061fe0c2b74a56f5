"""The pictures of a cluster's members as the cluster page shows them, and which of them
another member shares: the same picture (within the engine's picture distance) seen in
two articles is a strong hint that they are one story.

One query for all the members of a page, without the thumbnails' bytes; the pairs are
compared at once with NumPy (50 members of 8 pictures are 80,000 pairs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from django.db.models.functions import Length

from articles.images.thumbs import thumbnail_size
from articles.models import Article, ArticleImage, ImageStatus


def pictures_of(article_ids: Iterable[int]) -> dict[int, list[ArticleImage]]:
    """The pictures of these articles in their order (article id -> pictures), without the
    thumbnails' bytes: each row has ``thumbnail_bytes``, the thumbnail's length."""
    pictures: dict[int, list[ArticleImage]] = {}
    rows = (ArticleImage.objects.filter(article_id__in=list(article_ids)).defer("thumbnail")
            .annotate(thumbnail_bytes=Length("thumbnail")).order_by("article_id", "position"))
    for image in rows:
        pictures.setdefault(image.article_id, []).append(image)
    return pictures


def shared_positions(pictures: Mapping[int, Sequence[ArticleImage]],
                     max_bits: int) -> dict[int, dict[int, set[int]]]:
    """For each article, the positions of its pictures that another of these articles
    also shows — pHashes at most ``max_bits`` apart — with those other articles' ids:
    article id -> position -> other article ids. Unread pictures share nothing."""
    if max_bits < 0:
        raise ValueError(f"max_bits must be 0 or more, not {max_bits}")
    # each picture by all its hashes: its own, its mirror image's (a mirrored copy is
    # shared too) and its parts' (a copy with a caption strip over it, a cropped copy)
    read = [(article_id, image.position, value)
            for article_id, images in pictures.items() for image in images
            if image.status == ImageStatus.READ and image.phash is not None
            for value in image.hashes()]
    if len(read) < 2:
        return {}
    owners = np.array([article_id for article_id, _position, _value in read], dtype=np.int64)
    hashes = np.array([value for _article, _position, value in read], dtype=np.uint64)
    distances = np.bitwise_count(hashes[:, None] ^ hashes[None, :])
    close = (distances <= max_bits) & (owners[:, None] != owners[None, :])
    shared: dict[int, dict[int, set[int]]] = {}
    for i, j in zip(*np.nonzero(close), strict=True):
        article_id, position, _value = read[i]
        shared.setdefault(article_id, {}).setdefault(position, set()).add(int(owners[j]))
    return shared


@dataclass
class MemberPicture:
    """One picture of a member on the cluster page."""

    image: ArticleImage
    shared_with: list[str] = field(default_factory=list)  # the other members' nids

    @property
    def has_thumbnail(self) -> bool:
        return bool(getattr(self.image, "thumbnail_bytes", 0))

    @cached_property
    def size(self) -> tuple[int, int] | None:
        """The thumbnail's width and height (the ``<img>`` attributes)."""
        if not self.has_thumbnail or not self.image.width or not self.image.height:
            return None
        return thumbnail_size(self.image.width, self.image.height)


def member_pictures(members: Sequence[Article], max_bits: int
                    ) -> dict[int, list[MemberPicture]]:
    """The cluster page's pictures: article id -> its pictures, each with the nids of the
    other members that share it."""
    pictures = pictures_of(member.pk for member in members)
    shared = shared_positions(pictures, max_bits)
    nids = {member.pk: member.nid for member in members}
    shown: dict[int, list[MemberPicture]] = {}
    for article_id, images in pictures.items():
        others = shared.get(article_id, {})
        shown[article_id] = [
            MemberPicture(image, sorted(nids[other] for other in others.get(image.position, ())))
            for image in images]
    return shown
