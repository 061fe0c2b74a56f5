"""Retraining without a developer: the watchdog queues a fit of a
candidate vector version when the admin's switch is on and enough new labels exist; the
version records its labels and figures, is flagged when one editor gave more than 60 %
of its labels, and is activated only when the admin allows it, it is not flagged and it
is not worse on any held-out measure."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from articles.ingest import watchdog
from articles.models import EngineSettings, MatchModelVersion, PairLabel
from articles.tuning import editor_audit, matcher, retraining
from articles.tuning.state import active_config
from tests.tuning.test_train_matcher import decide, pairs

PAIRS = 24  # pairs of each kind (copy, template) the fits below are made on

pytestmark = pytest.mark.django_db(transaction=True)


def figures(precision: float | None, recall: float | None) -> dict[str, float | None]:
    f1 = (2 * precision * recall / (precision + recall)
          if precision is not None and recall is not None and precision + recall else None)
    return {"precision": precision, "recall": recall, "f1": f1}


def report(current: dict, proposed: dict, audit: tuple[dict, dict] | None = None) -> dict:
    out = {"thresholds": [0.3, 0.5, 0.7], "threshold": 0.5, "heldOutDecisions": 4,
           "current": [{}, current, {}], "proposed": [{}, proposed, {}],
           "audit": {"answers": 0}}
    if audit is not None:
        out["audit"] = {"answers": 5, "current": audit[0], "proposed": audit[1]}
    return out


def test_a_version_as_good_as_the_active_one_is_not_worse() -> None:
    same = figures(0.9, 0.8)
    assert retraining.worse_on(report(same, same)) == []
    assert retraining.worse_on(report(same, figures(0.95, 0.85))) == []


def test_a_version_worse_on_any_held_out_measure_is_worse() -> None:
    assert retraining.worse_on(report(figures(0.9, 0.8), figures(0.85, 0.9))) == [
        "decisions:precision"]
    better = figures(0.95, 0.9)
    assert retraining.worse_on(report(figures(0.9, 0.8), better,
                                      (figures(0.9, 0.8), figures(0.9, 0.7)))) == [
        "audit:f1", "audit:recall"]


def test_a_version_with_nothing_held_out_is_not_vouched_for() -> None:
    empty = report(figures(0.9, 0.8), figures(0.9, 0.8))
    empty["heldOutDecisions"] = 0
    assert retraining.worse_on(empty) == [retraining.NOTHING_HELD_OUT]


def test_one_editor_giving_more_than_60_percent_of_the_labels_flags_it() -> None:
    rows, flags = editor_audit.label_shares(["anna"] * 7 + ["bo"] * 3, ["bo"])
    assert flags and "70%" in flags[0] and "anna" in flags[0]
    assert {r["editor"]: r["fitted"] for r in rows} == {"anna": 7, "bo": 3}
    assert editor_audit.label_shares(["anna"] * 6 + ["bo"] * 4, [])[1] == []


def test_new_labels_count_decisions_and_sure_answers_since_the_last_fitted_version(
        editors) -> None:
    anna, _bo = editors
    PairLabel.objects.create(nid_a="a", nid_b="b", answer="same", editor=anna)
    PairLabel.objects.create(nid_a="a", nid_b="c", answer="unsure", editor=anna)
    PairLabel.objects.create(nid_a="a", nid_b="d", answer="different", editor=anna)
    assert retraining.new_labels() == 2
    MatchModelVersion.objects.create(version="v-fitted", base="x", weights={},
                                     trained_pairs=10)
    assert retraining.new_labels() == 0
    MatchModelVersion.objects.create(version="shipped", base="x", weights={})  # not fitted
    PairLabel.objects.create(nid_a="e", nid_b="f", answer="same", editor=anna)
    assert retraining.new_labels() == 1


def test_the_switch_and_the_minimum_govern_whether_a_fit_is_due(editors,
                                                                redis_client) -> None:
    anna, _bo = editors
    for i in range(3):
        PairLabel.objects.create(nid_a=f"a{i}", nid_b=f"b{i}", answer="same", editor=anna)
    settings = EngineSettings.load()
    assert settings.retrain_automatically is False and settings.retrain_min_labels == 30
    settings.retrain_min_labels = 3
    settings.save()
    assert not retraining.due()  # the switch is off by default
    assert not watchdog.schedule_retraining()
    settings.retrain_automatically = True
    settings.save()
    assert retraining.due()
    settings.retrain_min_labels = 4
    settings.save()
    assert not retraining.due() and not watchdog.schedule_retraining()
    settings.retrain_min_labels = 3
    settings.save()
    assert watchdog.schedule_retraining()
    assert not watchdog.schedule_retraining()  # at most once in RETRY_SECONDS


def fake_version(monkeypatch, *, flagged: bool, worse: bool) -> MatchModelVersion:
    version = MatchModelVersion.objects.create(
        version="candidate", base="vector-3", weights=active_config().model.as_dict(),
        trained_pairs=20, held_out_pairs=5, flagged=flagged, scheduled=True,
        report=report(figures(0.9, 0.8), figures(0.8 if worse else 0.9, 0.8)))
    monkeypatch.setattr(matcher, "train_vector", lambda **kw: version)
    return version


@pytest.mark.parametrize(("allowed", "flagged", "worse", "activated"), [
    (False, False, False, False),  # the admin's second switch is off (the default)
    (True, True, False, False),
    (True, False, True, False),
    (True, False, False, True),
])
def test_a_scheduled_version_is_activated_only_when_allowed_unflagged_and_not_worse(
        monkeypatch, allowed, flagged, worse, activated) -> None:
    settings = EngineSettings.load()
    assert settings.retrain_activate is False
    settings.retrain_activate = allowed
    settings.save()
    version = fake_version(monkeypatch, flagged=flagged, worse=worse)
    assert watchdog.retrain() == "candidate"
    assert (EngineSettings.load().match_model_id == version.pk) is activated
    automatic = MatchModelVersion.objects.get(pk=version.pk).report["automatic"]
    assert automatic["activated"] is activated
    assert ("flagged" in automatic["notActivated"]) is flagged
    assert ("decisions:precision" in automatic["notActivated"]) is worse


def test_the_watchdog_fits_a_candidate_that_records_its_labels_and_waits(
        admin_client, auth, run_worker, editors) -> None:
    anna, bo = editors
    # 24 pairs of each kind: one decision in five is held out by a hash of its id, and
    # the ids depend on what the database made before; 18 left fewer than the fit's 10
    # splits when other tests had run first
    made = pairs(admin_client, auth, "s", PAIRS, seed=7)
    run_worker()
    decide(made, lambda i: anna if i % 2 else bo)  # two editors, neither with most labels
    settings = EngineSettings.load()
    settings.retrain_automatically = True
    settings.save()
    assert watchdog.tick()["retraining"] == 1
    run_worker()
    version = MatchModelVersion.objects.get()
    assert version.scheduled and version.kind == "vector" and not version.flagged
    assert len(version.labels["decisions"]) + len(version.labels["heldOutDecisions"]) == 2 * PAIRS
    assert version.labels["answers"] == []
    assert {row["editor"] for row in version.report["editors"]} == {"anna", "bo"}
    assert version.report["audit"]["answers"] == 0
    assert version.report["automatic"]["notActivated"][0] == retraining.OFF
    assert EngineSettings.load().match_model is None  # a person activates it
    assert retraining.new_labels() == 0 and not retraining.due()
    page = admin_client.get(f"/admin/articles/matchmodelversion/{version.pk}/change/",
                            HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "自动启用已关闭" in page


def test_a_fit_on_one_editors_labels_is_flagged_and_never_activated(
        admin_client, auth, run_worker, editors) -> None:
    anna, _bo = editors
    made = pairs(admin_client, auth, "f", PAIRS, seed=7)
    run_worker()
    decide(made, lambda i: anna)
    settings = EngineSettings.load()
    settings.retrain_activate = True
    settings.save()
    watchdog.retrain()
    version = MatchModelVersion.objects.get()
    assert version.flagged and "anna" in version.report["flags"][0]
    assert "flagged" in version.report["automatic"]["notActivated"]
    assert EngineSettings.load().match_model is None


@pytest.fixture
def editors(db):
    return (User.objects.create_user("anna", password="pw-long-enough-1"),
            User.objects.create_user("bo", password="pw-long-enough-1"))


@pytest.fixture
def admin_client(client, db):
    User.objects.create_superuser("admin", "a@example.com", "pw-long-enough-1")
    client.login(username="admin", password="pw-long-enough-1")
    return client


def test_the_admin_sets_the_switches_and_the_order(admin_client, redis_client) -> None:
    from tests.tuning.test_settings import settings_form

    url = f"/admin/articles/enginesettings/{EngineSettings.load().pk}/change/"
    page = admin_client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "定时重新训练" in page and "不变差时自动启用" in page and "按模型" in page
    assert admin_client.post(url, settings_form(
        retrain_automatically="on", retrain_min_labels=5, retrain_activate="on",
        review_order="doubt")).status_code == 302
    saved = EngineSettings.load()
    assert saved.retrain_automatically and saved.retrain_activate
    assert (saved.retrain_min_labels, saved.review_order) == (5, "doubt")
