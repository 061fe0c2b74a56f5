"""The engine-v3 fit holds out whole decisions: a split fans out into a cannot-link to
every member it leaves, and all those pairs fall on one side of the held-out fifth, so
one editor's decision never both trains the candidate and judges it. The version's
comparison, and the settings preview of a model other than the active one, are scored on
the held-out decisions alone."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from articles.editor import actions
from articles.models import Article, Decision, EditorLink, EngineSettings, LinkKind
from articles.tuning import matcher, preview
from articles.tuning.state import active_config
from fingerprints.rule.match_model import starting_model
from fingerprints.rule.match_training import precision_recall, scores

from .test_settings import settings_form
from .test_train_matcher import POOL, admin_client, post, text  # noqa: F401 (the fixture)

# decision pks from 1 in every run: which decisions hash into the held-out fifth is
# then the same whatever ran before
pytestmark = pytest.mark.django_db(transaction=True, reset_sequences=True)


def docs(client, auth, prefix: str, n: int, members: int, kind: str, seed: int
         ) -> list[list[str]]:
    """``n`` docs of ``members`` articles each: copies of one text, or items of one
    template (its frame with the last fifth replaced)."""
    rng = random.Random(seed)
    made = []
    for i in range(n):
        frame = text(rng, 14)
        title = "".join(rng.choice(POOL) for _ in range(9))
        nids = []
        for m in range(members):
            if kind == "copy":
                body = frame + "（完）" * m
            else:
                body = frame if m == 0 else frame[:int(len(frame) * 0.78)] + text(rng, 8)
            nid = f"{prefix}{i}m{m}"
            post(client, auth, nid, title, body)
            nids.append(nid)
        made.append(nids)
    return made


def decide(client, auth, run_worker) -> None:
    """Copies confirmed (a must-link from the first member to each other), templates
    split (the last member cannot-linked to each other member), one decision each; in
    the first copy doc a member split after the confirm (the later decision's label
    wins), in the second one split and undone (the confirm's label stays)."""
    copies = docs(client, auth, "c", 8, 4, "copy", seed=21)
    templates = docs(client, auth, "t", 8, 4, "template", seed=22)
    run_worker()
    for nids in copies + templates:
        members = Article.objects.filter(nid__in=nids)
        assert len({a.doc_id for a in members}) == 1, nids  # the engine joined each doc
    for nids in copies:
        actions.confirm_doc(Article.objects.get(nid=nids[0]).doc, None)
    for nids in templates:
        actions.split_article(Article.objects.get(nid=nids[-1]), None, "another item")
    actions.split_article(Article.objects.get(nid=copies[0][-1]), None, "not the same")
    actions.split_article(Article.objects.get(nid=copies[1][-1]), None, "oops")
    actions.undo(Decision.objects.order_by("-pk")[0], None)


def labelled_by() -> dict[tuple[str, str], int]:
    """The decision each editors' link is from: the latest not undone that wrote it."""
    out = {}
    for pk, before in (Decision.objects.filter(undone_at__isnull=True).order_by("pk")
                       .values_list("pk", "before")):
        for a, b, _kind in before.get("links", []):
            out[EditorLink.ordered(a, b)] = pk
    return out


def test_every_pair_of_one_decision_falls_on_the_same_side(admin_client, auth,  # noqa: F811
                                                           run_worker):
    decide(admin_client, auth, run_worker)
    # three links no decision wrote (an install's links from before decisions were
    # kept): two share an article, one stands alone
    for a, b in (("t0m0", "t1m0"), ("t1m0", "t2m0"), ("t3m0", "t4m0")):
        EditorLink.objects.create(kind=LinkKind.CANNOT, nid_a=a, nid_b=b)
    found = {p.nids: p for p in matcher.editor_pairs(active_config())}
    assert len(found) == 8 * 3 + 2 + 8 * 3 + 3  # the later split added two
    by = labelled_by()
    of_decision: dict[int, set[bool]] = {}
    for nids, p in found.items():
        if nids in by:
            assert p.held_out == matcher.decision_held_out(by[nids]), nids
            of_decision.setdefault(by[nids], set()).add(p.held_out)
    assert all(len(sides) == 1 for sides in of_decision.values()), of_decision
    fanned = [pk for pk, n in _pairs_per_decision(by).items() if n >= 3]
    assert len(fanned) >= 15  # the splits and confirms labelled three pairs each
    assert {p.held_out for p in found.values()} == {True, False}
    # the later split's labels are its own; the undone split's are the confirm's again
    split = [p for nids, p in found.items() if "c0m3" in nids]
    assert len(split) == 3 and not any(p.example.match for p in split)
    assert {Decision.objects.get(pk=by[p.nids]).action for p in split} == {"split"}
    restored = [p for nids, p in found.items() if "c1m3" in nids]
    assert restored and all(p.example.match for p in restored)
    assert {Decision.objects.get(pk=by[p.nids]).action for p in restored} == {"confirm"}
    # without a decision: held out by connected component
    assert (found[("t0m0", "t1m0")].held_out == found[("t1m0", "t2m0")].held_out)


def _pairs_per_decision(by: dict[tuple[str, str], int]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for pk in by.values():
        counts[pk] = counts.get(pk, 0) + 1
    return counts


def test_the_versions_comparison_is_scored_on_the_held_out_decisions_alone(
        admin_client, auth, run_worker, monkeypatch, rule_model):  # noqa: F811
    """A fit of the rule's levels, scored on the rule's levels: under the rule's model."""
    decide(admin_client, auth, run_worker)
    config = active_config()
    found = {p.nids: p for p in matcher.editor_pairs(config)}
    by = labelled_by()
    held = [p for nids, p in found.items() if matcher.decision_held_out(by[nids])]
    fitted = [p for nids, p in found.items() if not matcher.decision_held_out(by[nids])]
    assert held and fitted

    version = matcher.train()
    assert (version.trained_pairs, version.held_out_pairs) == (len(fitted), len(held))
    report = version.report
    current = config.model
    for threshold, row in zip(report["thresholds"], report["current"], strict=True):
        assert row == precision_recall(scores(current, [p.example for p in held]), threshold)
    proposed = version.model()
    for threshold, row in zip(report["thresholds"], report["proposed"], strict=True):
        assert row == precision_recall(scores(proposed, [p.example for p in held]), threshold)
    editors = report["editors"]
    assert sum(row["fitted"] for row in editors) == len(fitted)
    assert sum(row["heldOut"] for row in editors) == len(held)

    # the bounds' cross-validation folds keep each decision whole too
    read, seen = [], {}
    editor_pairs = matcher.editor_pairs

    def reading(cfg):
        read[:] = editor_pairs(cfg)
        return read

    def fit_bounds(pairs, start, cfg, name, *, keys, strength):
        seen.update(pairs=pairs, keys=keys)
        return replace(start, version=name), []

    monkeypatch.setattr(matcher, "editor_pairs", reading)
    monkeypatch.setattr(matcher, "fit_bounds", fit_bounds)
    matcher.train(bounds=True)
    pair_of = {id(p.pair): p.nids for p in read}
    key_of: dict[int, set[int]] = {}
    for pair, key in zip(seen["pairs"], seen["keys"], strict=True):
        key_of.setdefault(by[pair_of[id(pair)]], set()).add(key)
    assert len(key_of) == len({by[p.nids] for p in fitted})  # no held-out decision
    assert all(len(keys) == 1 for keys in key_of.values()), key_of

    # activating it through the settings: the preview scores the held-out decisions alone
    rows = preview.editor_precision_recall(replace(config, model=proposed))
    assert {row["pairs"] for row in rows} == {len(held)}
    assert {row["pairs"] for row in preview.editor_precision_recall(config)} == {len(found)}
    page = admin_client.post("/admin/articles/enginesettings/preview/",
                             settings_form(match_model=version.pk)).content.decode()
    assert f"only the {len(held)} pairs of the editors' decisions held out" in page
    # a preview activates nothing: the rule's model stays
    assert EngineSettings.load().match_model.version == starting_model().version
