"""The region hashes came with a smaller picture distance: an upgrade moves settings
still at the former default (10 bits) to the new one (8), keeps any other choice, and
a downgrade moves them back (migration 0034)."""

from __future__ import annotations

import pytest

from tests.tuning.test_bounds_upgrade import _latest, _migrate

BEFORE = [("articles", "0033_webhooks")]
AFTER = [("articles", "0034_picture_regions")]


@pytest.mark.django_db(transaction=True)
def test_settings_at_the_former_picture_distance_take_the_new_one_and_others_stay() -> None:
    try:
        old = _migrate(BEFORE)
        old.get_model("articles", "EngineSettings").objects.create(pk=1, picture_bits=10)
        new = _migrate(AFTER)
        assert new.get_model("articles", "EngineSettings").objects.get(pk=1).picture_bits == 8
        old = _migrate(BEFORE)
        settings = old.get_model("articles", "EngineSettings").objects.get(pk=1)
        assert settings.picture_bits == 10
        settings.picture_bits = 12
        settings.save(update_fields=["picture_bits"])
        new = _migrate(AFTER)
        assert new.get_model("articles", "EngineSettings").objects.get(pk=1).picture_bits == 12
    finally:
        _latest()
