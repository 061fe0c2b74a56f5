"""The picture hash itself (fingerprints/rule/picture.py), on pictures drawn here: the
plain pHash is imagehash's, bit for bit; the trimmed one sees through padding,
letterboxes and caption bars and leaves pictures without borders alone; pictures with
nothing to trim (one colour, one pixel) hash without error. With the hashes of its
regions kept beside it, a picture with a strip or a logo drawn over it, or cropped, stays
the same picture, and two shots of one scene stay two."""

from __future__ import annotations

import io
from collections.abc import Callable

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageOps

from fingerprints.rule import EngineConfig
from fingerprints.rule.picture import (
    REGIONS,
    content_box,
    decode,
    mirror_phash,
    phash,
    phashes,
    picture_hashes,
)


def hamming(a: int, b: int) -> int:
    return (a ^ b).bit_count()


def scene(seed: int, size: tuple[int, int] = (640, 427)) -> Image.Image:
    """A photo-like picture whose content reaches every edge: smooth colour fields,
    a few shapes, fine noise."""
    rng = np.random.default_rng(seed)
    w, h = size
    y, x = np.mgrid[0:h, 0:w] / max(w, h)
    pixels = np.zeros((h, w, 3))
    for _ in range(5):
        fx, fy, phase = rng.uniform(0.5, 4, 2).tolist() + [rng.uniform(0, 6.3)]
        pixels += np.cos(2 * np.pi * (fx * x + fy * y) + phase)[..., None] * rng.uniform(
            10, 40, 3)
    pixels += 128
    out = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(out)
    for _ in range(6):
        x0, y0 = int(rng.uniform(-w / 8, w * 0.9)), int(rng.uniform(-h / 8, h * 0.9))
        x1, y1 = x0 + int(rng.uniform(w / 16, w / 2)), y0 + int(rng.uniform(h / 16, h / 2))
        draw.ellipse((x0, y0, x1, y1), fill=tuple(int(c) for c in rng.uniform(0, 255, 3)))
    noisy = np.asarray(out, dtype=np.float64) + rng.normal(0, 4, (h, w, 3))
    return Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8))


def as_jpeg(image: Image.Image, quality: int = 90) -> Image.Image:
    out = io.BytesIO()
    image.convert("RGB").save(out, "JPEG", quality=quality)
    return decode(out.getvalue())


# -- the plain hash is imagehash's --------------------------------------------------------

def _dct_by_fft(values: np.ndarray) -> np.ndarray:
    """Unnormalised DCT-II along the last axis (scipy.fftpack.dct's, which imagehash
    uses), computed through an FFT of the mirrored sequence: another road than the
    cosine matrix of fingerprints/rule/picture.py."""
    n = values.shape[-1]
    mirrored = np.concatenate([values, values[..., ::-1]], axis=-1)
    spectrum = np.fft.fft(mirrored, axis=-1)[..., :n]
    return np.real(spectrum * np.exp(-1j * np.pi * np.arange(n) / (2 * n)))


def reference_phash(image: Image.Image) -> int:
    """imagehash.phash (4.3), step by step: grey, 32x32 Lanczos, DCT of the columns then
    of the rows, the 8x8 lowest frequencies against their median, row by row."""
    pixels = np.asarray(image.convert("L").resize((32, 32), Image.Resampling.LANCZOS),
                        dtype=np.float64)
    dct = _dct_by_fft(_dct_by_fft(pixels.T).T)
    low = dct[:8, :8]
    return int("".join("1" if bit else "0" for bit in (low > np.median(low)).flatten()), 2)


@pytest.mark.parametrize("seed", range(8))
def test_the_plain_hash_is_imagehash_phash_bit_for_bit(seed):
    size = [(640, 427), (300, 420), (97, 33), (1024, 768)][seed % 4]
    picture = as_jpeg(scene(seed, size))
    assert phash(picture, trim=False) == reference_phash(picture)
    assert phash(picture.convert("RGBA"), trim=False) == reference_phash(picture)


def test_the_plain_hash_of_a_fixed_picture_is_the_one_imagehash_gave():
    # imagehash 4.3.2 (Pillow 13), str(imagehash.phash(picture)) for this very picture
    picture = Image.fromarray(
        (np.add.outer(np.arange(48) * 5, np.arange(64) * 3) % 256).astype(np.uint8))
    assert f"{phash(picture, trim=False):016x}" == f"{reference_phash(picture):016x}"
    assert f"{phash(picture, trim=False):016x}" == IMAGEHASH_OF_FIXED_PICTURE


IMAGEHASH_OF_FIXED_PICTURE = "c0973a4b5a730de9"


# -- trimming ----------------------------------------------------------------------------

def pad(image: Image.Image, share: float, fill: tuple[int, int, int]) -> Image.Image:
    w, h = image.size
    return ImageOps.expand(image, border=(int(w * share / 2), int(h * share / 2)), fill=fill)


def letterbox(image: Image.Image) -> Image.Image:
    """Into a taller frame with black bars above and below (an eighth of the height
    each)."""
    w, h = image.size
    frame = Image.new("RGB", (w, h + h // 4), (0, 0, 0))
    frame.paste(image, (0, (frame.height - h) // 2))
    return frame


def caption(image: Image.Image, size: int) -> Image.Image:
    w, h = image.size
    bar = int(h * 0.12)
    out = ImageOps.expand(image, border=(0, 0, 0, bar), fill=(25, 25, 60))
    draw = ImageDraw.Draw(out)
    draw.text((12, h + (bar - size) // 2), "Photo: agency / 图片来源", fill=(240, 240, 240),
              font_size=size)
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("edit", ["white pad 10 %", "white pad 20 %", "black pad 10 %",
                                  "letterbox", "caption bar", "large caption",
                                  "pad and caption"])
def test_a_padded_or_captioned_copy_hashes_like_the_original(seed, edit):
    original = scene(seed)
    copy = {
        "white pad 10 %": lambda: pad(original, 0.10, (255, 255, 255)),
        "white pad 20 %": lambda: pad(original, 0.20, (255, 255, 255)),
        "black pad 10 %": lambda: pad(original, 0.10, (0, 0, 0)),
        "letterbox": lambda: letterbox(original),
        "caption bar": lambda: caption(original, 11),
        "large caption": lambda: caption(original, 24),
        "pad and caption": lambda: pad(caption(original, 14), 0.10, (255, 255, 255)),
    }[edit]()
    before, after = phash(as_jpeg(original)), phash(as_jpeg(copy))
    assert hamming(before, after) <= 4
    plain = hamming(phash(as_jpeg(original), trim=False), phash(as_jpeg(copy), trim=False))
    assert hamming(before, after) <= plain  # never worse than without trimming


def test_a_picture_without_borders_is_not_trimmed():
    for seed in range(6):
        picture = as_jpeg(scene(seed), quality=40)
        grey = picture.convert("L")
        assert content_box(grey) == (0, 0, *grey.size)
        assert phash(picture) == phash(picture, trim=False)


def test_a_sky_that_fades_into_the_picture_is_not_a_border():
    w, h = 640, 427
    sky = np.linspace(200, 150, h // 3)[:, None] * np.ones((1, w))
    ground = np.asarray(scene(3, (w, h - h // 3)).convert("L"), dtype=np.float64)
    # the sky meets the ground through a soft horizon band
    blend = np.linspace(0, 1, 30)[:, None]
    ground[:30] = ground[:30] * blend + sky[-1] * (1 - blend)
    picture = Image.fromarray(np.vstack([sky, ground]).astype(np.uint8))
    assert content_box(picture) == (0, 0, w, h)


def test_the_trimmed_box_of_a_padded_picture_is_the_picture():
    original = scene(5, (600, 400))
    padded = ImageOps.expand(original, border=(40, 30, 40, 30), fill=(255, 255, 255))
    left, top, right, bottom = content_box(as_jpeg(padded).convert("L"))
    assert abs(left - 40) <= 4 and abs(top - 30) <= 4
    assert abs(right - 640) <= 4 and abs(bottom - 430) <= 4


@pytest.mark.parametrize("picture", [
    Image.new("L", (200, 150), 128),
    Image.new("RGB", (640, 480), (255, 255, 255)),
    Image.new("RGB", (1, 1), (10, 20, 30)),
    Image.new("L", (2, 3), 0),
    Image.new("RGBA", (50, 40), (0, 0, 0, 0)),
    Image.new("P", (64, 64), 3),
    Image.new("1", (300, 10), 1),
], ids=["grey", "white", "one pixel", "two by three", "transparent", "palette", "line"])
def test_pictures_with_nothing_to_trim_hash_without_error(picture):
    value = phash(picture)
    assert 0 <= value < 2 ** 64
    assert value == phash(picture, trim=False)  # nothing was trimmed
    assert content_box(picture.convert("L")) == (0, 0, *picture.size)


def test_a_small_subject_on_a_large_empty_field_is_not_cut_down_to_nothing():
    field = Image.new("RGB", (800, 600), (255, 255, 255))
    field.paste(scene(2, (100, 80)), (350, 260))
    grey = field.convert("L")
    assert content_box(grey) == (0, 0, 800, 600)  # less than a quarter would remain


def test_different_pictures_stay_apart_and_the_hash_is_stable():
    hashes = [phash(as_jpeg(scene(seed))) for seed in range(6)]
    assert hashes == [phash(as_jpeg(scene(seed))) for seed in range(6)]
    assert min(hamming(a, b) for i, a in enumerate(hashes) for b in hashes[i + 1:]) > 12


def test_the_mirror_hash_is_the_hash_of_the_mirrored_picture():
    for seed in range(4):
        picture = as_jpeg(pad(scene(seed, (640, 428)), 0.1, (255, 255, 255)))
        value, mirrored = phashes(picture)
        assert value == phash(picture) and mirrored == mirror_phash(picture)
        assert hamming(mirrored, phash(ImageOps.mirror(picture))) <= 2
        assert hamming(value, mirrored) > 12  # a mirror is no near copy by itself


def strip_over(image: Image.Image) -> Image.Image:
    """A dark strip with a line of text drawn over the picture's bottom 12 %."""
    out = image.copy()
    w, h = out.size
    draw = ImageDraw.Draw(out)
    draw.rectangle((0, h - int(h * 0.12), w, h), fill=(20, 20, 20))
    draw.text((12, h - int(h * 0.12) + 6), "独家 Photo: agency / 图片来源", fill=(240, 240, 240),
              font_size=18)
    return out


def corner_logo(image: Image.Image) -> Image.Image:
    out = image.copy()
    w, h = out.size
    ImageDraw.Draw(out).rectangle((w * 0.03, h * 0.03, w * 0.2, h * 0.12), fill=(200, 20, 20))
    return out


def centre_crop(share: float) -> Callable[[Image.Image], Image.Image]:
    def run(image: Image.Image) -> Image.Image:
        w, h = image.size
        dx, dy = int(w * share / 2), int(h * share / 2)
        return image.crop((dx, dy, w - dx, h - dy))
    return run


def nearest(a: Image.Image, b: Image.Image) -> int:
    """The engine's distance of two pictures: the closest of their hashes."""
    return min(hamming(x, y) for x in picture_hashes(a).all() for y in picture_hashes(b).all())


def test_the_picture_hashes_are_the_whole_the_mirror_and_each_region():
    picture = as_jpeg(scene(3))
    hashes = picture_hashes(picture)
    assert (hashes.phash, hashes.mirror_phash) == phashes(picture)
    assert len(hashes.regions) == len(REGIONS) and len(hashes.all()) == 2 + len(REGIONS)
    top = picture.crop((0, 0, picture.width, round(picture.height * 0.85)))
    # resampled through a box-filtered copy: within a few bits of the crop's own pHash
    assert hamming(hashes.regions[list(REGIONS).index("top")], phash(top, trim=False)) <= 4


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("edit", [strip_over, corner_logo, centre_crop(0.05),
                                  centre_crop(0.10)],
                         ids=["strip over", "corner logo", "crop 5 %", "crop 10 %"])
def test_a_copy_with_something_drawn_over_it_or_cropped_stays_the_same_picture(seed, edit):
    original = scene(seed)
    bits = EngineConfig().picture_bits
    assert nearest(as_jpeg(original), as_jpeg(edit(original))) <= bits


@pytest.mark.parametrize("seed", range(4))
def test_two_shots_of_one_scene_stay_two_pictures(seed):
    """A pan and a zoom: views of one wide scene that overlap but are not one frame."""
    wide = scene(seed, size=(960, 640))
    left, right = wide.crop((0, 80, 640, 507)), wide.crop((240, 80, 880, 507))
    zoomed = wide.crop((192, 128, 768, 512)).resize((640, 427))
    bits = EngineConfig().picture_bits
    assert nearest(as_jpeg(left), as_jpeg(right)) > bits
    assert nearest(as_jpeg(wide.resize((640, 427))), as_jpeg(zoomed)) > bits
