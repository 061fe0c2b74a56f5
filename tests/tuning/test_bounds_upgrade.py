"""The level bounds moved from the engine settings into the match model: an upgrade
keeps the bounds an admin had set, in the settings (migration 0028, both ways) and in
the running state written before it (config_from_json)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from articles.tuning.state import config_from_json, config_to_json
from fingerprints.rule import EngineConfig
from fingerprints.rule.match_model import starting_model

BEFORE = [("articles", "0027_match_model_versions")]
AFTER = [("articles", "0028_level_bounds_in_the_model")]


def _migrate(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(target)
    return executor.loader.project_state(target).apps


def _latest():
    """Back to every app's newest migration, for the tests after this one."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    _migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_an_admins_moved_bounds_become_an_active_model_version_on_upgrade() -> None:
    try:
        old = _migrate(BEFORE)
        old.get_model("articles", "EngineSettings").objects.create(
            pk=1, jaccard=0.7, short_shingles=40, containment=0.9)
        new = _migrate(AFTER)
        settings = new.get_model("articles", "EngineSettings").objects.get(pk=1)
        version = new.get_model("articles", "MatchModelVersion").objects.get()
        # the settings' model; the running state is not touched (it keeps the same bounds
        # beside its model: the last test below)
        assert settings.match_model_id == version.pk and settings.version == 1
        from fingerprints.rule.match_model import MatchModel

        model = MatchModel.from_dict(version.weights)
        assert (model.bounds.jaccard, model.bounds.short_shingles) == (0.7, 40)
        assert model.bounds.containment == 0.9  # not moved: the default
        assert model.weights == starting_model().weights
        # and back: the columns take the active version's bounds again
        old = _migrate(BEFORE)
        back = old.get_model("articles", "EngineSettings").objects.get(pk=1)
        assert (back.jaccard, back.short_shingles, back.containment) == (0.7, 40, 0.9)
    finally:
        _latest()


@pytest.mark.django_db(transaction=True)
def test_a_fitted_version_already_active_keeps_its_weights_and_takes_the_bounds() -> None:
    try:
        old = _migrate(BEFORE)
        data = starting_model().as_dict()
        del data["bounds"]  # a version written before the move
        data["version"] = "editors-1"
        data["comparisons"]["body"]["cjk-contained"] = 3.5
        fitted = old.get_model("articles", "MatchModelVersion").objects.create(
            version="editors-1", base="labels-1", weights=data)
        old.get_model("articles", "EngineSettings").objects.create(
            pk=1, match_model=fitted, picture_title_similarity=0.75)
        new = _migrate(AFTER)
        settings = new.get_model("articles", "EngineSettings").objects.get(pk=1)
        carried = new.get_model("articles", "MatchModelVersion").objects.get(
            pk=settings.match_model_id)
        from fingerprints.rule.match_model import MatchModel

        model = MatchModel.from_dict(carried.weights)
        assert carried.version == "editors-1-settings" and carried.base == "editors-1"
        assert model.weight("body", "cjk-contained") == 3.5  # the fitted weights stay
        assert model.bounds.picture_title_similarity == 0.75
    finally:
        _latest()


@pytest.mark.django_db(transaction=True)
def test_settings_at_their_defaults_upgrade_without_a_new_version() -> None:
    try:
        old = _migrate(BEFORE)
        old.get_model("articles", "EngineSettings").objects.create(pk=1)
        new = _migrate(AFTER)
        assert not new.get_model("articles", "MatchModelVersion").objects.exists()
        assert new.get_model("articles", "EngineSettings").objects.get().match_model_id is None
    finally:
        _latest()


def test_a_state_written_before_the_move_keeps_its_bounds() -> None:
    """Workers read the active state, written by the old code with the bounds beside
    the model: they decide with those bounds until the admin saves again. (The old
    code's only model was the rule's: labels-1, not the default vector model.)"""
    state = config_to_json(EngineConfig(model=starting_model()))
    del state["model"]["bounds"]
    state["jaccard"], state["cjk_containment"] = 0.75, 0.8
    config = config_from_json(state)
    assert (config.bounds.jaccard, config.bounds.cjk_containment) == (0.75, 0.8)
    assert config.model.weights == starting_model().weights
    # a current state: the model's own bounds, nothing beside it
    assert config_from_json(config_to_json(config)) == config
    older = {"k": 3, "jaccard": 0.65}  # before the match model too
    assert config_from_json(older).bounds.jaccard == 0.65
