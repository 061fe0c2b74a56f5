"""docs/parameters.md is generated from the engine's configuration: it must be current."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from fingerprints.rule.config import EngineConfig, kind_of
from fingerprints.rule.match_model import starting_model
from fingerprints.rule.vector_model import shipped_vector_model

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import parameters_doc  # noqa: E402


def test_the_parameters_page_is_what_the_config_generates() -> None:
    assert parameters_doc.PAGE.read_text(encoding="utf-8") == parameters_doc.render(), (
        "docs/parameters.md is stale: run python scripts/parameters_doc.py")


def test_every_field_is_on_the_page_with_its_default_and_a_description() -> None:
    rows = {name: (default, kind, text) for name, default, kind, text in
            parameters_doc.fields(parameters_doc.CONFIG.read_text(encoding="utf-8"))}
    config = EngineConfig()
    assert set(rows) == {f.name for f in dataclasses.fields(EngineConfig)}
    for name, (default, _kind, text) in rows.items():
        names = {"starting_model": starting_model, "shipped_vector_model": shipped_vector_model}
        made = eval(default, names)  # noqa: S307 (our own source)
        assert made == getattr(config, name), name
        assert text, f"{name} has no comment in fingerprints/rule/config.py"


def test_the_kind_says_which_fields_change_stored_features_or_the_layout() -> None:
    kinds = {name: kind for name, _d, kind, _t in
             parameters_doc.fields(parameters_doc.CONFIG.read_text(encoding="utf-8"))}
    assert {n for n, k in kinds.items() if k == "fingerprint"} == {
        "hmm", "extra_stopwords", "user_words", "backend", "title_min_tokens"}
    assert {n for n, k in kinds.items() if k == "layout"} == {"k", "title_k"}


def test_the_page_and_the_reindex_rule_read_one_kind_per_field() -> None:
    """A change of any fingerprint or layout field changes the index's shape (the reindex
    rule); a change of a decision field does not, but for picture_bits moving picture_k."""
    base = EngineConfig()
    changed = {"k": 4, "title_k": 2, "hmm": True, "extra_stopwords": frozenset({"x"}),
               "user_words": (("x", None, None),), "backend": "jieba", "title_min_tokens": 3,
               "candidate_radius": 9, "probe_bits": 2, "boilerplate_min_docs": 7,
               "picture_bits": 12, "match_threshold": 0.7, "anchorless_threshold": 0.9,
               "model": dataclasses.replace(starting_model(), prior=-9.0)}
    assert set(changed) == {f.name for f in dataclasses.fields(EngineConfig)}
    for name, value in changed.items():
        other = dataclasses.replace(base, **{name: value})
        assert getattr(other, name) != getattr(base, name), name
        reindexes = other.index_shape() != base.index_shape()
        assert reindexes is (kind_of(name) != "decision"), name
    assert dataclasses.replace(base, picture_bits=3).index_shape() != base.index_shape()


def test_the_admin_column_is_read_from_the_settings_model() -> None:
    """Every parameter the rule reads is an admin field (the match model and its level
    bounds through the settings' model version), but the tokenizer library: rjieba and
    jieba give the same tokens."""
    admin = parameters_doc.admin_fields(parameters_doc.MODELS.read_text(encoding="utf-8"))
    assert admin == {f.name for f in dataclasses.fields(EngineConfig)} - {"backend"}


def test_every_level_bound_is_on_the_page_with_its_default_and_a_description() -> None:
    from fingerprints.rule.bounds import Bounds

    rows = {name: (default, text) for name, default, _kind, text in
            parameters_doc.fields(parameters_doc.BOUNDS.read_text(encoding="utf-8"), "Bounds")}
    assert set(rows) == {f.name for f in dataclasses.fields(Bounds)}
    for name, (default, text) in rows.items():
        assert eval(default) == getattr(Bounds(), name), name  # noqa: S307 (our own source)
        assert text, f"{name} has no comment in fingerprints/rule/bounds.py"
    assert not {f.name for f in dataclasses.fields(Bounds)} & {
        f.name for f in dataclasses.fields(EngineConfig)}
