"""The engine as it was at an older commit, as a method of the accuracy benchmark.

    .venv/bin/python bench/accuracy.py --engine-at deee01b

``OlderEngine(rev)`` checks ``rev`` out into a temporary git worktree (detached, no
branch), builds that tree's C kernel in place with this Python, and labels documents by
running that tree's own ``bench/common.run_engine`` in a child process whose import path
starts at the worktree: the older ``fingerprints`` package, its kernel, its rules and
defaults. The child refuses to run if ``fingerprints`` or ``common`` would come from
anywhere else, or if that tree's kernel does not load, so a figure labelled with a
commit is that commit's. The documents go to the child as
JSON lines, so any corpus, including ones the older bench did not know, can be scored.
Labels come back as JSON and are scored in this process like any other method's, in the
same run. :meth:`OlderEngine.timed` also times that engine in the child as
``bench/engine.py`` times the current one (``--engine-at``): a warm-up on one made-up
sentence, then a first (cold) and a second (warm) pass over the documents.

This is the baseline for statements such as "no worse than the engine of the day the
issue was filed" (docs/results/log.md, "The other corpora").
"""

from __future__ import annotations

import importlib
import json
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


class OlderEngine:
    """``with OlderEngine("deee01b") as engine: labels = engine(docs)``."""

    def __init__(self, rev: str, repo: Path = ROOT) -> None:
        self.repo = repo
        self.rev = rev
        self.commit = _git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}").strip()
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self.tree: Path | None = None

    @property
    def name(self) -> str:
        return f"engine@{self.rev}"

    def __enter__(self) -> OlderEngine:
        self._dir = tempfile.TemporaryDirectory(prefix="engine-at-")
        self.tree = Path(self._dir.name) / "tree"
        try:
            _git(self.repo, "worktree", "add", "--detach", "--quiet", str(self.tree),
                 self.commit)
            built = subprocess.run(
                [sys.executable, "setup.py", "build_ext", "--inplace"], cwd=self.tree,
                capture_output=True, text=True, check=False)
            if built.returncode != 0:  # the older engine would fall back to its slow Python
                raise RuntimeError(f"building the kernel of {self.rev} failed:\n{built.stderr}")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 trace: TracebackType | None) -> None:
        """Remove the worktree (and git's record of it) whatever happened."""
        try:
            if self.tree is not None:
                subprocess.run(["git", "-C", str(self.repo), "worktree", "remove", "--force",
                                str(self.tree)], capture_output=True, check=False)
        finally:
            self.tree = None
            if self._dir is not None:
                self._dir.cleanup()
                self._dir = None
            subprocess.run(["git", "-C", str(self.repo), "worktree", "prune"],
                           capture_output=True, check=False)

    def __call__(self, docs: Sequence[Any]) -> dict[str, str]:
        labels: dict[str, str] = self._run(docs, timed=False)["labels"]
        return labels

    def labels_and_features(self, docs: Sequence[Any]) -> tuple[dict[str, str], list[str]]:
        """The older online rule's labels and, per document, the SHA-256 of its
        ``extract_many`` features bytes (bench/same_output.py)."""
        found = self._run(docs, timed=False, features=True)
        return found["labels"], found["features"]

    def timed(self, docs: Sequence[Any]) -> dict[str, float]:
        """Cold and warm (wall, CPU) seconds of the older online rule over ``docs``, in
        a fresh child process (``bench/engine.py``'s keys, and ``n``)."""
        found = self._run(docs, timed=True)
        return {"n": len(docs), **found["timing"]}

    def _run(self, docs: Sequence[Any], *, timed: bool, features: bool = False
             ) -> dict[str, Any]:
        if self.tree is None:
            raise RuntimeError("OlderEngine is used inside a with block")
        with tempfile.TemporaryDirectory(prefix="engine-at-io-") as io:
            source, target = Path(io) / "docs.jsonl", Path(io) / "labels.json"
            with source.open("w", encoding="utf-8") as handle:
                for doc in docs:
                    handle.write(json.dumps([doc.id, doc.title, doc.content],
                                            ensure_ascii=False) + "\n")
            command = [sys.executable, __file__, str(self.tree), str(source), str(target)]
            # the child's own output goes nowhere: bench/engine.py reads its caller's stdout
            flags = (["--time"] if timed else []) + (["--features"] if features else [])
            subprocess.run(command + flags, check=True,
                           stdout=subprocess.DEVNULL)
            found: dict[str, Any] = json.loads(target.read_text(encoding="utf-8"))
        if set(found["labels"]) != {doc.id for doc in docs}:
            raise RuntimeError(f"{self.name} labelled other documents than it was given")
        return found


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def trees(revs: Sequence[str], root: Path = ROOT) -> Iterator[tuple[str, Path]]:
    """``("this tree", root)``, then each of ``revs``' name and tree, each checked out and
    built while the caller's loop body runs and removed after it: the rows of a benchmark
    that counts this tree beside older commits (``--at``)."""
    yield "this tree", root
    for rev in revs:
        with OlderEngine(rev, root) as older:
            assert older.tree is not None
            yield older.name, older.tree


def exit_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit, so that ``with OlderEngine(...)`` blocks still
    remove their worktrees when a benchmark is killed."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))


def _child(tree: str, source: str, target: str, *flags: str) -> int:
    """In the child: the older tree's own engine over the documents (``--time``: after
    a warm-up, two timed passes; ``--features``: also each document's features digest)."""
    here = Path(__file__).resolve().parent
    sys.path[:] = [tree, str(Path(tree) / "bench")] + [
        p for p in sys.path if Path(p or ".").resolve() != here]
    for name in [m for m in sys.modules if m == "common" or m.split(".")[0] == "fingerprints"]:
        del sys.modules[name]
    import common  # the older tree's bench/common.py

    import fingerprints

    root = Path(tree).resolve()
    for module in (common, fingerprints):
        where = Path(module.__file__ or "").resolve()
        if not where.is_relative_to(root):
            print(f"{module.__name__} imported from {where}, not from {tree}", file=sys.stderr)
            return 2
    # the kernel's loader moved with the rule (fingerprints/rule/ since the engine
    # package was laid out by concern); a tree from before the C kernel has neither
    loaded = True
    for name in ("fingerprints.rule.kernel", "fingerprints.kernel"):
        try:
            loaded = importlib.import_module(name).kernel is not None
            break
        except ImportError:
            continue
    if not loaded:
        print(f"the C kernel of {tree} did not load (DEDUP_KERNEL=0?)", file=sys.stderr)
        return 3
    with open(source, encoding="utf-8") as handle:
        docs = [common.Doc(*json.loads(line)) for line in handle]
    timing = None
    if "--time" in flags:
        common.run_engine([common.Doc("w", "预热", "预热用的一句话，不在任何语料里。")])
        timing = {}
        for run in ("cold", "warm"):
            wall, cpu = time.perf_counter(), time.process_time()
            labels = common.run_engine(docs)
            timing[f"{run}_wall"] = time.perf_counter() - wall
            timing[f"{run}_cpu"] = time.process_time() - cpu
    else:
        labels = common.run_engine(docs)
    digests = None
    if "--features" in flags:
        import hashlib

        from fingerprints.rule import extract_many

        digests = [hashlib.sha256(f.to_bytes()).hexdigest()
                   for f in extract_many([(doc.title, doc.content) for doc in docs])]
    Path(target).write_text(json.dumps({"labels": labels, "timing": timing,
                                        "features": digests}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(_child(*sys.argv[1:]))
