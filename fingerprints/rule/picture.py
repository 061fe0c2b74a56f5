"""Perceptual fingerprints of pictures: a 64-bit pHash (DCT of a 32x32 grey image, the
8x8 lowest frequencies against their median), which fits the same pigeonhole block
index as the texts' SimHash.

:func:`decode` refuses decompression bombs: a picture of more than :data:`MAX_PIXELS`
pixels is not decoded (Pillow's own warning turned into an error), whatever its file
size.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
from PIL import Image

#: the largest picture decoded (a 10 MB file may announce 10 gigapixels)
MAX_PIXELS = 40_000_000
_SIDE = 32
_KEEP = 8


class NotAPicture(ValueError):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def decode(data: bytes) -> Image.Image:
    """The picture in ``data``, fully loaded; NotAPicture("decompression_bomb" or
    "undecodable") when it may not or cannot be decoded."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        previous = Image.MAX_IMAGE_PIXELS
        Image.MAX_IMAGE_PIXELS = MAX_PIXELS
        try:
            image = Image.open(io.BytesIO(data))
            if image.width * image.height > MAX_PIXELS:
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


def phash(image: Image.Image) -> int:
    """The picture's 64-bit perceptual hash (unsigned)."""
    grey = image.convert("L").resize((_SIDE, _SIDE), Image.Resampling.LANCZOS)
    pixels = np.asarray(grey, dtype=np.float64)
    low = (_DCT @ pixels @ _DCT.T)[:_KEEP, :_KEEP]
    bits = (low > np.median(low)).flatten()
    value = 0
    for bit in bits:
        value = (value << 1) | int(bit)
    return value
