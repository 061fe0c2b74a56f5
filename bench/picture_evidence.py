"""Pictures as evidence for and against text: partial reposts under one headline.

    .venv/bin/python bench/picture_evidence.py [--pairs 100]

From the crawled corpus's bodies of 600-2,000 characters, in corpus order, pairs of
articles (an original and the next one): the repost keeps the original's headline and
its first 40 % of text, followed by the next article's whole text. Each pair is verified
three ways: the texts alone; with one picture on each side within 3 bits (the
original's photo, transformed); with pictures 64 bits apart (another photo). Printed for
the shipped rule model (``labels-1``) and the shipped comparison-vector model: how many
pairs each joins. The picture hashes are made up (a hash and its neighbour), so this
measures the decision, not the picture hash (bench/images.py measures that).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import load_docs, table  # noqa: E402

from fingerprints.rule import EngineConfig, extract, verify  # noqa: E402
from fingerprints.rule.match_model import starting_model  # noqa: E402
from fingerprints.rule.vector_model import shipped_vector_model  # noqa: E402

PHOTO = 0x0123456789ABCDEF
KEPT = 0.4  # the share of the original's text the repost keeps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=100)
    args = parser.parse_args()
    docs = [d for d in load_docs("bdci") if 600 <= len(d.content) <= 2000][: 2 * args.pairs]
    rows = []
    for name, config in (("labels-1 (rule)", EngineConfig(model=starting_model())),
                         (shipped_vector_model().version, EngineConfig(
                             model=shipped_vector_model()))):
        joined = [0, 0, 0]
        for original, other in zip(docs[::2], docs[1::2], strict=False):
            a = extract(original.title, original.content)
            b = extract(original.title,
                        original.content[: int(len(original.content) * KEPT)] + other.content)
            with_photo = replace(a, pictures=(PHOTO,))
            for k, repost in enumerate((b, replace(b, pictures=(PHOTO ^ 0b111,)),
                                        replace(b, pictures=(~PHOTO & (2**64 - 1),)))):
                joined[k] += verify(a if k == 0 else with_photo, repost, config).ok
        rows.append([name, len(docs) // 2, *joined])
    print(table(["model", "pairs", "joined on text", "with the same photo",
                 "with another photo"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
