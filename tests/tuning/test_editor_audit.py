"""One editor cannot poison the match model unseen: a version fitted mostly on one
editor's decisions (here: 78 % of them, copies split and templates merged) is flagged
with its per-editor agreement and the held-out figures without that editor, shown in the
admin, and never activated by `train_matcher --activate`."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from articles.editor import actions
from articles.models import Article, EditorLink, EngineSettings
from articles.tuning import editor_audit

from .test_train_matcher import admin_client, fitted_versions, pairs  # noqa: F401 (the fixture)

# decision pks from 1 (whichever test ran before): the held-out decisions are the same
# versions of the rule's levels: under the rule's model, activated as an admin would
pytestmark = [pytest.mark.django_db(transaction=True, reset_sequences=True),
              pytest.mark.usefixtures("rule_model")]


def decide(made, poisoner: User, honest: User, poisoned: int) -> None:
    """The first ``poisoned`` pairs of each kind decided wrongly by ``poisoner``, the rest
    rightly by ``honest``."""
    seen = {"copy": 0, "template": 0}
    for kind, _a, b in made:
        second = Article.objects.get(nid=b)
        seen[kind] += 1
        wrong = seen[kind] <= poisoned
        user = poisoner if wrong else honest
        if (kind == "copy") != wrong:
            actions.confirm_doc(second.doc, user)
        else:
            actions.split_article(second, user, "decided")


def test_a_version_fitted_on_one_editors_decisions_is_flagged_and_not_activated(
        admin_client, auth, run_worker):  # noqa: F811
    made = pairs(admin_client, auth, "z", 18, seed=11)
    run_worker()
    poisoner = User.objects.create_user("poisoner", password="pw-long-enough-1")
    honest = User.objects.create_user("honest", password="pw-long-enough-1")
    decide(made, poisoner, honest, poisoned=14)
    before = EngineSettings.load().match_model_id

    out = io.StringIO()
    with pytest.raises(CommandError, match="flagged"):
        call_command("train_matcher", "--activate", stdout=out)
    assert EngineSettings.load().match_model_id == before  # not activated
    assert "Flagged:" in out.getvalue() and "poisoner" in out.getvalue()
    version = fitted_versions().get()
    report = version.report
    rows = {row["editor"]: row for row in report["editors"]}
    assert set(rows) == {"poisoner", "honest"}
    assert rows["poisoner"]["share"] > editor_audit.DOMINANT_SHARE
    assert rows["poisoner"]["fitted"] + rows["honest"]["fitted"] == version.trained_pairs
    # the version learnt the poisoner's answers, against the honest editor's
    assert rows["poisoner"]["proposed"] > rows["poisoner"]["current"], rows
    assert rows["honest"]["proposed"] < rows["poisoner"]["proposed"], rows
    assert report["withoutEditor"]["editor"] == "poisoner"
    page = admin_client.get(f"/admin/articles/matchmodelversion/{version.pk}/change/")
    body = page.content.decode()
    assert "Flagged: one editor" in body and "poisoner" in body
    chinese = admin_client.get(f"/admin/articles/matchmodelversion/{version.pk}/change/",
                               HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "已标记" in chinese


def test_decisions_shared_among_editors_are_not_flagged(admin_client, auth, run_worker):  # noqa: F811
    made = pairs(admin_client, auth, "y", 18, seed=12)
    run_worker()
    first = User.objects.create_user("first", password="pw-long-enough-1")
    second = User.objects.create_user("second", password="pw-long-enough-1")
    decide(made, first, second, poisoned=0)  # all right, by "second" ...
    for n, link in enumerate(EditorLink.objects.order_by("pk")):
        link.created_by = first if n % 2 else second  # ... and then shared half and half
        link.save(update_fields=["created_by"])
    call_command("train_matcher", "--activate", stdout=io.StringIO())
    version = fitted_versions().get()
    assert version.report["flags"] == [] and version.report["withoutEditor"] is None
    assert EngineSettings.load().match_model_id == version.pk
