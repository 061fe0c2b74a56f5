"""Perceptual fingerprints of pictures: a 64-bit pHash (DCT of a 32x32 grey image, the
8x8 lowest frequencies against their median), which fits the same pigeonhole block
index as the texts' SimHash.

:func:`phash` first trims near-uniform borders (white or black padding, letterboxes, a
caption bar of one colour with a line of text on it), so that a padded or captioned copy
hashes like the picture it was made from; ``phash(picture, trim=False)`` is the plain
pHash, bit for bit imagehash's ``phash``. :func:`mirror_phash` is the hash the mirrored
picture would have, for a lookup that also finds mirrored copies.

:func:`picture_hashes` adds the hashes of fixed parts of the (trimmed) picture,
:data:`REGIONS`: its top and bottom 85 % and its centre 90 % and 95 %. A caption strip or a
logo drawn *over* a picture moves its whole hash, but leaves one of those parts as it
was; a copy cropped by 5 or 10 % hashes like the original's centre. Each part is hashed
as a picture of its own, so a part of one picture and the whole of another are compared
like two pictures (docs/images.md, "Regions").

:func:`decode` reads JPEG, PNG, GIF and WebP only (:data:`FORMATS`: Pillow would
otherwise open some twenty formats, TIFF in colour modes nothing here converts among
them) and refuses decompression bombs: a picture of more than :data:`MAX_PIXELS` pixels
(or the caller's lower limit) is not decoded (Pillow's own warning turned into an
error), whatever its file size.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

import numpy as np
from PIL import Image

#: the largest picture decoded (a 10 MB file may announce 10 gigapixels)
MAX_PIXELS = 40_000_000
#: the only formats decoded (Pillow's names)
FORMATS = ("JPEG", "PNG", "GIF", "WEBP")
_SIDE = 32
_KEEP = 8

# Trimming. Seen from one side, the lines (rows or columns) are compared with the
# median grey of the outermost one: a line is *flat* when at least BORDER_FLAT of its
# pixels are within BORDER_TOLERANCE grey levels of it (room for JPEG noise), and may be
# *text on a bar* when at least BORDER_TEXT are. The border is the lines up to the last
# flat one before the first line that is neither, and is trimmed only when it ends at an
# edge (one of the BORDER_STEP lines after it has less than BORDER_EDGE of the border's
# grey): a sky that fades into the picture is no border.
BORDER_TOLERANCE = 16
BORDER_FLAT = 0.95
BORDER_TEXT = 0.6
BORDER_EDGE = 0.5
BORDER_STEP = 4
#: at most this share of the width (height) is trimmed from each side ...
BORDER_MAX_SIDE = 0.3
#: ... and nothing is trimmed when less than this share of a dimension would remain
BORDER_MIN_KEPT = 0.25
#: trimming passes (a pad around a captioned picture takes two)
_TRIM_PASSES = 2
#: the borders are found on a copy at most this many pixels on its longer side
_TRIM_SCAN = 512


class NotAPicture(ValueError):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def decode(data: bytes, max_pixels: int = MAX_PIXELS) -> Image.Image:
    """The picture in ``data``, fully loaded; NotAPicture("decompression_bomb": more than
    ``max_pixels``, or "undecodable": not one of :data:`FORMATS`) when it may not or
    cannot be decoded."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        previous = Image.MAX_IMAGE_PIXELS
        Image.MAX_IMAGE_PIXELS = MAX_PIXELS
        try:
            image = Image.open(io.BytesIO(data), formats=FORMATS)
            if image.width * image.height > max_pixels:
                raise NotAPicture("decompression_bomb")
            image.load()
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            raise NotAPicture("decompression_bomb") from None
        except (OSError, SyntaxError, ValueError) as exc:
            if isinstance(exc, NotAPicture):
                raise
            raise NotAPicture("undecodable") from None
        finally:
            Image.MAX_IMAGE_PIXELS = previous
    return image


def _dct_matrix(n: int) -> np.ndarray:
    k = np.arange(n)[:, None]
    i = np.arange(n)[None, :]
    return np.cos(np.pi * (2 * i + 1) * k / (2 * n))


_DCT = _dct_matrix(_SIDE)


def _flat_run(lines: np.ndarray, limit: int) -> int:
    """How many of ``lines`` (the outermost first, one line a row), at most ``limit``,
    are a flat band of one grey (with text on it) that ends at an edge."""
    band = lines[:limit + BORDER_STEP].astype(np.int16)
    if len(band) <= 1:
        return 0
    near = (np.abs(band - int(np.median(band[0]))) <= BORDER_TOLERANCE).mean(axis=1)
    if near[0] < BORDER_FLAT:
        return 0
    stop = np.flatnonzero(near < BORDER_TEXT)
    if not stop.size or stop[0] > limit:
        return 0  # no end in reach: a flat picture, not a border
    end = int(np.flatnonzero(near[:stop[0]] >= BORDER_FLAT)[-1]) + 1
    # the lines after the band against the band's last line: a sky fading into the
    # picture changes a little from line to line, a border ends at once
    after = np.abs(band[end:end + BORDER_STEP] - int(np.median(band[end - 1])))
    if (after <= BORDER_TOLERANCE).mean(axis=1).min() >= BORDER_EDGE:
        return 0
    return end


def _border(lines: np.ndarray, limit: int) -> int:
    """How many of ``lines`` (the outermost first) are border: flat bands one after
    the other (a pad around a caption bar, a letterbox's soft edge), at most ``limit``."""
    total = 0
    while total < limit:
        run = _flat_run(lines[total:], limit - total)
        if not run:
            break
        total += run
    return total


def content_box(grey: Image.Image) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) of ``grey`` (mode "L") without its near-uniform
    borders; the whole picture when it has none, or when too little would remain."""
    width, height = grey.size
    factor = max(1, -(-max(width, height) // _TRIM_SCAN))
    scan = grey.reduce(factor) if factor > 1 else grey
    pixels = np.asarray(scan)
    h, w = pixels.shape
    left, top, right, bottom = 0, 0, w, h
    for _ in range(_TRIM_PASSES):  # a pad around a caption bar, a letterbox around a pad
        cut = pixels[top:bottom, left:right]
        ch, cw = cut.shape
        if ch < 3 or cw < 3:
            break
        limit_y, limit_x = max(1, int(ch * BORDER_MAX_SIDE)), max(1, int(cw * BORDER_MAX_SIDE))
        sides = (_border(cut, limit_y), _border(cut[::-1], limit_y),
                 _border(cut.T, limit_x), _border(cut.T[::-1], limit_x))
        if not any(sides):
            break
        top, bottom = top + sides[0], bottom - sides[1]
        left, right = left + sides[2], right - sides[3]
    if right - left < w * BORDER_MIN_KEPT or bottom - top < h * BORDER_MIN_KEPT:
        return 0, 0, width, height
    return (min(width, left * factor), min(height, top * factor),
            min(width, right * factor), min(height, bottom * factor))


def _thumbnail(image: Image.Image, trim: bool) -> np.ndarray:
    grey = image.convert("L")
    if trim:
        box = content_box(grey)
        if box != (0, 0, grey.width, grey.height):
            grey = grey.crop(box)
    return _small(grey)


def _small(grey: Image.Image, reducing_gap: float | None = None) -> np.ndarray:
    small = grey.resize((_SIDE, _SIDE), Image.Resampling.LANCZOS, reducing_gap=reducing_gap)
    return np.asarray(small, dtype=np.float64)


def _hash(pixels: np.ndarray) -> int:
    low = (_DCT @ pixels @ _DCT.T)[:_KEEP, :_KEEP]
    bits = (low > np.median(low)).flatten()
    value = 0
    for bit in bits:
        value = (value << 1) | int(bit)
    return value


def phash(image: Image.Image, trim: bool = True) -> int:
    """The picture's 64-bit perceptual hash (unsigned), of the picture without its
    near-uniform borders (``trim=False``: of the whole picture, as imagehash.phash)."""
    return _hash(_thumbnail(image, trim))


def phashes(image: Image.Image, trim: bool = True) -> tuple[int, int]:
    """(:func:`phash`, :func:`mirror_phash`) of the picture, for the price of one."""
    pixels = _thumbnail(image, trim)
    return _hash(pixels), _hash(pixels[:, ::-1])


#: the regions are first reduced by whole factors (a box filter) to at least this many
#: times 32 pixels, then resampled as the whole picture is: four times faster than
#: resampling each region from full size, and the hashes differ from those by 0 bits for
#: 93 of the bench's 112 regions, 2 for 17, 4 for 2 (docs/results/images.md)
_REGION_REDUCING_GAP = 3.0
#: the parts of a picture hashed beside the whole, as (left, top, right, bottom) shares of
#: its trimmed box: the top 85 % (a caption strip, a ticker or a logo over the bottom), the
#: bottom 85 % (a logo or a stamp over the top), the centre 90 % and 95 % (the picture a
#: 10 % or 5 % crop of it keeps; any corner logo within 5 % of the edges)
REGIONS: dict[str, tuple[float, float, float, float]] = {
    "top": (0.0, 0.0, 1.0, 0.85),
    "bottom": (0.0, 0.15, 1.0, 1.0),
    "centre90": (0.05, 0.05, 0.95, 0.95),
    "centre95": (0.025, 0.025, 0.975, 0.975),
}


@dataclass(frozen=True)
class PictureHashes:
    """Every hash the engine keeps of one picture: :func:`phash`, :func:`mirror_phash`
    and one pHash per part of :data:`REGIONS` (in its order)."""

    phash: int
    mirror_phash: int
    regions: tuple[int, ...]

    def all(self) -> tuple[int, ...]:
        """The picture's hashes: two pictures are one when a hash of one is within
        ``picture_bits`` of a hash of the other."""
        return (self.phash, self.mirror_phash, *self.regions)


def picture_hashes(image: Image.Image) -> PictureHashes:
    """The picture's hash, its mirror image's and the hash of each part of
    :data:`REGIONS` of its trimmed box (one grey copy, one trim)."""
    grey = image.convert("L")
    box = content_box(grey)
    if box != (0, 0, grey.width, grey.height):
        grey = grey.crop(box)
    pixels = _small(grey)
    width, height = grey.size
    regions = tuple(
        _hash(_small(grey.crop((round(left * width), round(top * height),
                                max(round(left * width) + 1, round(right * width)),
                                max(round(top * height) + 1, round(bottom * height)))),
                     reducing_gap=_REGION_REDUCING_GAP))
        for left, top, right, bottom in REGIONS.values())
    return PictureHashes(_hash(pixels), _hash(pixels[:, ::-1]), regions)


def mirror_phash(image: Image.Image, trim: bool = True) -> int:
    """The hash of the picture mirrored left to right (looked up besides
    :func:`phash`, it finds mirrored copies)."""
    return phashes(image, trim)[1]
