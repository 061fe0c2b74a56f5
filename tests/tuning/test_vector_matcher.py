"""Engine v4 in the product: a vector model is a match model version an admin can add,
compare and activate; train_matcher --vector fits one to the pairs the engine compared in
the editors' decisions (not every member fanned out), holds out whole decisions and shows
the operating points."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from articles.editor import actions
from articles.index.reindex import apply_settings
from articles.models import Article, Decision, EditorLink, EngineSettings, MatchModelVersion
from articles.tuning import matcher
from articles.tuning.state import active_config, config_from_json, config_to_json
from fingerprints.rule import EngineConfig
from fingerprints.rule.comparison import COMPARISONS
from fingerprints.rule.match_model import starting_model
from fingerprints.rule.vector_model import VectorModel, shipped_vector_model
from tests.tuning.test_train_matcher import decide, pairs, post, text

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_vector_model_round_trips_through_the_settings_state() -> None:
    config = EngineConfig(model=shipped_vector_model(), match_threshold=0.7)
    assert config_from_json(config_to_json(config)) == config
    assert isinstance(config_from_json(config_to_json(config)).model, VectorModel)


def test_an_admin_adds_the_shipped_vector_model_and_activates_it(admin_client, auth,
                                                                 run_worker):
    response = admin_client.post("/admin/articles/matchmodelversion/train/",
                                 {"shipped_vector": "1"})
    version = MatchModelVersion.objects.get()
    assert response.status_code == 302 and version.kind == "vector"
    assert version.model() == shipped_vector_model()
    page = admin_client.get("/admin/articles/matchmodelversion/").content.decode()
    assert "comparison vector (engine v4)" in page
    assert admin_client.get(f"/admin/articles/matchmodelversion/{version.pk}/change/"
                            ).status_code == 200
    explanation = _a_copy_after_activating(admin_client, auth, run_worker, version, "v")
    assert isinstance(EngineSettings.load().engine_config().model, VectorModel)
    assert active_config().model == shipped_vector_model()
    assert explanation["model"] == shipped_vector_model().version
    assert [w["comparison"] for w in explanation["weights"]] == list(COMPARISONS)


def _a_copy_after_activating(admin_client, auth, run_worker, version: MatchModelVersion,
                             prefix: str) -> dict:
    """Activate ``version`` through the admin, post a copy pair, process it: the copy's
    match explanation (the copy joined its original)."""
    assert admin_client.post(
        f"/admin/articles/matchmodelversion/{version.pk}/activate/").status_code == 302
    made = pairs(admin_client, auth, prefix, 1, seed=5)
    run_worker()
    _kind, a, b = made[0]  # the copy pair
    copy = Article.objects.get(nid=b)
    assert copy.doc_id == Article.objects.get(nid=a).doc_id
    return dict(copy.match_explanation)


def test_with_no_version_active_the_engine_decides_with_the_shipped_vector_model():
    assert EngineConfig().model == shipped_vector_model()
    assert EngineSettings.load().match_model is None
    assert EngineSettings.load().engine_config().model == shipped_vector_model()
    assert active_config().model == shipped_vector_model()


def test_an_admin_adds_the_rules_shipped_model_activates_it_and_goes_back(admin_client, auth,
                                                                         run_worker):
    """labels-1 (the rule's levels, the default before the vector's model) stays selectable: added
    as a version, activated, and a rule fit refused until it is active."""
    with pytest.raises(CommandError, match="labels-1"):
        call_command("train_matcher", stdout=io.StringIO())
    page = admin_client.get("/admin/articles/matchmodelversion/").content.decode()
    assert "Add the shipped model of the rule’s levels" in page
    chinese = admin_client.get("/admin/articles/matchmodelversion/",
                               HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "加入随项目提供的规则级别模型" in chinese
    response = admin_client.post("/admin/articles/matchmodelversion/train/",
                                 {"shipped_rule": "1"})
    version = MatchModelVersion.objects.get()
    assert response.status_code == 302 and version.kind == "levels"
    assert version.model() == starting_model()
    assert matcher.shipped_rule_version() == version  # made once
    explanation = _a_copy_after_activating(admin_client, auth, run_worker, version, "r")
    assert active_config().model == starting_model()
    assert explanation["model"] == starting_model().version
    assert explanation["weights"][0]["comparison"] == "body"
    # emptying the field goes back to the default
    apply_settings(matcher.activate(None))
    assert active_config().model == shipped_vector_model()


def test_the_labels_are_the_pairs_the_engine_compared(admin_client, auth, run_worker):
    """Four copies of one story: a split of the last one writes a cannot-link to each
    of the three others, but the engine compared it only with the member it matched
    through and with the anchor."""
    body = text(__import__("random").Random(11), 12)
    for i in range(4):
        post(admin_client, auth, f"c{i}", "同一篇稿件", body + "（完）" * i)
        run_worker()
    last = Article.objects.get(nid="c3")
    assert Article.objects.filter(doc=last.doc).count() == 4
    matched = last.matched_article.nid
    actions.split_article(last, None, "not the same")
    assert EditorLink.objects.filter(kind="cannot").count() == 3
    found = {p.nids: p for p in matcher.compared_pairs()}
    assert set(found) == {EditorLink.ordered("c3", matched), EditorLink.ordered("c3", "c0")}
    decision = Decision.objects.get(action="split")
    assert all(p.decision == decision.pk and not p.match for p in found.values())


def test_editors_decisions_fit_a_vector_version_compared_on_held_out_decisions(
        admin_client, auth, run_worker):
    made = pairs(admin_client, auth, "p", 18, seed=7)
    run_worker()
    decide(made)  # the editors: copies confirmed, templates split
    labelled = matcher.compared_pairs()
    assert len(labelled) == 36  # one compared pair per decision here: b against a
    assert {p.held_out for p in labelled} == {True, False}
    for p in labelled:
        assert p.held_out == matcher.decision_held_out(p.decision)

    out = io.StringIO()
    call_command("train_matcher", "--vector", stdout=out)
    version = MatchModelVersion.objects.get()
    assert version.kind == "vector" and version.base == shipped_vector_model().version
    held = [p for p in labelled if p.held_out]
    assert version.trained_pairs + version.held_out_pairs == 36
    assert version.held_out_pairs == len(held)
    assert "merges, to review" in out.getvalue() and "Not active" in out.getvalue()
    report = version.report
    assert report["grouped"] == "decision"
    for row in report["current"] + report["proposed"]:
        assert row["merges"] == row["tp"] + row["fp"]
        assert 0 <= row["review"] <= row["merges"]
    merges = [row["merges"] for row in report["proposed"]]
    assert merges == sorted(merges, reverse=True)  # a higher threshold never merges more

    page = admin_client.get(f"/admin/articles/matchmodelversion/{version.pk}/change/")
    body = page.content.decode()
    assert page.status_code == 200
    assert "to review" in body and "Whole decisions are held out" in body
    assert "comparison vector (engine v4)" in body
    chinese = admin_client.get(f"/admin/articles/matchmodelversion/{version.pk}/change/",
                               HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "待复核" in chinese and "比较向量（引擎 v4）" in chinese

    apply_settings(matcher.activate(version))
    assert active_config().model == version.model()
    more = pairs(admin_client, auth, "q", 1, seed=99)
    run_worker()
    explained = Article.objects.get(nid=more[0][2]).match_explanation
    assert explained is not None and explained["model"] == version.version


@pytest.fixture
def admin_client(client, db):
    from django.contrib.auth.models import User

    User.objects.create_superuser("admin", "a@example.com", "pw-long-enough-1")
    client.login(username="admin", password="pw-long-enough-1")
    return client


def test_a_refit_is_centred_on_the_model_no_label_was_fitted_to() -> None:
    """Every fit uses every standing label again, so its prior is centred on where the
    chain of fits started, not on a version already fitted to those labels (which would
    count them twice)."""
    from dataclasses import replace

    shipped = shipped_vector_model()

    def version(name: str, base: str, prior: float, trained: int) -> VectorModel:
        model = replace(shipped, version=name, prior=prior)
        MatchModelVersion.objects.create(version=name, base=base, weights=model.as_dict(),
                                         trained_pairs=trained)
        return model

    assert matcher.prior_of(EngineConfig()) == shipped  # the active model is not a vector
    version("editors-1", shipped.version, 1.0, 40)
    second = version("editors-2", "editors-1", 2.0, 80)
    assert matcher.prior_of(EngineConfig(model=second)) == shipped
    # a version no label was fitted to (an admin added it) starts a chain of its own
    added = version("added-1", "vector-0", -3.0, 0)
    third = version("editors-3", "added-1", 0.5, 30)
    found = matcher.prior_of(EngineConfig(model=third))
    assert (found.version, found.prior) == ("added-1", -3.0)
    assert matcher.prior_of(EngineConfig(model=added)) == added
