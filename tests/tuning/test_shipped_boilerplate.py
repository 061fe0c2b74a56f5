"""The shipped starting boilerplate list: loaded idempotently, an admin's switch-off kept,
and a fresh database that loaded it removes the chrome a warm one has learned."""

from __future__ import annotations

import io
from dataclasses import replace

import pytest
from django.core.management import call_command

from articles.models import BoilerplateClause, BoilerplateSource
from articles.tuning.boilerplate import active_boilerplate, load_shipped
from fingerprints.rule import EngineConfig, extract_many
from fingerprints.rule.boilerplate import SHIPPED, clause_hash, shipped_hashes
from fingerprints.rule.ids import to_signed

pytestmark = pytest.mark.django_db

DISCLAIMER = "以上文章内容仅代表作者本人观点"  # a platform's footer under every post
STORY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
         "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")


def test_the_shipped_file_is_hashes_only_sorted_and_distinct():
    lines = [line for line in SHIPPED.read_text(encoding="ascii").splitlines()
             if line and not line.startswith("#")]
    assert all(len(line) == 16 and int(line, 16) >= 0 for line in lines)
    hashes = shipped_hashes()
    assert hashes == sorted(set(hashes)) and len(hashes) > 1000
    assert clause_hash(DISCLAIMER) in set(hashes)


def test_loading_is_idempotent_and_keeps_an_admins_switch_off():
    first, second = shipped_hashes()[:2]
    BoilerplateClause.objects.create(clause_hash=to_signed(first), text="kept off",
                                     active=False, source=BoilerplateSource.ADMIN)
    out = io.StringIO()
    call_command("load_boilerplate", stdout=out)
    shipped = len(shipped_hashes())
    assert out.getvalue().strip() == f"{shipped - 1} of {shipped} shipped boilerplate " \
                                     "clauses added."
    assert load_shipped() == (0, shipped)
    kept = BoilerplateClause.objects.get(clause_hash=to_signed(first))
    assert not kept.active and kept.text == "kept off"
    active = active_boilerplate(max_age_ms=0)
    assert first not in active and second in active and len(active) == shipped - 1
    assert BoilerplateClause.objects.filter(source=BoilerplateSource.SHIPPED,
                                            text="").count() == shipped - 1


def test_a_fresh_database_with_the_list_strips_the_chrome_a_warm_one_has_learned():
    config = EngineConfig()
    bare, chrome = STORY, STORY + "\n" + DISCLAIMER + "。"
    fresh = extract_many([("绿道贯通", bare), ("绿道贯通", chrome)], config,
                         boilerplate=active_boilerplate(max_age_ms=0))
    assert fresh[0].sketch != fresh[1].sketch  # nothing learned yet: the footer counts
    load_shipped()
    warm = extract_many([("绿道贯通", bare), ("绿道贯通", chrome)], config,
                        boilerplate=active_boilerplate(max_age_ms=0))
    # the footer is gone before the fingerprints; only the chrome share (features
    # version 6) counts what was removed
    assert replace(warm[0], chrome=0) == replace(warm[1], chrome=0)
    assert warm[0].chrome == 0 < (warm[1].chrome or 0)
