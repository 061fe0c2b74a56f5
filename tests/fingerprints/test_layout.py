"""The engine package's rooms hold at run time too: importing every engine module loads
neither Django nor the apps (import-linter checks the same statically, `make lint`).
Its tests mirror the rooms (tests/fingerprints/<room>/test_<module>[_<topic>].py), and
no test file names the issue or the work round it came from: it says what it checks."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ENGINE_MODULES = (
    "fingerprints.rule", "fingerprints.rule.cascade", "fingerprints.stores.block_index",
    "fingerprints.stores.key_index", "fingerprints.stores.url_map",
    "fingerprints.batch.replay", "fingerprints.batch.spark", "fingerprints.table.match",
    "fingerprints.table.spark",
)

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
ENGINE_TESTS = TESTS / "fingerprints"
#: The test files of the engine as a whole, beside the rooms: the method page, the
#: generated parameter page, this file, and bench/older_engine.py (older engines).
# the benchmarks' tools are tested beside the rooms too (bench/ has no room)
WHOLE_ENGINE = {"test_docs.py", "test_layout.py", "test_older_engine.py",
                "test_parameters_doc.py", "test_instructions_bench.py"}
#: An issue's number ("issue", "issues", "issue-" or "(#" before it) or a numbered round.
NAMES_AN_ISSUE_OR_ROUND = re.compile(
    r"\bissues?\s*#?\d+|\bissue-\d+|\(#\d+\)|\bround[\s_-]?#?\d+", re.IGNORECASE)


def test_the_engine_imports_no_django_and_no_app() -> None:
    code = (f"import importlib, sys; [importlib.import_module(m) for m in {ENGINE_MODULES!r}]; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('django', 'articles', 'dedupsite', 'redis', 'rq', 'pyspark')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env={"PATH": "/usr/bin:/bin"})
    assert done.stdout.strip() == "[]"


def test_the_rule_imports_no_store() -> None:
    code = ("import sys, fingerprints.rule; "
            "print(sorted(m for m in sys.modules if m.startswith('fingerprints.') "
            "and not m.startswith('fingerprints.rule')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env={"PATH": "/usr/bin:/bin"})
    assert done.stdout.strip() == "[]"


def test_only_the_whole_engines_tests_sit_beside_the_rooms() -> None:
    top = {path.name for path in ENGINE_TESTS.glob("test_*.py")}
    assert top == WHOLE_ENGINE, (
        "a test of one module goes in tests/fingerprints/<room>/, the room of its module")


def test_every_room_folder_mirrors_a_room_and_names_its_modules() -> None:
    rooms = {path.parent.name for path in (ROOT / "fingerprints").glob("*/__init__.py")}
    folders = {path.name for path in ENGINE_TESTS.iterdir()
               if path.is_dir() and path.name != "__pycache__"}
    assert folders <= rooms, f"test folders with no room: {sorted(folders - rooms)}"
    misplaced = []
    for folder in sorted(folders):
        # a package of its own: the same test file name may sit in two rooms
        assert (ENGINE_TESTS / folder / "__init__.py").exists(), folder
        modules = {path.stem.lstrip("_") for path in (ROOT / "fingerprints" / folder).iterdir()
                   if path.suffix in (".py", ".c") and path.stem != "__init__"}
        for test in sorted((ENGINE_TESTS / folder).glob("test_*.py")):
            subject = test.stem.removeprefix("test_")
            if not any(subject == m or subject.startswith(f"{m}_") for m in modules):
                misplaced.append(f"{folder}/{test.name}")
    assert misplaced == [], f"named after no module of their room: {misplaced}"


def test_no_test_file_names_an_issue_or_a_work_round() -> None:
    found = []
    for path in sorted(TESTS.rglob("*")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        relative = path.relative_to(ROOT).as_posix()
        if NAMES_AN_ISSUE_OR_ROUND.search(relative):
            found.append(relative)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{relative}:{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1)
                  if NAMES_AN_ISSUE_OR_ROUND.search(line)]
    assert found == [], "say what the test checks, not where it came from:\n" + "\n".join(found)
