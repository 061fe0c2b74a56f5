"""The online rule decides alike whether the kernel paths (``normalize``,
``clause_keys``, ``overlap``) run or their Python references do: the same features
bytes and the same docIds on a sample of the crawled and the Xinhua corpora.
bench/same_output.py checks all five corpora against an older commit."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from fingerprints.rule import EngineConfig, boilerplate, extract_many, normalize, sketch
from fingerprints.rule.kernel import kernel
from fingerprints.rule.match_model import starting_model
from fingerprints.rule.vector_model import shipped_vector_model

BENCH = Path(__file__).resolve().parents[3] / "bench"
sys.path.insert(0, str(BENCH))

from common import load_docs, run_engine  # noqa: E402

RULE = EngineConfig(model=starting_model())
VECTOR = EngineConfig(model=shipped_vector_model())

pytestmark = pytest.mark.skipif(kernel is None, reason="needs the C kernel")


def _python_references(patch: pytest.MonkeyPatch) -> dict[str, int]:
    """Every one of these kernel paths replaced by its reference; returns the references'
    call counts."""
    calls = {"normalize_py": 0, "compare_py": 0, "clause_keys_py": 0, "overlap_py": 0}

    def counted(name: str, function: Any) -> Any:
        def call(*args: Any) -> Any:
            calls[name] += 1
            return function(*args)
        return call

    patch.setattr(normalize, "kernel", None)
    patch.setattr(normalize, "normalize_py", counted("normalize_py", normalize.normalize_py))
    compare_py = counted("compare_py", sketch.compare_py)
    patch.setattr(sketch, "compare", compare_py)
    patch.setattr("fingerprints.rule.verification.compare", compare_py)
    patch.setattr("fingerprints.rule.comparison.overlap_counts",
                  counted("overlap_py", sketch._overlap_counts_py))
    patch.setattr(boilerplate, "_clause_keys",
                  counted("clause_keys_py", boilerplate.clause_keys_py))
    for cache in (normalize._normalize_recent, boilerplate._strip_cached):
        cache.cache_clear()
    return calls


@pytest.mark.data
@pytest.mark.parametrize("corpus", ["bdci", "xinhua"])
def test_the_kernel_paths_give_the_python_features_and_docids(
    corpus: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = load_docs(corpus, limit=1200)
    items = [(doc.title, doc.content) for doc in docs]
    features = [f.to_bytes() for f in extract_many(items)]
    # the rule's walk (labels-1) and the comparison vector's model
    labels = [run_engine(docs, RULE), run_engine(docs, VECTOR)]
    with monkeypatch.context() as patch:
        calls = _python_references(patch)
        reference_features = [f.to_bytes() for f in extract_many(items)]
        reference_labels = [run_engine(docs, RULE), run_engine(docs, VECTOR)]
    assert min(calls.values()) > 0, calls
    assert features == reference_features
    assert labels == reference_labels
    assert all(len(set(run.values())) < len(docs) for run in labels)  # some joined a story
