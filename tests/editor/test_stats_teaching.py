"""/stats/ shows what teaching did: labels given per editor and the
held-out precision and recall of each fitted model version over time, both languages."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone

from articles.editor import actions, stats
from articles.models import Decision, MatchModelVersion, PairLabel

pytestmark = pytest.mark.django_db
PASSWORD = "pw-long-enough-1"


def an_editor(name: str) -> User:
    user = User.objects.create_user(name, password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name=actions.EDITORS_GROUP)[0])
    return user


def version(name: str, days_ago: int, precision: float, recall: float) -> MatchModelVersion:
    f1 = 2 * precision * recall / (precision + recall)
    row = {"precision": precision, "recall": recall, "f1": f1}
    made = MatchModelVersion.objects.create(
        version=name, base="vector-3", weights={}, trained_pairs=40, held_out_pairs=9,
        report={"thresholds": [0.5], "threshold": 0.5, "current": [row],
                "proposed": [row]})
    MatchModelVersion.objects.filter(pk=made.pk).update(
        created_at=timezone.now() - timedelta(days=days_ago))
    return made


@pytest.fixture
def taught(db):
    anna, bo = an_editor("anna"), an_editor("bo")
    for i, answer in enumerate(["same", "same", "different", "unsure"]):
        PairLabel.objects.create(nid_a=f"a{i}", nid_b=f"b{i}", answer=answer, editor=anna)
    PairLabel.objects.create(nid_a="x", nid_b="y", answer="same", editor=bo,
                             undone_at=timezone.now())  # taken back: not counted
    Decision.objects.create(action="split", actor=bo, doc_id="d" * 32, before={})
    version("editors-old", 3, 0.81, 0.62)
    version("editors-new", 1, 0.93, 0.74)
    MatchModelVersion.objects.create(version="vector-3", base="vector-0", weights={})
    return anna, bo


def test_labels_are_counted_per_editor_standing_ones_only(taught) -> None:
    rows = {r.editor: r for r in stats.labels_per_editor()}
    assert (rows["anna"].same, rows["anna"].different, rows["anna"].unsure) == (2, 1, 1)
    assert rows["anna"].labels == 3 and rows["bo"].labels == 1
    assert [r.editor for r in stats.labels_per_editor()] == ["anna", "bo"]


def test_each_fitted_version_is_drawn_oldest_first_with_its_held_out_figures(taught):
    versions = stats.versions_over_time()
    assert [v.version for v, _row in versions] == ["editors-old", "editors-new"]
    assert versions[1][1]["precision"] == 0.93


def test_the_page_shows_the_labels_and_the_chart_in_both_languages(client, taught):
    client.login(username="anna", password=PASSWORD)
    page = client.get("/stats/").content.decode()
    assert 'id="labels-per-editor"' in page and "What teaching did" in page
    chart = page[page.index('id="versions-chart"'):]
    assert "<svg" in chart and "polyline" in chart
    assert "editors-old" in chart and "0.930" in chart and "0.740" in chart
    chinese = client.get("/stats/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "教学的成效" in chinese and "每位编辑给出的标注" in chinese
    assert "各模型版本的留出准确率与召回率" in chinese


def test_without_labels_or_versions_it_says_so(client, db):
    an_editor("carl")
    client.login(username="carl", password=PASSWORD)
    page = client.get("/stats/").content.decode()
    assert "No labels yet." in page and "No fitted model version yet." in page
