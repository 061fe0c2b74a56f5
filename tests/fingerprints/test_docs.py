"""docs/engine.md is the method: short, undated, and every test it cites exists; every
page of measured figures in docs/results/ is in that folder's index."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE_MD = ROOT / "docs" / "engine.md"


def test_the_method_page_is_short_and_carries_no_dated_runs() -> None:
    text = ENGINE_MD.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 350
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b|\b\d\d-\d\d \d\d:\d\d\b", text), (
        "dated runs belong in docs/results/log.md")


def test_every_test_the_decision_table_cites_exists() -> None:
    cited = []
    for cell in re.findall(r"`([^`]*::test_\w+)`", ENGINE_MD.read_text(encoding="utf-8")):
        cited.append(cell)
    assert len(cited) >= 15
    current = None
    for ref in cited:
        file, _, name = ref.partition("::")
        if file:
            current = file if file.startswith("tests/") else f"tests/fingerprints/{file}"
        assert current is not None, ref
        source = (ROOT / current).read_text(encoding="utf-8")
        assert re.search(rf"^def {name}\(", source, re.M), f"{current}::{name} is not a test"


def test_every_results_page_is_in_the_index() -> None:
    results = ROOT / "docs" / "results"
    index = (results / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in results.glob("*.md") if p.name != "README.md")
    assert [page for page in pages if f"]({page})" not in index] == []
