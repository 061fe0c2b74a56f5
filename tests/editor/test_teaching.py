"""The teaching queue on /review/teach/: single candidate pairs chosen by doubt and
diversity, a random audit stream with its inclusion probabilities, blind answers that
are labels on exactly that pair (and, for an editor, a join or split undone with the
answer), and the labels reaching the vector fit."""

from __future__ import annotations

import random
import re

import pytest

from articles.editor import teaching
from articles.models import Article, Decision, PairLabel
from articles.tuning import matcher
from fingerprints.rule import EngineConfig
from tests.browser import stories
from tests.browser.conftest import PASSWORD, editor  # noqa: F401  (a fixture)

CONFIG = EngineConfig(match_threshold=0.7)


def candidate(n: int, probability: float, shipped: float | None = None,
              family: str = "") -> teaching.Candidate:
    return teaching.Candidate(n, n + 1000, f"a{n}", f"b{n}", family or f"f{n}",
                              probability >= 0.7, probability,
                              probability if shipped is None else shipped)


def test_it_asks_the_pair_nearest_the_threshold_first() -> None:
    pool = [candidate(1, 0.99), candidate(2, 0.65), candidate(3, 0.05)]
    asked = teaching.choose(pool, set(), [], CONFIG, audit_percent=0)
    assert asked is not None and asked.candidate.a == 2
    assert not asked.audit and asked.inclusion_probability is None
    assert asked.threshold == 0.7


def test_disagreement_with_the_shipped_model_pulls_a_pair_forward() -> None:
    pool = [candidate(1, 0.6), candidate(2, 0.95, shipped=0.1)]
    asked = teaching.choose(pool, set(), [], CONFIG, audit_percent=0)
    assert asked is not None and asked.candidate.a == 2


def test_a_family_asked_twice_lately_gives_way_to_another() -> None:
    pool = [candidate(1, 0.7, family="bulletin"), candidate(2, 0.71, family="bulletin"),
            candidate(3, 0.9, family="other")]
    asked = teaching.choose(pool, set(), ["bulletin", "bulletin"], CONFIG, audit_percent=0)
    assert asked is not None and asked.candidate.a == 3
    # once every family is over its share, the most doubtful pair is still asked
    asked = teaching.choose(pool[:2], set(), ["bulletin", "bulletin"], CONFIG,
                            audit_percent=0)
    assert asked is not None and asked.candidate.a == 1


def test_answered_pairs_are_not_asked_again() -> None:
    pool = [candidate(1, 0.7), candidate(2, 0.5)]
    asked = teaching.choose(pool, {("a1", "b1")}, [], CONFIG, audit_percent=0)
    assert asked is not None and asked.candidate.a == 2
    assert teaching.choose(pool, {("a1", "b1"), ("a2", "b2")}, [], CONFIG) is None


def test_an_audit_item_is_a_uniform_draw_with_its_probability_kept() -> None:
    pool = [candidate(n, 0.99) for n in range(1, 11)] + [candidate(11, 0.7)]
    drawn = [teaching.choose(pool, set(), [], CONFIG, random.Random(seed), audit_percent=20)
             for seed in range(400)]
    audits = [a for a in drawn if a is not None and a.audit]
    assert 50 < len(audits) < 110  # about a fifth
    assert all(a.inclusion_probability == pytest.approx(0.2 / 11) for a in audits)
    assert len({a.candidate.a for a in audits}) >= 8  # not only the doubtful one
    assert all(a.candidate.a == 11 for a in drawn if a is not None and not a.audit)


def test_the_signed_token_names_the_pair_and_its_draw_but_not_the_models_view() -> None:
    asked = teaching.Asked(candidate(4, 0.4), True, 0.01, "vector-1", 0.7)
    back = teaching.Asked.from_token(asked.token())
    assert (back.candidate.nid_a, back.candidate.nid_b, back.audit,
            back.inclusion_probability) == ("a4", "b4", True, 0.01)
    # signed, not encrypted: the page's source must not give the verdict away
    assert set(teaching.signing.loads(asked.token(), salt=teaching.SALT)) == {
        "a", "b", "na", "nb", "f", "j", "audit", "pi"}
    assert back.candidate.probability == teaching.UNSCORED
    with pytest.raises(teaching.signing.BadSignature):
        teaching.Asked.from_token(asked.token()[:-2] + "xx")


# --- the desk -------------------------------------------------------------------------


@pytest.fixture
def desk(client, auth, run_worker, editor, settings):  # noqa: F811
    settings.TEACHING_AUDIT_PERCENT = 0
    stories.load(client, auth, run_worker)
    client.login(username="editor", password=PASSWORD)
    return client


def token_of(html: str) -> str:
    match = re.search(r'name="token" value="([^"]+)"', html)
    assert match, "no pair asked"
    return match.group(1)


@pytest.mark.django_db(transaction=True)
def test_the_pool_has_the_pairs_the_engine_proposed_joined_or_not(desk) -> None:
    pool = teaching.candidate_pool()
    assert pool
    docs = dict(Article.objects.values_list("pk", "doc__doc_id"))
    for c in pool:
        assert c.a < c.b and c.family == docs[c.a]
        assert c.joined == (docs[c.a] == docs[c.b])
        assert 0.0 <= c.probability <= 1.0 and 0.0 <= c.shipped <= 1.0


@pytest.mark.django_db(transaction=True)
def test_an_answer_is_blind_then_revealed_and_stored_on_the_pair(desk) -> None:
    page = desk.get("/review/teach/").content.decode()
    assert "The engine said" not in page and "Why this match" not in page
    token = token_of(page)
    asked = teaching.Asked.from_token(token)
    response = desk.post("/review/teach/answer/", {"token": token, "answer": "unsure"})
    html = response.content.decode()
    assert response.status_code == 200 and "The engine said" in html
    assert "Why this match" in html  # the waterfall, after the answer
    label = PairLabel.objects.get()
    assert (label.nid_a, label.nid_b) == (asked.candidate.nid_a, asked.candidate.nid_b)
    assert label.answer == "unsure" and label.editor.username == "editor"
    scored = teaching.rescored(asked)
    assert label.model_version == scored.model_version != ""
    assert label.probability == pytest.approx(scored.candidate.probability)
    assert label.threshold == scored.threshold
    assert not label.audit and label.inclusion_probability is None
    assert label.decision is None  # "not sure" changes nothing
    assert "Your answers: 0 same story, 0 different, 1 not sure." in html
    # the next pair is another one
    assert teaching.Asked.from_token(token_of(desk.get("/review/teach/").content.decode())
                                     ).candidate != asked.candidate


@pytest.mark.django_db(transaction=True)
def test_different_on_a_joined_pair_splits_it_and_undo_puts_it_back(desk) -> None:
    joined = [c for c in teaching.candidate_pool() if c.joined]
    assert joined
    asked = teaching.Asked(joined[0], False, None, "v", 0.7)
    response = desk.post("/review/teach/answer/", {"token": asked.token(),
                                                   "answer": "different"})
    assert "The pair was split into two docIds." in response.content.decode()
    a, b = Article.objects.get(pk=asked.candidate.a), Article.objects.get(pk=asked.candidate.b)
    assert a.doc_pk != b.doc_pk
    label = PairLabel.objects.get()
    assert label.decision is not None and label.decision.action == "split"
    assert desk.post(f"/review/teach/{label.pk}/undo/").status_code == 302
    label.refresh_from_db()
    assert label.undone_at is not None
    assert Decision.objects.get(pk=label.decision_id).undone_at is not None
    a.refresh_from_db()
    b.refresh_from_db()
    assert a.doc_pk == b.doc_pk


@pytest.mark.django_db(transaction=True)
def test_a_forged_pair_or_answer_is_refused(desk) -> None:
    token = token_of(desk.get("/review/teach/").content.decode())
    assert desk.post("/review/teach/answer/", {"token": token + "x",
                                                "answer": "same"}).status_code == 400
    assert desk.post("/review/teach/answer/", {"token": token,
                                                "answer": "maybe"}).status_code == 400
    assert not PairLabel.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_stopping_point_comes_when_the_model_agrees_nearly_always(desk, editor) -> None:  # noqa: F811
    for n in range(20):
        PairLabel.objects.create(nid_a=f"x{n}", nid_b=f"y{n}", editor=editor,
                                 answer="same" if n else "different", probability=0.9,
                                 threshold=0.7)
    progress = teaching.progress(editor)
    assert (progress.agreed, progress.judged, progress.enough) == (19, 20, True)
    assert "A good place to stop" in desk.get("/review/teach/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_answers_reach_the_vector_fit_grouped_by_component(desk, editor) -> None:  # noqa: F811
    nids = list(Article.objects.order_by("pk").values_list("nid", flat=True)[:5])
    PairLabel.objects.create(nid_a=nids[0], nid_b=nids[1], editor=editor, answer="same")
    PairLabel.objects.create(nid_a=nids[1], nid_b=nids[2], editor=editor, answer="different")
    PairLabel.objects.create(nid_a=nids[3], nid_b=nids[4], editor=editor, answer="unsure")
    PairLabel.objects.create(nid_a=nids[3], nid_b=nids[0], editor=editor, answer="same",
                             undone_at="2026-01-01T00:00:00Z")
    found = {p.nids: p for p in matcher.compared_pairs() if p.decision is None}
    assert set(found) == {tuple(sorted(nids[:2])), tuple(sorted(nids[1:3]))}
    assert found[tuple(sorted(nids[:2]))].match is True
    assert found[tuple(sorted(nids[1:3]))].match is False
    assert len({p.group for p in found.values()}) == 1  # one component: held out whole


def test_the_audit_estimate_weighs_each_answer_by_its_inverse_inclusion_probability() -> None:
    rows = [
        ("same", 0.9, 0.7, 0.1),  # true merge, stands for 10 pairs
        ("different", 0.9, 0.7, 0.5),  # false merge, stands for 2
        ("same", 0.2, 0.7, 0.25),  # missed, stands for 4
        ("different", 0.2, 0.7, 0.5),  # true no-merge
        ("unsure", 0.9, 0.7, 0.5),  # not a label
    ]
    found = teaching.audit_estimate(rows)
    assert found.answers == 4
    assert found.precision == pytest.approx(10 / 12)
    assert found.recall == pytest.approx(10 / 14)
    assert teaching.audit_estimate([]).precision is None


@pytest.mark.django_db(transaction=True)
def test_an_audit_answer_keeps_its_inclusion_probability_and_the_page_estimates(desk,
                                                                                settings):
    settings.TEACHING_AUDIT_PERCENT = 100
    token = token_of(desk.get("/review/teach/").content.decode())
    asked = teaching.Asked.from_token(token)
    assert asked.audit and 0 < asked.inclusion_probability <= 1
    html = desk.post("/review/teach/answer/", {"token": token, "answer": "same"}
                     ).content.decode()
    label = PairLabel.objects.get()
    assert label.audit and label.inclusion_probability == pytest.approx(
        asked.inclusion_probability)
    assert "random check" in html and "Random checks: 1 answer" in html


@pytest.mark.django_db(transaction=True)
def test_admins_read_the_answers_and_cannot_edit_them(admin_client, editor) -> None:  # noqa: F811
    label = PairLabel.objects.create(nid_a="x", nid_b="y", editor=editor, answer="same",
                                     audit=True, inclusion_probability=0.02)
    page = admin_client.get("/admin/articles/pairlabel/")
    assert page.status_code == 200 and "0.02" in page.content.decode()
    assert admin_client.get("/admin/articles/pairlabel/add/").status_code == 403
    assert admin_client.post(f"/admin/articles/pairlabel/{label.pk}/change/",
                             {"answer": "different"}).status_code == 403
    label.refresh_from_db()
    assert label.answer == "same"


@pytest.mark.django_db(transaction=True)
def test_same_story_on_a_pair_in_two_docids_joins_the_later_one(desk, editor) -> None:  # noqa: F811
    from articles.editor import actions

    joined = [c for c in teaching.candidate_pool() if c.joined]
    pair = joined[0]
    later = Article.objects.get(pk=pair.b)
    if later.doc.representative_id == later.pk:
        actions.choose_representative(Article.objects.get(pk=pair.a), editor)
        later.refresh_from_db()
    actions.split_article(later, editor, "apart for the test")
    asked = teaching.Asked(pair, False, None, "", 0.7)
    html = desk.post("/review/teach/answer/", {"token": asked.token(), "answer": "same"}
                     ).content.decode()
    assert "moved into the earlier one" in html
    a, b = Article.objects.get(pk=pair.a), Article.objects.get(pk=pair.b)
    assert a.doc_pk == b.doc_pk
    assert PairLabel.objects.get().decision.action == "move"
