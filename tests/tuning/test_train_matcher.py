"""The match model learns from the editors: editors split template pairs the engine
joined; train_matcher fits a version that splits them, the admin's comparison shows it
on decisions the fit did not see, and only activation changes what the engine does."""

from __future__ import annotations

import io
import json
import random

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from articles.editor import actions
from articles.models import Article, EngineSettings, MatchModelVersion
from articles.tuning import matcher
from fingerprints.rule.match_model import starting_model

# fits of the rule's levels (and EM on them): under the rule's model, activated as an
# admin would (the default is a model on the comparison vector: test_vector_matcher.py)
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("rule_model")]


def fitted_versions():
    """The versions fitted here (labels-1, added to be activated, is not one)."""
    return MatchModelVersion.objects.exclude(version=starting_model().version)

# common characters: random sentences of them are texts no other test text resembles
POOL = ("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同"
        "工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起"
        "小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形"
        "相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月"
        "公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老")


def text(rng: random.Random, sentences: int) -> str:
    return "".join("".join(rng.choice(POOL) for _ in range(rng.randint(14, 22))) + "。"
                   for _ in range(sentences))


def post(client, auth, nid, title, content):
    response = client.post("/api/v1/articles", content_type="application/json", **auth,
                           data=json.dumps({"nid": nid, "url": f"https://t.example/{nid}",
                                            "title": title, "content": content}))
    assert response.status_code in (200, 202)


def pairs(client, auth, prefix: str, n: int, seed: int) -> list[tuple[str, str, str]]:
    """``n`` copy pairs and ``n`` template pairs (a frame with a quarter of it
    replaced: the "CJK contained" level): [(kind, nid_a, nid_b)]."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        for kind in ("copy", "template"):
            frame = text(rng, 14)
            title = "".join(rng.choice(POOL) for _ in range(9))
            other = frame + "（完）" if kind == "copy" else (
                frame[:int(len(frame) * 0.78)] + text(rng, 8))
            a, b = f"{prefix}{kind[0]}{i}a", f"{prefix}{kind[0]}{i}b"
            post(client, auth, a, title, frame)
            post(client, auth, b, title, other)
            out.append((kind, a, b))
    return out


def decide(made: list[tuple[str, str, str]], editor_of=lambda i: None) -> None:
    """The editors decide each pair of :func:`pairs`: a copy confirmed, a template split
    (``editor_of(i)``: the editor of the i-th pair, None for none)."""
    for i, (kind, _a, b) in enumerate(made):
        second = Article.objects.get(nid=b)
        if kind == "copy":
            actions.confirm_doc(second.doc, editor_of(i))
        else:
            actions.split_article(second, editor_of(i), "another item of the template")


@pytest.fixture
def admin_client(client, db):
    User.objects.create_superuser("admin", "a@example.com", "pw-long-enough-1")
    client.login(username="admin", password="pw-long-enough-1")
    return client


def level(nid: str) -> str:
    return Article.objects.get(nid=nid).match_explanation["weights"][0]["level"]


def held_out(made: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The pairs of ``made`` whose decisions the fit holds out."""
    held = {p.nids for p in matcher.editor_pairs(EngineSettings.load().engine_config())
            if p.held_out}
    return [(kind, a, b) for kind, a, b in made if (a, b) in held]


# decision pks from 1 (whichever test ran before): the held-out decisions are the same
@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_editors_splitting_templates_teach_a_version_that_splits_them(admin_client, auth,
                                                                      run_worker):
    made = pairs(admin_client, auth, "p", 18, seed=7)
    run_worker()
    for kind, a, b in made:
        first, second = Article.objects.get(nid=a), Article.objects.get(nid=b)
        assert first.doc_id == second.doc_id, (kind, a)  # the engine joined every pair
        assert level(b) == ("copy" if kind == "copy" else "cjk-contained")
    decide(made)  # the editors: copies confirmed, templates split
    held = held_out(made)
    assert {kind for kind, _a, _b in held} == {"copy", "template"}  # both kinds held out

    out = io.StringIO()
    call_command("train_matcher", stdout=out)
    version = fitted_versions().get()
    assert version.base == starting_model().version
    assert version.trained_pairs + version.held_out_pairs == 36
    assert "Not active" in out.getvalue()
    model = version.model()
    for labelled in matcher.editor_pairs(EngineSettings.load().engine_config()):
        p = model.score(labelled.example.levels).probability
        assert (p >= 0.5) is labelled.example.match, labelled
    start = starting_model()
    assert model.weight("body", "cjk-contained") < start.weight("body", "cjk-contained")
    at = {row["threshold"]: (row, new) for row, new in zip(
        version.report["current"], version.report["proposed"], strict=True)}
    current, proposed = at[0.5]
    templates_held = sum(1 for kind, _a, _b in held if kind == "template")
    assert current["fp"] == templates_held and proposed["fp"] == 0  # on pairs it never saw
    assert proposed["f1"] > current["f1"] and proposed["recall"] == current["recall"] == 1.0

    # the admin's comparison, before anyone activates it
    page = admin_client.get(f"/admin/articles/matchmodelversion/{version.pk}/change/")
    body = page.content.decode()
    assert page.status_code == 200
    assert "Held-out editors&#x27; decisions by match threshold" in body
    assert "Activate this version" in body and "<svg" in body
    assert f"<td>0.5</td><td>{current['precision']:.3f}</td>" in body
    chinese = admin_client.get(f"/admin/articles/matchmodelversion/{version.pk}/change/",
                               HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "启用此版本" in chinese and "按匹配阈值计算的留出编辑决定" in chinese

    # not active yet: a new template pair still joins
    pairs(admin_client, auth, "q", 1, seed=99)
    run_worker()
    assert Article.objects.get(nid="qt0a").doc_id == Article.objects.get(nid="qt0b").doc_id
    assert admin_client.post(
        f"/admin/articles/matchmodelversion/{version.pk}/activate/").status_code == 302
    settings = EngineSettings.load()
    # (version 2 activated labels-1)
    assert settings.match_model_id == version.pk and settings.version == 3
    pairs(admin_client, auth, "r", 1, seed=123)
    run_worker()
    assert Article.objects.get(nid="rt0a").doc_id != Article.objects.get(nid="rt0b").doc_id
    assert Article.objects.get(nid="rc0a").doc_id == Article.objects.get(nid="rc0b").doc_id
    explained = Article.objects.get(nid="rc0b").match_explanation
    assert explained["model"] == version.version


def test_too_few_decisions_is_a_clear_error_and_creates_nothing(admin_client, auth, run_worker):
    made = pairs(admin_client, auth, "s", 2, seed=3)
    run_worker()
    for _kind, _a, b in made:
        actions.split_article(Article.objects.get(nid=b), None, "no")
    with pytest.raises(CommandError, match="at least 10 of each are needed"):
        call_command("train_matcher")
    with pytest.raises(CommandError, match="--strength must be positive"):
        call_command("train_matcher", "--strength", "0")
    response = admin_client.post("/admin/articles/matchmodelversion/train/", follow=True)
    assert "Not enough data to fit a model" in response.content.decode()
    assert not fitted_versions().exists()
    assert admin_client.get("/admin/articles/matchmodelversion/train/").status_code == 403


def test_a_version_estimated_without_labels_is_compared_on_every_editors_decision(
        admin_client, auth, run_worker, monkeypatch):
    monkeypatch.setattr(matcher, "MIN_PAIRS", 40)  # the default 100 would need 50 pairs
    made = pairs(admin_client, auth, "u", 25, seed=11)
    run_worker()
    for kind, _a, b in made[:6]:
        if kind == "template":
            actions.split_article(Article.objects.get(nid=b), None, "another item")
    with pytest.raises(CommandError, match="at least 40 are needed"):
        call_command("train_matcher", "--unlabelled", "--sample", "20")
    out = io.StringIO()
    from articles.index.reindex import apply_settings

    settings = EngineSettings.load()
    settings.match_threshold, settings.version = 0.63, settings.version + 1
    settings.save()
    apply_settings(settings)  # the admin's save path, without the form
    call_command("train_matcher", "--unlabelled", stdout=out)
    version = fitted_versions().get()
    # the admin's threshold is among those the comparison reports
    assert 0.63 in version.report["thresholds"] and version.report["threshold"] == 0.63
    assert "estimated without labels (EM) from" in out.getvalue()
    assert version.trained_pairs >= 40 and version.held_out_pairs == 3  # the three splits
    assert version.report["current"][0]["fp"] == 3  # the active model joined all three
    # not active until asked: the rule's model stays
    assert EngineSettings.load().match_model.version == starting_model().version
    model = version.model()
    # the copies the replay saw are its matches, the unrelated pairs not
    assert model.score([("body", "copy"), ("numbers", "none-shared"),
                        ("names", "none-shared")]).probability > 0.5
    assert model.score([("body", "different")]).probability < 0.5
    page = admin_client.get("/admin/articles/matchmodelversion/")
    assert "Estimate a version without labels (EM)" in page.content.decode()


WORDS = ("收盘", "成交", "上涨", "下跌", "人口", "面积", "产量", "收入", "支出", "利润")


def report(seed: float, figures: list[int]) -> str:
    """A report of ten figures, each after its own word (a number in context)."""
    rng = random.Random(seed)
    return "".join(text(rng, 1)[:-1] + "，" + word + str(n) + "。"
                   for word, n in zip(WORDS, figures, strict=True))


def figure_pairs(client, auth, prefix: str, n: int, seed: int) -> list[tuple[str, str, str]]:
    """``n`` reposts that correct one figure of ten and ``n`` reports of another day with
    two figures of ten changed: both reach "copy" with "numbers: some-differ" at the
    shipped bounds (two in ten is not more than guard_conflicts, 0.2), so no weight
    can tell them apart; a guard share between 0.1 and 0.2 can."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        for kind, changed in (("repost", 1), ("other-day", 2)):
            figures = [rng.randint(100, 9999) for _ in WORDS]
            other = list(figures)
            for j in rng.sample(range(len(WORDS)), changed):
                other[j] += 1
            body = rng.random()
            title = "".join(rng.choice(POOL) for _ in range(9))
            a, b = f"{prefix}{kind[0]}{i}a", f"{prefix}{kind[0]}{i}b"
            post(client, auth, a, title, report(body, figures))
            post(client, auth, b, title, report(body, other))
            out.append((kind, a, b))
    return out


@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_a_version_fitted_with_its_bounds_tells_apart_what_no_weight_can(admin_client, auth,
                                                                         run_worker):
    made = figure_pairs(admin_client, auth, "b", 18, seed=5)
    run_worker()
    for kind, a, b in made:
        second = Article.objects.get(nid=b)
        assert Article.objects.get(nid=a).doc_id == second.doc_id
        weights = second.match_explanation["weights"]
        assert [w["level"] for w in weights[:2]] == ["copy", "some-differ"], kind
        if kind == "repost":
            actions.confirm_doc(second.doc, None)
        else:
            actions.split_article(second, None, "the report of another day")
    held_templates = sum(1 for kind, _a, _b in held_out(made) if kind == "other-day")
    assert held_templates and held_templates < 18

    call_command("train_matcher")  # weights only: one level holds both kinds
    weights_only = fitted_versions().get()
    # the admin's button: a background job (the search re-verifies every pair per value)
    response = admin_client.post("/admin/articles/matchmodelversion/train/",
                                 {"bounds": "1"}, follow=True)
    assert "Fitting a version with its level bounds in the background" in \
        response.content.decode()
    assert fitted_versions().count() == 1  # not yet
    run_worker()
    fitted = fitted_versions().exclude(pk=weights_only.pk).get()
    assert fitted.created_by is not None and fitted.created_by.username == "admin"
    start = starting_model().bounds
    moved = {name for name, value in fitted.model().bounds.as_dict().items()
             if value != getattr(start, name)}
    assert "guard_conflicts" in moved, moved
    assert 0.1 <= fitted.model().bounds.guard_conflicts < 0.2
    assert "level bounds by 5-fold cross-validation" in fitted.weights["description"]
    at = {row["threshold"]: (row, new) for row, new in zip(
        fitted.report["current"], fitted.report["proposed"], strict=True)}
    current, proposed = at[0.5]
    assert current["fp"] == held_templates and proposed["fp"] == 0  # on pairs it never saw
    assert proposed["recall"] == 1.0
    plain = dict(zip(weights_only.report["thresholds"], weights_only.report["proposed"],
                     strict=True))[0.5]
    assert proposed["f1"] > plain["f1"]  # the bounds did what the weights could not

    # the admin sees the moved bounds before activating, in both languages
    page = admin_client.get(f"/admin/articles/matchmodelversion/{fitted.pk}/change/")
    body = page.content.decode()
    assert "Level bounds" in body and 'class="model-bounds"' in body
    name = sorted(moved)[0]
    value = fitted.model().bounds.as_dict()[name]
    assert f'<tr class="moved"><td>{name}</td><td>{getattr(start, name)}</td>' \
           f'<td><strong>{value}</strong></td></tr>' in body
    chinese = admin_client.get(f"/admin/articles/matchmodelversion/{fitted.pk}/change/",
                               HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "级别边界" in chinese
    listing = admin_client.get("/admin/articles/matchmodelversion/").content.decode()
    assert "Fit a new version, level bounds included" in listing

    matcher_settings = matcher.activate(fitted)
    from articles.index.reindex import apply_settings

    apply_settings(matcher_settings)
    figure_pairs(admin_client, auth, "c", 1, seed=77)
    run_worker()
    assert Article.objects.get(nid="co0a").doc_id != Article.objects.get(nid="co0b").doc_id
    assert Article.objects.get(nid="cr0a").doc_id == Article.objects.get(nid="cr0b").doc_id


def test_bounds_need_labels(admin_client, auth, run_worker) -> None:
    with pytest.raises(CommandError, match="--bounds needs labels"):
        call_command("train_matcher", "--bounds", "--unlabelled")
    with pytest.raises(CommandError, match="at least 10 of each are needed"):
        call_command("train_matcher", "--bounds")
    # the admin says so at once, and queues nothing
    response = admin_client.post("/admin/articles/matchmodelversion/train/",
                                 {"bounds": "1"}, follow=True)
    assert "Not enough data to fit a model" in response.content.decode()
    assert run_worker() == 0 and not fitted_versions().exists()
