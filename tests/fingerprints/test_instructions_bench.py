"""bench/instructions.py: the arithmetic of its table (no valgrind here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import instructions  # noqa: E402
from instructions import BASE, Count, ratio, rows  # noqa: E402


def test_an_article_costs_the_difference_of_the_two_processes_over_the_articles_it_adds(
) -> None:
    count = Count(whole=1_000_000 + 5_000 * 1_000, base=1_000_000 + BASE * 1_000,
                  articles=5_000)
    assert count.per_article == 1_000
    assert ratio(Count(2_600, 100, BASE + 2), Count(2_100, 100, BASE + 2)) == 1.25
    with pytest.raises(ValueError):
        Count(10, 5, BASE).per_article  # noqa: B018


def test_the_total_is_read_from_the_summary_line(tmp_path: Path) -> None:
    out = tmp_path / "cachegrind.out"
    out.write_text("desc: I1 cache:\ncmd: python child.py\nevents: Ir\n"
                   "fl=x.c\nfn=f\n1 5\nsummary: 123456789\n")
    assert instructions.instructions(out) == 123_456_789
    out.write_text("events: Ir\n")
    with pytest.raises(RuntimeError):
        instructions.instructions(out)


def test_a_row_per_corpus_with_both_paths_and_their_ratio() -> None:
    found = {("xinhua", "online"): Count(20 + 1_000 * 120, 20, 1_020),
             ("xinhua", "batch"): Count(50 + 1_000 * 150, 50, 1_020)}
    assert rows("this tree", ["xinhua"], found) == [
        ["this tree", "xinhua", "1,020", "0.1k", "0.1k", "1.250x"]]


def test_it_exits_2_without_valgrind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(instructions.shutil, "which", lambda name: None)
    assert instructions.main(["--corpus", "xinhua"]) == 2
