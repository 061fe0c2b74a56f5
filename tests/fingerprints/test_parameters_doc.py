"""docs/parameters.md is generated from the engine's configuration: it must be current."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from fingerprints.rule.config import EngineConfig
from fingerprints.rule.match_model import starting_model

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
        made = eval(default, {"starting_model": starting_model})  # noqa: S307 (our own source)
        assert made == getattr(config, name), name
        assert text, f"{name} has no comment in fingerprints/rule/config.py"


def test_the_kind_says_which_fields_change_stored_features() -> None:
    kinds = {name: kind for name, _d, kind, _t in
             parameters_doc.fields(parameters_doc.CONFIG.read_text(encoding="utf-8"))}
    assert {n for n, k in kinds.items() if k == "fingerprint"} == {
        "hmm", "extra_stopwords", "user_words", "backend", "title_min_tokens"}


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
