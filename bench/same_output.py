"""Does this tree give the bytes and the docIds an older commit gives?

    .venv/bin/python bench/same_output.py REV [--corpus bdci ...]

Over the five corpora (all 19,126 articles by default), this tree's features
(``extract_many``, each article's bytes as a SHA-256) and the online rule's labels
(``common.run_engine``: which article founds each docId, boilerplate learned as it
goes) against those of ``REV`` (its own tree and kernel in a temporary git worktree:
bench/older_engine.py). A speed change must leave both identical. Prints a
line per corpus; exits 1 when anything differs.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
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
    print("identical" if not differ else "DIFFERENT")
    return 1 if differ else 0


def _mapping_sha1(docs: list, labels: dict) -> str:
    """A digest of the whole clustering: each article's id and the id of the article
    that founded its docId, in id order (the docId is named after its founder)."""
    lines = "".join(f"{d.id}\t{labels[d.id]}\n" for d in sorted(docs, key=lambda d: d.id))
    return hashlib.sha1(lines.encode()).hexdigest()[:16]


if __name__ == "__main__":
    raise SystemExit(main())
