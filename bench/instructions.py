"""Instructions per article of the online pass and of the local batch command.

    .venv/bin/python bench/instructions.py [--corpus xinhua --corpus bdci]
        [--articles 5400] [--at REV ...] [--jobs 2]

Counts what issue 51 bounds (the batch command within 1.25x of the online rule's cost
per article) in instructions, which are the same on every run of the same build, where
timings on this shared machine move more between rounds than the changes do. Each count
is a whole process under ``valgrind --tool=cachegrind --cache-sim=no`` with
``PYTHONHASHSEED=0`` and one BLAS thread (the tree's modules compiled beforehand, so no
process compiles them), less the same process over the corpus's first 20 articles:
start-up, imports, jieba's dictionary, the tables and the database are taken off, and the
difference is divided by the articles it is the cost of (``--articles`` less 20).

* **online**: ``bench/common.run_engine`` over the first ``--articles`` articles after
  the bench's warm-up sentence, as ``bench/engine.py`` times it; the corpus is loaded
  in both processes (the online pass gets its texts in memory).
* **batch**: ``call_command("spark_dedup", engine="local", workers=1)`` over JSON lines
  of the same texts (nid, title, content) on a scratch SQLite database (migrated
  outside the count: no learned boilerplate, the default configuration); its reading of
  the file and its writing of the result (Parquet, mapping.jsonl, stats.json) counted.

``--articles`` defaults to 5,400, more than either default corpus holds: the whole of
Xinhua (5,141) and of the crawled corpus (BDCI, 5,355), the figures of
docs/results/speed.md. ``--at REV`` counts an older commit the same way, from its own
tree and kernel in a temporary git worktree (bench/older_engine.py), with this Python.
``--jobs`` valgrind processes at a time (the counts do not depend on it). Xinhua and the
crawled corpus at 5,400 take about 12 minutes of CPU for one tree (18 minutes' wall with
``--jobs 8`` on the 2-core machine shared with other work). Needs valgrind (Debian's
package); exits 2 without it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CORPORA, load_docs, require_data, table  # noqa: E402
from older_engine import trees  # noqa: E402

BASE = 20  # the articles of the process that is taken off
DEFAULT_ARTICLES = 5400
WARM_UP = ("预热", "预热用的一句话，不在任何语料里。")
# the online pass: the corpus loaded whole (argv: articles loaded, articles run)
ONLINE = """
import sys
sys.path.insert(0, {bench!r})
from common import load_docs, run_engine
import fingerprints
assert fingerprints.__file__.startswith({tree!r}), fingerprints.__file__
from fingerprints.rule import EngineConfig, extract_many
docs = load_docs({corpus!r}, limit={loaded})
extract_many([{warm_up!r}], EngineConfig())
run_engine(docs[:{run}])
"""
# the batch command, as manage.py runs it but in this one process
BATCH = """
import os
import django
django.setup()
import articles, fingerprints
for module in (articles, fingerprints):
    assert module.__file__.startswith({tree!r}), module.__file__
from django.core.management import call_command
call_command("spark_dedup", engine="local", workers=1, input={source!r},
             output={target!r}, stdout=open(os.devnull, "w"))
"""


@dataclass(frozen=True)
class Count:
    """Instructions of the whole process over ``articles`` and over :data:`BASE`."""

    whole: int
    base: int
    articles: int

    @property
    def per_article(self) -> float:
        """The difference of the two processes per article it is the cost of."""
        if self.articles <= BASE:
            raise ValueError(f"needs more than {BASE} articles, got {self.articles}")
        return (self.whole - self.base) / (self.articles - BASE)


def ratio(batch: Count, online: Count) -> float:
    """The batch command's instructions per article over the online pass's."""
    return batch.per_article / online.per_article


def instructions(output_file: Path) -> int:
    """The instruction total of a cachegrind output file (its ``summary:`` line)."""
    found = re.search(r"^summary:\s+(\d+)", output_file.read_text(), re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no summary line in {output_file}")
    return int(found.group(1))


def counted(tree: Path, script: str, scratch: Path, name: str,
            env: dict[str, str]) -> int:
    """Instructions of ``python script`` (a file: the child's text) under cachegrind."""
    child, out = scratch / f"{name}.py", scratch / f"{name}.cachegrind"
    child.write_text(script, encoding="utf-8")
    subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                    f"--cachegrind-out-file={out}", sys.executable, str(child)],
                   check=True, env=env, cwd=tree, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return instructions(out)


def count_tree(tree: Path, corpora: Sequence[str], articles: int, jobs: int
               ) -> dict[tuple[str, str], Count]:
    """(corpus, "online" | "batch") -> its :class:`Count` for the tree at ``tree``."""
    # compiled beforehand, so that no counted process writes a .pyc
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j0",
                    *[str(tree / p) for p in ("fingerprints", "articles", "dedupsite",
                                              "bench")]],
                   check=True, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory(prefix="instructions-") as folder:
        scratch = Path(folder)
        # one BLAS thread: OpenBLAS's idle threads spin for a while after NumPy's calls,
        # and their instructions moved a count by up to 57k an article between runs
        env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0",
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
               "DJANGO_SETTINGS_MODULE": "dedupsite.settings",
               "DEDUPSITE_VAR_DIR": str(scratch)}
        env.pop("DATABASE_URL", None)  # the scratch SQLite database
        env.pop("REDIS_URL", None)
        subprocess.run([sys.executable, str(tree / "manage.py"), "migrate", "-v0"],
                       env=env, check=True, capture_output=True, cwd=tree)
        runs: dict[tuple[str, str, int], str] = {}
        sizes: dict[str, int] = {}
        for corpus in corpora:
            docs = load_docs(corpus, limit=articles)
            sizes[corpus] = len(docs)
            for size in (len(docs), BASE):
                source = scratch / f"{corpus}-{size}.jsonl"
                with source.open("w", encoding="utf-8") as handle:
                    for doc in docs[:size]:
                        handle.write(json.dumps({"nid": doc.id, "title": doc.title,
                                                 "content": doc.content},
                                                ensure_ascii=False) + "\n")
                runs[(corpus, "online", size)] = ONLINE.format(
                    bench=str(tree / "bench"), tree=str(tree), corpus=corpus,
                    loaded=len(docs), run=size, warm_up=WARM_UP)
                runs[(corpus, "batch", size)] = BATCH.format(
                    tree=str(tree), source=str(source),
                    target=str(scratch / f"out-{corpus}-{size}"))
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            totals = dict(zip(runs, pool.map(
                lambda key: counted(tree, runs[key], scratch, "-".join(map(str, key)), env),
                runs), strict=True))
    return {(corpus, path): Count(totals[(corpus, path, sizes[corpus])],
                                  totals[(corpus, path, BASE)], sizes[corpus])
            for corpus in corpora for path in ("online", "batch")}


def rows(name: str, corpora: Sequence[str], found: dict[tuple[str, str], Count]
         ) -> list[list[object]]:
    """One table row per corpus: articles, both paths' thousands a article, the ratio."""
    out: list[list[object]] = []
    for corpus in corpora:
        online, batch = found[(corpus, "online")], found[(corpus, "batch")]
        out.append([name, corpus, f"{online.articles:,}",
                    f"{online.per_article / 1000:,.1f}k", f"{batch.per_article / 1000:,.1f}k",
                    f"{ratio(batch, online):.3f}x"])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--corpus", action="append", choices=sorted(CORPORA),
                        help="repeatable (default: xinhua and bdci)")
    parser.add_argument("--articles", type=int, default=DEFAULT_ARTICLES,
                        help=f"the first N articles of each corpus (default {DEFAULT_ARTICLES:,}:"
                             " all of Xinhua's and the crawled corpus's)")
    parser.add_argument("--at", action="append", default=[], metavar="REV",
                        help="also count this commit's tree (repeatable)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="valgrind processes at a time (default 1)")
    args = parser.parse_args(argv)
    if not shutil.which("valgrind"):
        print("needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    if args.articles <= BASE:
        parser.error(f"--articles must be more than {BASE}")
    require_data()
    corpora = args.corpus or ["xinhua", "bdci"]
    table_rows = [row for name, tree in trees(args.at)
                  for row in rows(name, corpora,
                                  count_tree(tree, corpora, args.articles, args.jobs))]
    print(f"Instructions per article (cachegrind --cache-sim=no, PYTHONHASHSEED=0; the "
          f"whole process less the same over the first {BASE} articles)")
    print(table(["tree", "corpus", "articles", "online pass", "batch command",
                 "batch / online"], table_rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
