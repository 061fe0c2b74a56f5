"""Near-duplicate pictures: which perceptual hash finds edited copies and keeps other
pictures apart.

    .venv/bin/pip install -e '.[dev,bench]'     # imagehash and pdqhash, the baselines
    .venv/bin/python bench/images.py [--photos DIR]

The photos are ../shared/data/photos_dev (10 real photos, its SOURCE.md). Each is edited
by every transform below; a hash *finds* a copy when their distance is at most a
threshold. The threshold of each hash is the largest at which no pair of two different
photos is that close (precision 1.0 on the negatives: with 45 negative pairs, the
precision measured is only that strict); recall is then reported per transform. The
hashes, in the same run on the same pictures: this project's pHash
(fingerprints/rule/picture.py, 64 bits), imagehash's pHash and dHash (64 bits), PDQ
(256 bits, pdqhash) and exact equality of the bytes (what Data-Juicer's rule does).
Hashing speed: decode + hash of each photo resized to 640 px wide, as JPEG.

Limits of this run, said in the results page: ten photos, no different shots of one
scene among the negatives (none could be gathered offline).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
import time
from collections.abc import Callable
from itertools import combinations
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageEnhance, ImageOps

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import DATA  # noqa: E402
from fingerprints.rule.picture import decode, phash  # noqa: E402


def jpeg(image: Image.Image, quality: int = 90) -> bytes:
    out = io.BytesIO()
    image.convert("RGB").save(out, "JPEG", quality=quality)
    return out.getvalue()


def crop(share: float) -> Callable[[Image.Image], Image.Image]:
    def run(image: Image.Image) -> Image.Image:
        w, h = image.size
        dx, dy = int(w * share / 2), int(h * share / 2)
        return image.crop((dx, dy, w - dx, h - dy))
    return run


def pad(share: float) -> Callable[[Image.Image], Image.Image]:
    def run(image: Image.Image) -> Image.Image:
        w, h = image.size
        return ImageOps.expand(image, border=(int(w * share / 2), int(h * share / 2)),
                               fill=(255, 255, 255))
    return run


def caption(image: Image.Image) -> Image.Image:
    w, h = image.size
    out = ImageOps.expand(image, border=(0, 0, 0, int(h * 0.12)), fill=(20, 20, 20))
    ImageDraw.Draw(out).text((10, h + 5), "图片来源：网络 Photo: agency", fill=(240, 240, 240))
    return out


def watermark(image: Image.Image) -> Image.Image:
    out = image.convert("RGBA")
    layer = Image.new("RGBA", out.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    w, h = out.size
    draw.rectangle((w * 0.62, h * 0.85, w * 0.97, h * 0.96), fill=(255, 255, 255, 110))
    draw.text((w * 0.64, h * 0.87), "© news.example", fill=(0, 0, 0, 200))
    return Image.alpha_composite(out, layer).convert("RGB")


TRANSFORMS: dict[str, Callable[[Image.Image], bytes]] = {
    "resize 50 %": lambda im: jpeg(im.resize((im.width // 2, im.height // 2))),
    "JPEG quality 30": lambda im: jpeg(im, 30),
    "caption bar": lambda im: jpeg(caption(im)),
    "watermark": lambda im: jpeg(watermark(im)),
    "brightness +30 %": lambda im: jpeg(ImageEnhance.Brightness(im).enhance(1.3)),
    "contrast 70 %": lambda im: jpeg(ImageEnhance.Contrast(im).enhance(0.7)),
    "crop 5 %": lambda im: jpeg(crop(0.05)(im)),
    "crop 10 %": lambda im: jpeg(crop(0.10)(im)),
    "pad 10 %": lambda im: jpeg(pad(0.10)(im)),
    "pad 20 %": lambda im: jpeg(pad(0.20)(im)),
    "mirror": lambda im: jpeg(ImageOps.mirror(im)),
}


def _bits_distance(a: int, b: int) -> int:
    return (a ^ b).bit_count()


def hashers() -> dict[str, tuple[Callable[[bytes], object], Callable[[object, object], int]]]:
    import imagehash
    import pdqhash

    def ours(data: bytes) -> int:
        return phash(decode(data))

    def ih_phash(data: bytes) -> object:
        return imagehash.phash(Image.open(io.BytesIO(data)))

    def ih_dhash(data: bytes) -> object:
        return imagehash.dhash(Image.open(io.BytesIO(data)))

    def pdq(data: bytes) -> object:
        array = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
        vector, _quality = pdqhash.compute(array)
        return vector.astype(bool)

    def exact(data: bytes) -> str:
        return hashlib.md5(data, usedforsecurity=False).hexdigest()

    return {
        "dedupsite pHash (64)": (ours, lambda a, b: _bits_distance(a, b)),  # type: ignore[arg-type]
        "imagehash pHash (64)": (ih_phash, lambda a, b: a - b),  # type: ignore[operator]
        "imagehash dHash (64)": (ih_dhash, lambda a, b: a - b),  # type: ignore[operator]
        "PDQ (256)": (pdq, lambda a, b: int(np.count_nonzero(a != b))),  # type: ignore[call-overload]
        "exact bytes (MD5)": (exact, lambda a, b: 0 if a == b else 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--photos", type=Path, default=DATA / "photos_dev")
    args = parser.parse_args()
    paths = sorted(args.photos.glob("*.jpg"), key=lambda p: int(p.stem.removeprefix("image")))
    originals = {p.stem: Image.open(p).convert("RGB") for p in paths}
    for name, image in originals.items():  # a news-page size: 640 px wide
        originals[name] = image.resize((640, max(1, round(image.height * 640 / image.width))))
    base = {name: jpeg(image) for name, image in originals.items()}
    edited = {(name, t): make(image) for name, image in originals.items()
              for t, make in TRANSFORMS.items()}
    print(f"{len(base)} photos, {len(TRANSFORMS)} transforms, "
          f"{len(base) * (len(base) - 1) // 2} negative pairs")
    rows = []
    for label, (hash_of, distance) in hashers().items():
        started = time.perf_counter()
        hashed = {name: hash_of(data) for name, data in base.items()}
        speed = len(base) / (time.perf_counter() - started)
        negatives = [distance(hashed[a], hashed[b]) for a, b in combinations(sorted(hashed), 2)]
        threshold = min(negatives) - 1  # the largest with no negative pair that close
        recall = {}
        for t in TRANSFORMS:
            found = [distance(hashed[name], hash_of(edited[(name, t)])) <= threshold
                     for name in base]
            recall[t] = sum(found) / len(found)
        rows.append((label, threshold, min(negatives), speed, recall))
    print("\nrecall at precision 1.0 on the negatives (threshold = closest negative - 1)\n")
    print("| transform | " + " | ".join(r[0] for r in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for t in TRANSFORMS:
        print(f"| {t} | " + " | ".join(f"{r[4][t]:.2f}" for r in rows) + " |")
    print("| threshold (closest negative) | "
          + " | ".join(f"{r[1]} ({r[2]})" for r in rows) + " |")
    print("| images/s, decode + hash, one core | "
          + " | ".join(f"{r[3]:,.0f}" for r in rows) + " |")


if __name__ == "__main__":
    main()
