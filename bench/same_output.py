"""Does this tree give the bytes and the docIds an older commit gives?

    .venv/bin/python bench/same_output.py REV [--corpus bdci ...]

Over the five corpora (all 19,126 articles by default), this tree's features
(``extract_many``, each article's bytes as a SHA-256) and the online rule's labels
(``common.run_engine``: which article founds each docId, boilerplate learned as it
goes) against those of ``REV`` (its own tree and kernel in a temporary git worktree:
bench/older_engine.py). A speed change must leave both identical. Prints a
line per corpus; exits 1 when anything differs.

``--batch`` also runs the local batch command (``manage.py spark_dedup --engine local
--workers 1``, each tree its own command, a scratch SQLite database each) over each
corpus, with made-up URLs, media, hotness and dates so that every column is filled and
a repeated nid, and compares what it writes: ``mapping.jsonl`` and ``stats.json``
byte for byte, the ``articles/`` and ``clusters/`` Parquet tables by content (and says
whether their files are byte-identical too).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CORPORA, load_docs, run_engine  # noqa: E402
from older_engine import OlderEngine, exit_on_sigterm  # noqa: E402

from fingerprints.rule import extract_many  # noqa: E402
from fingerprints.rule.kernel import kernel  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rev", help="the commit to compare with")
    parser.add_argument("--corpus", action="append", choices=sorted(CORPORA))
    parser.add_argument("--batch", action="store_true",
                        help="also compare the local batch command's result files")
    args = parser.parse_args()
    if kernel is None:
        raise SystemExit("ERROR: this tree's kernel is not built (setup.py build_ext --inplace)")
    exit_on_sigterm()
    differ = False
    with OlderEngine(args.rev) as older:
        for corpus in args.corpus or list(CORPORA):
            docs = load_docs(corpus)
            features = [hashlib.sha256(f.to_bytes()).hexdigest()
                        for f in extract_many([(d.title, d.content) for d in docs])]
            labels = run_engine(docs)
            old_labels, old_features = older.labels_and_features(docs)
            other_bytes = sum(a != b for a, b in zip(features, old_features, strict=True))
            other_labels = sum(labels[d.id] != old_labels[d.id] for d in docs)
            differ |= bool(other_bytes or other_labels)
            print(f"{corpus}: {len(docs):,} articles, {len(set(labels.values())):,} docIds; "
                  f"features differing {other_bytes}, docIds differing {other_labels}; "
                  f"sha1 of id->docId here {_mapping_sha1(docs, labels)}, "
                  f"at {args.rev} {_mapping_sha1(docs, old_labels)}", flush=True)
            if args.batch:
                assert older.tree is not None
                same, line = same_batch_files(docs, ROOT, older.tree)
                differ |= not same
                print(f"{corpus}: batch command, {line}", flush=True)
    print("identical" if not differ else "DIFFERENT")
    return 1 if differ else 0


ROOT = Path(__file__).resolve().parent.parent
RESULT_FILES = ("mapping.jsonl", "stats.json")
RESULT_TABLES = ("articles/part-00000.parquet", "clusters/part-00000.parquet")


def same_batch_files(docs: list, here: Path, there: Path) -> tuple[bool, str]:
    """Run the local batch command of the trees ``here`` and ``there`` over ``docs``;
    whether their results are the same, and a line saying what was compared."""
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory(prefix="same-batch-") as scratch:
        folder = Path(scratch)
        source = folder / "input.jsonl"
        with source.open("w", encoding="utf-8") as handle:
            for position, doc in enumerate([*docs, docs[0]]):  # the last repeats a nid
                handle.write(json.dumps({
                    "nid": doc.id, "title": doc.title, "content": doc.content,
                    "url": f"https://example.com/{position % (len(docs) - 7)}",
                    "media": f"media-{position % 5}", "hotness": position % 11,
                    "category": "news", "imageCount": position % 3,
                    "publishedAt": f"2020-01-{1 + position % 28:02d}T00:00:00Z",
                }, ensure_ascii=False) + "\n")
        outputs = []
        for name, tree in (("here", here), ("there", there)):
            env = {**os.environ, "DEDUPSITE_VAR_DIR": str(folder / f"var-{name}"),
                   "DJANGO_SETTINGS_MODULE": "dedupsite.settings"}
            env.pop("DATABASE_URL", None)
            (folder / f"var-{name}").mkdir()
            for command in (["migrate", "-v0"],
                            ["spark_dedup", "--engine", "local", "--workers", "1",
                             "--input", str(source), "--output", str(folder / name)]):
                subprocess.run([sys.executable, str(tree / "manage.py"), *command], cwd=tree,
                               env=env, check=True, capture_output=True)
            outputs.append(folder / name)
        here_out, there_out = outputs
        files_same = all((here_out / f).read_bytes() == (there_out / f).read_bytes()
                         for f in RESULT_FILES)
        tables_same = all(pq.read_table(here_out / t).equals(pq.read_table(there_out / t),
                                                             check_metadata=True)
                          for t in RESULT_TABLES)
        parquet_bytes = all((here_out / t).read_bytes() == (there_out / t).read_bytes()
                            for t in RESULT_TABLES)
        digest = hashlib.sha256((here_out / "mapping.jsonl").read_bytes()).hexdigest()[:16]
    return files_same and tables_same, (
        f"mapping.jsonl and stats.json {'identical' if files_same else 'DIFFERENT'} "
        f"(mapping sha256 {digest}), Parquet tables "
        f"{'identical' if tables_same else 'DIFFERENT'}, Parquet files "
        f"{'byte-identical' if parquet_bytes else 'not byte-identical'}")


def _mapping_sha1(docs: list, labels: dict) -> str:
    """A digest of the whole clustering: each article's id and the id of the article
    that founded its docId, in id order (the docId is named after its founder)."""
    lines = "".join(f"{d.id}\t{labels[d.id]}\n" for d in sorted(docs, key=lambda d: d.id))
    return hashlib.sha1(lines.encode()).hexdigest()[:16]


if __name__ == "__main__":
    raise SystemExit(main())
