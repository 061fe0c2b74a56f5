"""Helpers shared by the tests and the benchmarks live in support/: the benchmarks import
nothing from tests/, and support/ imports nothing from either."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FROM_TESTS = re.compile(r"^\s*(from|import) tests\b", re.M)


def test_the_benchmarks_and_support_import_nothing_from_tests() -> None:
    found = [str(p.relative_to(ROOT)) for folder in ("bench", "support", "scripts")
             for p in (ROOT / folder).glob("*.py") if FROM_TESTS.search(p.read_text("utf-8"))]
    assert found == []


def test_support_imports_no_benchmark() -> None:
    assert not [p for p in (ROOT / "support").glob("*.py")
                if re.search(r"^\s*(from|import) (bench|common)\b", p.read_text("utf-8"), re.M)]
