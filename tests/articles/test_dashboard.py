"""The editor pages: /clusters/, /clusters/<docId>/, /review/ and the actions.

The articles go through the real API and a real RQ worker (tests/browser/stories.py),
so the clusters are the ones the engine makes.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import reverse

from articles import editing
from articles.models import Article, AuditEntry, Doc, DocStatus, EditorLink, LinkKind
from tests.browser import stories

# One corpus per module, loaded through the API and a real worker; every test runs in a
# transaction that is rolled back, so each starts from the same clusters.
pytestmark = pytest.mark.django_db

PASSWORD = "pw-12345-long"
HTMX = {"HTTP_HX_REQUEST": "true"}


def htmx(target: str) -> dict[str, str]:
    return {**HTMX, "HTTP_HX_TARGET": target}


def _run_worker() -> int:
    import django_rq
    from rq import SimpleWorker

    queues = [django_rq.get_queue(name) for name in ("ingest", "push", "default")]
    SimpleWorker(queues, connection=queues[0].connection).work(burst=True, with_scheduler=False)
    return 0


@pytest.fixture(scope="module")
def corpus_ids(django_db_setup, django_db_blocker, tmp_path_factory) -> dict[str, str]:
    import redis
    from django.conf import settings
    from django.core.management import call_command
    from django.test import override_settings

    from articles import redis_store, representatives
    from articles.models import ApiKey

    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    redis_store.reset_client()
    store = tmp_path_factory.mktemp("reps") / "reps.sqlite3"
    with django_db_blocker.unblock(), override_settings(LOCAL_REPRESENTATIVE_STORE=store):
        representatives.store.cache_clear()
        _key, plaintext = ApiKey.issue("dashboard tests")
        stories.load(Client(), {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"}, _run_worker)
        ids = {key: Article.objects.get(nid=f"{key}-1").doc.doc_id
               for key in ("river", "library", "museum", "xss")}
        representatives.store.cache_clear()
    yield ids
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    redis_store.reset_client()


@pytest.fixture
def corpus(corpus_ids, db) -> dict[str, Doc]:
    docs = {key: Doc.objects.select_related("representative").get(doc_id=doc_id)
            for key, doc_id in corpus_ids.items()}
    assert [docs[k].size for k in ("river", "library", "museum", "xss")] == [3, 2, 2, 2]
    return docs


@pytest.fixture
def auth(db) -> dict[str, str]:
    from articles.models import ApiKey

    _key, plaintext = ApiKey.issue("dashboard reader")
    return {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"}


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def editor(db) -> User:
    user = User.objects.create_user("editor", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name=editing.EDITORS_GROUP)[0])
    return user


@pytest.fixture
def viewer(db) -> User:
    return User.objects.create_user("viewer", password=PASSWORD, is_staff=True)


def login(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


def doc_of(nid: str) -> Doc:
    return Article.objects.select_related("doc").get(nid=nid).doc


# --- access ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/clusters/", "/clusters/abc/", "/review/"])
def test_the_pages_send_a_logged_out_user_to_the_login_page(client, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_an_action_sends_a_logged_out_user_to_the_login_page(client, corpus):
    response = client.post(f"/clusters/{corpus['river'].doc_id}/confirm/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert doc_of("river-1").status != DocStatus.CONFIRMED


def test_an_htmx_request_after_the_session_ended_reloads_on_the_login_page(client, db):
    response = client.get("/clusters/", {"q": "x"}, **htmx("cluster-rows"))
    assert response.status_code == 204
    assert response["HX-Redirect"] == "/accounts/login/?next=%2Fclusters%2F%3Fq%3Dx"


def test_a_user_who_is_neither_staff_nor_editor_is_refused(client, corpus):
    login(client, User.objects.create_user("reader", password=PASSWORD))
    assert client.get("/clusters/").status_code == 403
    assert client.get(f"/clusters/{corpus['river'].doc_id}/").status_code == 403
    assert client.get("/review/").status_code == 403


@pytest.mark.parametrize("action, data", [
    ("confirm", {}),
    ("split", {"nid": "river-3"}),
    ("representative", {"nid": "river-3"}),
    ("release", {}),
    ("move", {"nid": "river-3", "target": "LIBRARY"}),
    ("merge", {"target": "LIBRARY"}),
])
def test_staff_who_are_not_editors_may_look_but_every_action_is_403(client, corpus, viewer,
                                                                   action, data):
    login(client, viewer)
    doc = corpus["river"]
    page = client.get(f"/clusters/{doc.doc_id}/")
    assert page.status_code == 200
    assert f'action="/clusters/{doc.doc_id}/split/"' not in page.content.decode()
    data = {k: corpus["library"].doc_id if v == "LIBRARY" else v for k, v in data.items()}
    response = client.post(f"/clusters/{doc.doc_id}/{action}/", data)
    assert response.status_code == 403
    assert doc_of("river-3").doc_id == doc.doc_id
    assert Doc.objects.get(pk=doc.pk).status == doc.status
    assert not AuditEntry.objects.filter(doc_id=doc.doc_id).exists()


def test_actions_are_post_only(client, corpus, editor):
    login(client, editor)
    response = client.get(f"/clusters/{corpus['river'].doc_id}/confirm/")
    assert response.status_code == 405


def test_an_action_without_the_csrf_token_is_refused(corpus, editor):
    browser = Client(enforce_csrf_checks=True)
    login(browser, editor)
    url = f"/clusters/{corpus['river'].doc_id}/confirm/"
    assert browser.post(url).status_code == 403
    assert doc_of("river-1").status != DocStatus.CONFIRMED
    page = browser.get(f"/clusters/{corpus['river'].doc_id}/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    assert browser.post(url, {"csrfmiddlewaretoken": token}).status_code == 302
    assert doc_of("river-1").status == DocStatus.CONFIRMED
    # htmx sends the token in a header, from the body's hx-headers.
    header = re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)
    response = browser.post(url, HTTP_X_CSRFTOKEN=header, **htmx("cluster-body"))
    assert response.status_code == 200


# --- /clusters/ ---------------------------------------------------------------------


def test_the_cluster_list_shows_each_doc_with_its_representative(client, corpus, viewer):
    login(client, viewer)
    response = client.get("/clusters/")
    assert response.status_code == 200
    html = response.content.decode()
    for doc in corpus.values():
        assert doc.doc_id in html
    assert "滨江绿道贯通（转载）" in html  # river's representative (hottest member)
    assert "City Daily" in html
    assert "4 clusters" in html


def test_the_cluster_list_filters(client, corpus, viewer):
    login(client, viewer)
    editing.confirm_doc(corpus["library"], None)

    def listed(**params) -> set[str]:
        html = client.get("/clusters/", params).content.decode()
        return {d for d in (doc.doc_id for doc in corpus.values()) if d in html}

    every = {doc.doc_id for doc in corpus.values()}
    assert listed() == every
    assert listed(status="confirmed") == {corpus["library"].doc_id}
    assert listed(status="auto") == every - {corpus["library"].doc_id}
    assert listed(q="图书馆") == {corpus["library"].doc_id}
    assert listed(q=corpus["museum"].doc_id) == {corpus["museum"].doc_id}
    assert listed(media="News Aggregator") == {corpus["river"].doc_id, corpus["museum"].doc_id}
    assert listed(min_size=3) == {corpus["river"].doc_id}
    assert listed(max_size=2) == every - {corpus["river"].doc_id}
    assert listed(min_size=1, max_size=1) == set()
    assert listed(seen_from="2000-01-01", seen_to="2000-01-02") == set()
    assert listed(seen_from="2000-01-01") == every
    # an invalid value is reported, not a 500
    response = client.get("/clusters/", {"min_size": "lots", "seen_from": "yesterday"})
    assert response.status_code == 200


def test_the_cluster_list_sorts_and_pages(client, corpus, viewer, monkeypatch):
    from articles import views

    login(client, viewer)
    html = client.get("/clusters/", {"sort": "-size"}).content.decode()
    assert html.index(corpus["river"].doc_id) < html.index(corpus["library"].doc_id)
    html = client.get("/clusters/", {"sort": "size"}).content.decode()
    assert html.index(corpus["river"].doc_id) > html.index(corpus["library"].doc_id)
    monkeypatch.setattr(views, "PAGE_SIZE", 3)
    first = client.get("/clusters/", {"sort": "-size"}).content.decode()
    assert "Page 1 of 2" in first
    assert "sort=-size&amp;page=2" in first
    second = client.get("/clusters/", {"sort": "-size", "page": 2}).content.decode()
    assert second.count('class="doc-id"') == 1


def test_an_htmx_request_gets_only_the_rows(client, corpus, viewer):
    login(client, viewer)
    response = client.get("/clusters/", {"q": "图书馆"}, **htmx("cluster-rows"))
    html = response.content.decode()
    assert "<html" not in html and "<form" not in html
    assert corpus["library"].doc_id in html
    assert corpus["river"].doc_id not in html
    assert "HX-Target" in response["Vary"]


def test_the_cluster_list_runs_a_fixed_number_of_queries(client, corpus, viewer,
                                                        django_assert_max_num_queries):
    login(client, viewer)
    with django_assert_max_num_queries(6):  # session, user, groups, count, page
        client.get("/clusters/")


# --- /clusters/<docId>/ -------------------------------------------------------------


def test_the_cluster_page_shows_members_distances_diff_and_keywords(client, corpus, viewer):
    login(client, viewer)
    doc = corpus["river"]
    response = client.get(f"/clusters/{doc.doc_id}/")
    assert response.status_code == 200
    html = response.content.decode()
    for nid in ("river-1", "river-2", "river-3"):
        assert nid in html
    for media in ("Evening Courier", "City Daily", "News Aggregator"):
        assert media in html
    assert "representative" in html
    assert "(d=0)" in html  # the stored match distance
    assert "100%" in html  # river-1 is an exact copy of the representative
    # the default comparison: the first member after the representative
    assert "Differences from the representative" in html
    assert "<del>" in html or "<ins>" in html
    assert 'class="kw"' in html and "滨江" in html
    assert "No editor decisions yet." in html


def test_a_member_can_be_compared_with_the_representative(client, corpus, viewer):
    login(client, viewer)
    doc = corpus["river"]
    response = client.get(f"/clusters/{doc.doc_id}/", {"compare": "river-3"}, **htmx("diff"))
    html = response.content.decode()
    assert "<html" not in html and "<table" not in html
    assert "river-3" in html
    # river-3 reworded "骑行" as "骑车、跑步": word by word, each on its own side
    assert "<del>骑行</del>" in html
    assert "<ins>骑车、跑步</ins>" in html and "<ins>（完）</ins>" in html
    # the titles too (the representative, river-2, is a repost under another title)
    assert "<del>贯通（转载）</del>" in html
    # the same diff without htmx: the whole page
    page = client.get(f"/clusters/{doc.doc_id}/", {"compare": "river-3"}).content.decode()
    assert "<html" in page and "<ins>骑车、跑步</ins>" in page


def test_an_unknown_doc_id_is_404(client, viewer, db):
    login(client, viewer)
    assert client.get("/clusters/0000000000000000-0000000000000000/").status_code == 404


# --- actions ------------------------------------------------------------------------


def test_confirm_marks_the_doc_confirmed_pins_its_members_and_is_audited(client, corpus, editor):
    login(client, editor)
    doc = corpus["river"]
    response = client.post(f"/clusters/{doc.doc_id}/confirm/", {"note": "checked"})
    assert response.status_code == 302
    assert response["Location"] == f"/clusters/{doc.doc_id}/"
    doc.refresh_from_db()
    assert doc.status == DocStatus.CONFIRMED
    assert set(Article.objects.filter(doc=doc).values_list("pinned", flat=True)) == {True}
    entry = AuditEntry.objects.get(doc_id=doc.doc_id)
    assert (entry.action, entry.actor_label, entry.note) == ("confirm", "editor", "checked")
    page = client.get(response["Location"]).content.decode()
    assert "Confirmed docId" in page
    assert "confirmed the cluster" in page and "checked" in page


def test_split_moves_a_member_into_a_new_doc_id(client, corpus, editor, auth):
    login(client, editor)
    doc = corpus["river"]
    response = client.post(f"/clusters/{doc.doc_id}/split/", {"nid": "river-3"})
    assert response.status_code == 302
    new = doc_of("river-3")
    assert new.doc_id != doc.doc_id and new.size == 1
    doc.refresh_from_db()
    assert doc.size == 2
    assert EditorLink.objects.filter(kind=LinkKind.CANNOT).count() == 2
    api = client.get("/api/v1/articles/river-3", **auth).json()
    assert api["docId"] == new.doc_id
    assert api["matchedBy"] == "editor"
    page = client.get(f"/clusters/{doc.doc_id}/").content.decode()
    assert new.doc_id in page  # in the message and the history


def test_splitting_the_only_member_is_reported_not_a_500(client, corpus, editor):
    login(client, editor)
    client.post(f"/clusters/{corpus['library'].doc_id}/split/", {"nid": "library-2"})
    single = doc_of("library-2")
    response = client.post(f"/clusters/{single.doc_id}/split/", {"nid": "library-2"},
                           follow=True)
    assert response.status_code == 200
    assert "only member" in response.content.decode()
    assert doc_of("library-2") == single


def test_an_article_of_another_doc_cannot_be_split_from_this_one(client, corpus, editor):
    login(client, editor)
    response = client.post(f"/clusters/{corpus['river'].doc_id}/split/",
                           {"nid": "library-2"}, follow=True)
    assert "is not a member of this docId" in response.content.decode()
    assert doc_of("library-2") == corpus["library"]


def test_move_puts_a_member_into_another_doc(client, corpus, editor):
    login(client, editor)
    source, target = corpus["river"], corpus["library"]
    response = client.post(f"/clusters/{source.doc_id}/move/",
                           {"nid": "river-3", "target": f" {target.doc_id.upper()} "})
    assert response.status_code == 302
    assert response["Location"] == f"/clusters/{source.doc_id}/"
    assert doc_of("river-3") == target
    target.refresh_from_db()
    assert target.size == 3


def test_move_to_an_unknown_doc_id_is_reported(client, corpus, editor):
    login(client, editor)
    response = client.post(f"/clusters/{corpus['river'].doc_id}/move/",
                           {"nid": "river-3", "target": "nope"}, follow=True)
    assert "No docId nope." in response.content.decode()
    assert doc_of("river-3") == corpus["river"]


def test_merge_moves_every_member_and_lands_on_the_target(client, corpus, editor):
    login(client, editor)
    source, target = corpus["museum"], corpus["library"]
    response = client.post(f"/clusters/{source.doc_id}/merge/", {"target": target.doc_id})
    assert response.status_code == 302
    assert response["Location"] == f"/clusters/{target.doc_id}/"
    assert doc_of("museum-1") == doc_of("museum-2") == target
    target.refresh_from_db()
    assert (target.size, target.status) == (4, DocStatus.CONFIRMED)
    # the emptied docId says where its articles went
    page = client.get(f"/clusters/{source.doc_id}/").content.decode()
    assert "no articles any more" in page and target.doc_id in page


def test_merge_search_finds_other_clusters_by_title_and_doc_id(client, corpus, editor):
    login(client, editor)
    source = corpus["museum"]
    html = client.get(f"/clusters/{source.doc_id}/", {"merge_q": "图书馆"},
                      **htmx("merge-results")).content.decode()
    assert "<html" not in html
    assert corpus["library"].doc_id in html and corpus["river"].doc_id not in html
    assert f'action="/clusters/{source.doc_id}/merge/"' in html
    by_prefix = client.get(f"/clusters/{source.doc_id}/",
                           {"merge_q": corpus["river"].doc_id[:8]}).content.decode()
    assert f'value="{corpus["river"].doc_id}"' in by_prefix
    # never itself
    itself = client.get(f"/clusters/{source.doc_id}/", {"merge_q": source.doc_id[:10]},
                        **htmx("merge-results")).content.decode()
    assert "No other cluster matches." in itself


def test_choose_and_release_the_representative(client, corpus, editor):
    login(client, editor)
    doc = corpus["river"]
    assert doc.representative.nid == "river-2"
    client.post(f"/clusters/{doc.doc_id}/representative/", {"nid": "river-3"})
    doc.refresh_from_db()
    assert (doc.representative.nid, doc.representative_pinned) == ("river-3", True)
    page = client.get(f"/clusters/{doc.doc_id}/").content.decode()
    assert "representative chosen by an editor" in page
    client.post(f"/clusters/{doc.doc_id}/release/")
    doc.refresh_from_db()
    assert (doc.representative.nid, doc.representative_pinned) == ("river-2", False)
    actions = list(AuditEntry.objects.filter(doc_id=doc.doc_id).values_list("action", flat=True))
    assert actions == ["representative_released", "representative"]


def test_an_htmx_action_answers_with_the_updated_cluster_fragment(client, corpus, editor):
    login(client, editor)
    doc = corpus["river"]
    response = client.post(f"/clusters/{doc.doc_id}/split/", {"nid": "river-3"},
                           **htmx("cluster-body"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html
    assert "Split river-3 out into the new docId" in html
    assert 'data-nid="river-3"' not in html
    merged = client.post(f"/clusters/{doc.doc_id}/merge/", {"target": corpus["museum"].doc_id},
                         **htmx("cluster-body"))
    assert merged["HX-Redirect"] == f"/clusters/{corpus['museum'].doc_id}/"


# --- /review/ -----------------------------------------------------------------------


def queued(html: str) -> list[str]:
    return re.findall(r'data-diff-url="/clusters/[^/]+/\?compare=([^"]+)"', html)


def test_the_review_queue_lists_borderline_matches_and_counts_down(client, corpus, editor):
    login(client, editor)
    html = client.get("/review/").content.decode()
    assert re.search(r'id="review-count" data-count="2"', html)
    # exact copies (library-2, museum-2, river-2) have nothing to look at; river-1 and
    # xss-1 founded their docIds
    assert queued(html) == ["river-3", "xss-2"]
    assert "matched by title" in html
    assert "Differences from the representative" in html  # the selected item's diff

    xss_doc = doc_of("xss-2")
    response = client.post(f"/clusters/{xss_doc.doc_id}/confirm/", {"next": "/review/?pos=0"},
                           **htmx("review-queue"))
    html = response.content.decode()
    assert "<html" not in html
    assert 'data-count="1"' in html and queued(html) == ["river-3"]

    response = client.post(f"/clusters/{corpus['river'].doc_id}/split/",
                           {"nid": "river-3", "next": "/review/?pos=0"})
    assert response.status_code == 302 and response["Location"] == "/review/?pos=0"
    html = client.get("/review/").content.decode()
    assert 'data-count="0"' in html and "Nothing to review" in html


def test_a_large_cluster_or_a_near_threshold_match_is_queued(client, corpus, editor):
    Article.objects.filter(nid="library-2").update(distance=2)
    login(client, editor)
    html = client.get("/review/").content.decode()
    assert "library-2" in queued(html) and "distance near the threshold" in html
    Article.objects.filter(nid="library-2").update(distance=0)
    Article.objects.filter(nid="museum-2").update(similarity=0.6)
    html = client.get("/review/").content.decode()
    assert queued(html) == ["museum-2", "river-3", "xss-2"]  # the least similar first
    assert "low similarity" in html
    Article.objects.filter(nid="museum-2").update(similarity=1.0)
    from articles import review

    Doc.objects.filter(pk=corpus["museum"].pk).update(size=review.rules().cluster_size)
    html = client.get("/review/").content.decode()
    assert "museum-2" in queued(html) and "large cluster" in html


def test_the_review_item_position_is_kept_within_the_queue(client, corpus, editor):
    login(client, editor)
    html = client.get("/review/", {"pos": 1}).content.decode()
    assert re.search(r'class="review-item card selected"[^>]*\n\s*data-index="1"', html)
    html = client.get("/review/", {"pos": 99}).content.decode()
    assert re.search(r'class="review-item card selected"[^>]*\n\s*data-index="1"', html)
    assert client.get("/review/", {"pos": "x"}).status_code == 200


def test_a_next_url_off_site_is_ignored(client, corpus, editor):
    login(client, editor)
    response = client.post(f"/clusters/{corpus['river'].doc_id}/confirm/",
                           {"next": "https://evil.example/review/"})
    assert response["Location"] == f"/clusters/{corpus['river'].doc_id}/"


# --- untrusted text ------------------------------------------------------------------


DANGEROUS = ["<script>", 'onmouseover="alert', "<img src=x", "<svg onload", "onerror=alert",
             'href="javascript:']


def assert_inert(html: str) -> None:
    for needle in DANGEROUS:
        assert needle not in html, needle
    # the only scripts are the project's own static files
    assert re.findall(r"<script\b[^>]*>", html) == re.findall(
        r'<script src="/static/[a-z/.]+\.js" defer>', html)
    # every attribute value the crawled text reached stays inside its quotes
    assert '" onmouseover=' not in html


def test_crawled_markup_is_inert_on_every_page(client, corpus, editor):
    login(client, editor)
    doc = doc_of("xss-1")
    Article.objects.filter(nid="xss-2").update(url="javascript:alert(7)")  # not via the API
    pages = {
        "list": client.get("/clusters/"),
        "list-search": client.get("/clusters/", {"q": "script"}, **htmx("cluster-rows")),
        "detail": client.get(f"/clusters/{doc.doc_id}/"),
        "diff": client.get(f"/clusters/{doc.doc_id}/", {"compare": "xss-2"}, **htmx("diff")),
        "review": client.get("/review/"),
        "review-diff": client.get(f"/clusters/{doc.doc_id}/", {"compare": "xss-2"},
                                  **htmx("review-diff")),
        "merge": client.get(f"/clusters/{corpus['river'].doc_id}/", {"merge_q": "script"}),
    }
    for name, response in pages.items():
        assert response.status_code == 200, name
        html = response.content.decode()
        assert_inert(html)
        assert "&quot; onmouseover=&quot;alert(" in html, name  # shown, escaped
    for name in ("list", "detail", "review"):
        assert "&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt;" in pages[name].content.decode()
    # a crawled https URL with markup is escaped inside href; a javascript: URL is no link
    detail = pages["detail"].content.decode()
    assert 'href="https://news.example/xss-1?q=&quot;&gt;&lt;script&gt;' in detail
    assert "javascript:alert(7)" in detail and 'href="javascript' not in detail


# --- language ------------------------------------------------------------------------


def test_the_language_switch_shows_the_pages_in_chinese(client, corpus, editor):
    login(client, editor)
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/review/"})
    assert response.status_code == 302 and response["Location"] == "/review/"
    html = client.get("/review/").content.decode()
    assert '<html lang="zh-hans">' in html
    assert "审核队列" in html
    assert "聚类" in client.get("/clusters/").content.decode()
    client.post("/i18n/setlang/", {"language": "en", "next": "/clusters/"})
    assert "Review queue" in client.get("/review/").content.decode()


def test_the_nav_links_every_page(client, corpus, viewer):
    login(client, viewer)
    html = client.get("/clusters/").content.decode()
    for url in (reverse("clusters"), reverse("review"), reverse("admin:index"),
                reverse("set_language"), reverse("logout")):
        assert f'"{url}"' in html


def test_the_review_rules_are_the_admins(client, corpus, editor):
    from articles.models import EngineSettings

    EngineSettings.objects.update_or_create(pk=1, defaults={"review_similarity": 0.95})
    login(client, editor)
    html = client.get("/review/").content.decode()
    # river-3 was verified at 0.93: below the admin's 0.95, so now also "low similarity"
    item = re.search(r'id="review-item-\d+".*?</li>', html, re.S).group(0)
    assert "river-3" in item and "low similarity" in item


# --- the diff and the helpers ---------------------------------------------------------


def test_the_diff_compares_chinese_word_by_word(db):
    from articles.diff import DELETE, EQUAL, INSERT, word_diff

    diff = word_diff("股市今天上涨了百分之三，投资者很高兴。",
                     "股市今天下跌了百分之三，投资者很担心。")
    assert [(s.kind, s.text) for s in diff.left] == [
        (EQUAL, "股市今天"), (DELETE, "上涨"), (EQUAL, "了百分之三，投资者很"), (DELETE, "高兴"),
        (EQUAL, "。")]
    assert [s.text for s in diff.right if s.kind == INSERT] == ["下跌", "担心"]
    assert (diff.deleted, diff.inserted) == (2, 2)
    # width and case are what the fingerprints ignore: no difference there
    assert word_diff("ＡＢＣ新闻２０２４年", "abc新闻2024年").identical


def test_shared_keywords_are_informative_words_of_both(db):
    from articles.diff import shared_keywords

    words = shared_keywords("滨江绿道全线贯通", stories.RIVERSIDE, "绿道贯通", stories.RIVERSIDE)
    assert "滨江" in words and "管理处" in words
    assert "的" not in words and "，" not in words
    assert shared_keywords("", stories.RIVERSIDE, "", stories.LIBRARY)[:3] != words[:3]


@pytest.mark.parametrize("url, shown", [
    ("https://news.example/a?b=1", "https://news.example/a?b=1"),
    ("http://news.example/", "http://news.example/"),
    ("javascript:alert(1)", ""),
    (" JavaScript:alert(1)", ""),
    ("data:text/html,<script>alert(1)</script>", ""),
    ("//evil.example/x", ""),
    ("https:///nohost", ""),
    ("https://news.example/\nx", ""),
])
def test_only_http_urls_become_links(url, shown):
    from articles.templatetags.dashboard import http_url

    assert http_url(url) == shown
