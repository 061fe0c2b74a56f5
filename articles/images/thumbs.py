"""Thumbnails of article pictures, made once when a picture is read and served by the
project (articles/images/views.py): the editors' pages never load a crawled URL.

A thumbnail is a baseline JPEG of at most :data:`LONGER_SIDE` pixels on its longer side,
in RGB (transparency laid on white), with no metadata (EXIF, ICC profile, comments:
nothing of the crawled file is copied). The same picture always gives the same bytes.

It shows the picture as decoded, as the pHash sees it: an EXIF orientation is not
applied, so two thumbnails that look alike are alike to the engine, and the stored
``width`` and ``height`` give the thumbnail's size (:func:`thumbnail_size`).
"""

from __future__ import annotations

import io

from PIL import Image

LONGER_SIDE = 160
QUALITY = 80
_BACKGROUND = (255, 255, 255)


def thumbnail_size(width: int, height: int) -> tuple[int, int]:
    """The size of the thumbnail of a ``width`` x ``height`` picture (never enlarged);
    the cluster page's ``width``/``height`` attributes use it without the bytes."""
    if width < 1 or height < 1:
        raise ValueError(f"a picture of {width}x{height} pixels has no thumbnail")
    longer = max(width, height)
    if longer <= LONGER_SIDE:
        return width, height
    scale = LONGER_SIDE / longer
    return max(1, round(width * scale)), max(1, round(height * scale))


def make_thumbnail(picture: Image.Image) -> bytes:
    """The JPEG thumbnail of a decoded picture (its first frame)."""
    if picture.mode not in ("RGB", "RGBA"):
        # palettes (with their transparency), grey, CMYK, 16-bit grey...
        picture = picture.convert("RGBA" if _has_alpha(picture) else "RGB")
    small = picture.resize(thumbnail_size(picture.width, picture.height),
                           Image.Resampling.LANCZOS, reducing_gap=3.0)
    # A new image: nothing of the crawled file's info (EXIF, ICC, comments) comes along.
    canvas = Image.new("RGB", small.size, _BACKGROUND)
    canvas.paste(small, mask=small.getchannel("A") if small.mode == "RGBA" else None)
    out = io.BytesIO()
    canvas.save(out, "JPEG", quality=QUALITY, optimize=True, progressive=False)
    return out.getvalue()


def _has_alpha(picture: Image.Image) -> bool:
    return picture.mode in ("LA", "PA") or "transparency" in picture.info
