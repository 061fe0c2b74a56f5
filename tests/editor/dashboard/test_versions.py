"""Two editors at once: an action made on a stale view of a docId is refused.

The page carries the docId's version (Doc.version) in every action form; every editor
decision bumps it. An action whose version is not the current one changes nothing and
lands on the current state with a warning naming who changed the docId.
"""

from __future__ import annotations

import pytest

from articles.editor import actions
from articles.models import Article, AuditEntry, Doc, DocStatus, EditorLink

from .conftest import at_version, doc_of, htmx, login

pytestmark = pytest.mark.django_db


def snapshot() -> tuple:
    """Everything an editor action may change."""
    return (
        sorted(Article.objects.values_list("nid", "doc__doc_id", "pinned", "matched_by")),
        sorted(Doc.objects.values_list("doc_id", "size", "status", "representative__nid",
                                       "representative_pinned", "version")),
        sorted(EditorLink.objects.values_list("kind", "nid_a", "nid_b")),
        AuditEntry.objects.count(),
    )


@pytest.mark.parametrize("action, data", [
    ("confirm", {}),
    ("split", {"nid": "river-3"}),
    ("representative", {"nid": "river-3"}),
    ("release", {}),
    ("move", {"nid": "river-3", "target": "LIBRARY"}),
    ("merge", {"target": "LIBRARY"}),
])
def test_every_action_bumps_the_version_and_refuses_a_stale_one(client, corpus, editor,
                                                                action, data):
    login(client, editor)
    river, library = corpus["river"], corpus["library"]
    data = {k: library.doc_id if v == "LIBRARY" else v for k, v in data.items()}
    if action == "merge":  # the merge form names the target's version too
        data["target_version"] = library.version
    stale = river.version
    # another editor decides first
    actions.choose_representative(Article.objects.get(nid="river-1"), None)
    assert Doc.objects.get(pk=river.pk).version == stale + 1
    before = snapshot()
    response = client.post(f"/clusters/{river.doc_id}/{action}/",
                           {**data, "version": stale}, follow=True)
    assert response.status_code == 200
    html = response.content.decode()
    assert "system changed this cluster (chose the representative) after you opened it" in html
    assert "Nothing was changed" in html
    assert snapshot() == before
    # on the fresh page the same action goes through
    response = client.post(f"/clusters/{river.doc_id}/{action}/", at_version(river, **data))
    assert response.status_code == 302
    assert snapshot() != before
    assert Doc.objects.get(pk=river.pk).version == stale + 2
    if action in ("move", "merge"):
        assert Doc.objects.get(pk=library.pk).version == library.version + 1


def test_an_action_without_a_version_is_refused(client, corpus, editor):
    login(client, editor)
    before = snapshot()
    response = client.post(f"/clusters/{corpus['river'].doc_id}/split/", {"nid": "river-3"},
                           follow=True)
    assert "This page is out of date: reload it and try again." in response.content.decode()
    assert snapshot() == before


def test_a_stale_htmx_action_answers_with_the_current_cluster(client, corpus, editor):
    login(client, editor)
    river = corpus["river"]
    client.post(f"/clusters/{river.doc_id}/split/", at_version(river, nid="river-3"))
    # a second editor's page still shows river-3 and the old version
    response = client.post(f"/clusters/{river.doc_id}/merge/",
                           {"target": corpus["museum"].doc_id, "version": river.version,
                            "target_version": corpus["museum"].version},
                           **htmx("cluster-body"))
    assert response.status_code == 200 and "HX-Redirect" not in response
    html = response.content.decode()
    assert "<html" not in html
    assert "editor changed this cluster (split an article out) after you opened it" in html
    assert 'data-nid="river-3"' not in html  # the fresh view
    assert f'name="version" value="{river.version + 1}"' in html
    assert doc_of("river-1") == river and Doc.objects.get(pk=river.pk).size == 2
    assert doc_of("museum-1").size == 2


def test_a_split_of_an_article_another_editor_moved_is_a_conflict_not_an_error(
        client, corpus, editor):
    login(client, editor)
    river = corpus["river"]
    page_version = river.version
    actions.move_article(Article.objects.get(nid="river-3"), corpus["library"], None)
    response = client.post(f"/clusters/{river.doc_id}/split/",
                           {"nid": "river-3", "version": page_version}, follow=True)
    html = response.content.decode()
    assert "changed this cluster (moved an article) after you opened it" in html
    assert "is not a member" not in html
    assert doc_of("river-3") == corpus["library"]


def test_the_service_checks_the_version_under_the_lock(corpus):
    river = corpus["river"]
    article = Article.objects.get(nid="river-3")
    actions.confirm_doc(river, None, version=river.version)
    before = snapshot()
    for call in (
        lambda: actions.confirm_doc(river, None, version=river.version),
        lambda: actions.split_article(article, None, version=river.version),
        lambda: actions.move_article(article, corpus["library"], None, version=river.version),
        lambda: actions.merge_docs(river, corpus["library"], None, version=river.version),
        lambda: actions.choose_representative(article, None, version=river.version),
        lambda: actions.release_representative(river, None, version=river.version),
    ):
        with pytest.raises(actions.StaleVersion):
            call()
        assert snapshot() == before


def test_merge_results_carry_the_version_of_the_page_that_searched(client, corpus, editor):
    login(client, editor)
    museum = corpus["museum"]
    actions.confirm_doc(museum, None)
    html = client.get(f"/clusters/{museum.doc_id}/",
                      {"merge_q": "图书馆", "version": museum.version},
                      **htmx("merge-results")).content.decode()
    assert f'name="version" value="{museum.version}"' in html
    page = client.get(f"/clusters/{museum.doc_id}/").content.decode()
    assert f'name="version" value="{museum.version + 1}"' in page


def test_a_stale_decision_in_the_review_queue_shows_the_queue_as_it_is(client, corpus, editor):
    login(client, editor)
    xss = doc_of("xss-2")
    actions.split_article(Article.objects.get(nid="xss-2"), None)
    response = client.post(f"/clusters/{xss.doc_id}/confirm/",
                           {"version": xss.version, "next": "/review/?pos=0"},
                           **htmx("review-queue"))
    html = response.content.decode()
    assert "changed this cluster (split an article out) after you opened it" in html
    assert Doc.objects.get(pk=xss.pk).status != DocStatus.CONFIRMED
    assert 'id="review-item-' in html and "xss-2" not in html


def test_the_conflict_is_explained_in_chinese_too(client, corpus, editor):
    login(client, editor)
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/clusters/"})
    river = corpus["river"]
    actions.confirm_doc(river, None)
    html = client.post(f"/clusters/{river.doc_id}/release/", {"version": river.version},
                       follow=True).content.decode()
    assert "您打开此聚类后" in html and "本次操作未做任何更改" in html
    missing = client.post(f"/clusters/{river.doc_id}/release/", follow=True).content.decode()
    assert "此页面已过期：请刷新后重试。" in missing


@pytest.mark.parametrize("code, handled", [(1213, True), (1205, True), (2006, False)])
def test_a_deadlock_between_two_editors_is_a_conflict_not_a_500(client, corpus, editor,
                                                                monkeypatch, code, handled):
    """MySQL rolled the transaction back: say so and show the cluster; any other database
    error still fails loudly."""
    from django.db import OperationalError

    def deadlocked(*args, **kwargs):
        raise OperationalError(code, "Deadlock found when trying to get lock")

    monkeypatch.setattr(actions, "split_article", deadlocked)
    monkeypatch.setattr(actions, "undo", deadlocked)
    login(client, editor)
    river = corpus["river"]
    before = snapshot()
    if not handled:
        with pytest.raises(OperationalError):
            client.post(f"/clusters/{river.doc_id}/split/", at_version(river, nid="river-3"))
        return
    html = client.post(f"/clusters/{river.doc_id}/split/", at_version(river, nid="river-3"),
                       follow=True).content.decode()
    assert "Another editor was changing this cluster at the same moment" in html
    assert snapshot() == before
    decision = actions.confirm_doc(river, None)
    pk = AuditEntry.objects.get(doc_id=river.doc_id, action="confirm").data["decision"]
    html = client.post(f"/decisions/{pk}/undo/", follow=True).content.decode()
    assert "Another editor was changing this cluster at the same moment" in html
    assert decision.status == DocStatus.CONFIRMED
