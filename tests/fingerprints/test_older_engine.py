"""bench/older_engine.py: an older commit's engine as a benchmark method."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from common import Doc, run_engine  # noqa: E402
from older_engine import ROOT, OlderEngine, trees  # noqa: E402

SEED = "海量网络文本去重系统实验测试，这是一段测试文本的内容。计算机应用与软件期刊发表了这项研究。"
DOCS = [
    Doc("a", "海量网络文本去重系统", SEED),
    Doc("b", "海量网络文本去重系统", SEED),
    Doc("c", "北京今日天气", "北京今天晴，最高气温二十度，最低气温八度，北风三到四级。"),
    Doc("d", "<script>x</script>", ""),
]


def _head() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_head_labels_and_times_as_this_checkout_and_the_worktree_is_removed() -> None:
    with OlderEngine(_head()) as older:
        tree = older.tree
        assert tree is not None and (tree / "fingerprints").is_dir()
        labels = older(DOCS)
        timing = older.timed(DOCS)
    assert timing["n"] == len(DOCS)
    assert {"cold_wall", "cold_cpu", "warm_wall", "warm_cpu"} <= set(timing)
    assert all(timing[key] > 0 for key in ("cold_wall", "cold_cpu", "warm_cpu"))
    assert not tree.exists()
    assert str(tree) not in _worktrees()
    ours = run_engine(DOCS)
    # the same partition (the label strings are each run's own)
    assert labels["a"] == labels["b"]
    assert len({labels["a"], labels["c"], labels["d"]}) == 3
    assert {frozenset(k for k in ours if ours[k] == v) for v in ours.values()} == {
        frozenset(k for k in labels if labels[k] == v) for v in labels.values()}


def _worktrees() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "worktree", "list", "--porcelain"],
                          capture_output=True, text=True, check=True).stdout


def test_an_unknown_revision_is_refused_with_gits_reason() -> None:
    with pytest.raises(RuntimeError, match="no-such-revision-xyz"):
        OlderEngine("no-such-revision-xyz")


def test_a_failed_build_or_a_failure_inside_leaves_no_worktree(monkeypatch) -> None:
    before = _worktrees()
    with monkeypatch.context() as patch:
        patch.setattr(sys, "executable", "/bin/false")  # the kernel build fails
        with pytest.raises(RuntimeError, match="building the kernel"), OlderEngine(_head()):
            pass
    assert _worktrees() == before
    with pytest.raises(KeyError), OlderEngine(_head()) as older:
        assert older.tree is not None and older.tree.exists()
        raise KeyError("a failure while the worktree is in use")
    assert _worktrees() == before


def test_the_child_refuses_a_tree_without_the_engine(tmp_path: Path) -> None:
    # a "tree" with no fingerprints package: the child must not fall back to the
    # installed one (the figure would be this checkout's under an older name)
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "common.py").write_text("class Doc: pass\n")
    source = tmp_path / "docs.jsonl"
    source.write_text("")
    done = subprocess.run([sys.executable, str(BENCH / "older_engine.py"), str(tmp_path),
                           str(source), str(tmp_path / "out.json")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2, done.stderr
    assert "not from" in done.stderr
    assert not (tmp_path / "out.json").exists()


def test_calls_outside_the_with_block_are_refused() -> None:
    older = OlderEngine(_head())
    with pytest.raises(RuntimeError, match="with block"):
        older(DOCS)


def test_trees_gives_this_tree_then_each_revisions_and_removes_its_worktree() -> None:
    assert list(trees([])) == [("this tree", ROOT)]
    seen = []
    for name, tree in trees([_head()]):
        seen.append(name)
        assert (tree / "fingerprints").is_dir()
    assert seen == ["this tree", f"engine@{_head()}"] and not tree.exists()
    with pytest.raises(RuntimeError, match="no-such-revision-xyz"):
        list(trees(["no-such-revision-xyz"]))
