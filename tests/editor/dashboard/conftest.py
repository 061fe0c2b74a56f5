"""Fixtures of the dashboard tests: one corpus for the whole package.

The articles go through the real API and a real RQ worker (tests/browser/stories.py),
so the clusters are the ones the engine makes. Every test runs in a transaction that is
rolled back, so each starts from the same clusters.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from articles.editor import actions
from articles.models import Article, Doc
from tests.browser import stories

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


@pytest.fixture(scope="package")
def corpus_ids(django_db_setup, django_db_blocker, tmp_path_factory) -> dict[str, str]:
    import redis
    from django.conf import settings
    from django.core.management import call_command
    from django.test import override_settings

    from articles.models import ApiKey
    from articles.representatives import outbox
    from dedupsite import redis_store

    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    redis_store.reset_client()
    store = tmp_path_factory.mktemp("reps") / "reps.sqlite3"
    with django_db_blocker.unblock(), override_settings(LOCAL_REPRESENTATIVE_STORE=store):
        outbox.store.cache_clear()
        _key, plaintext = ApiKey.issue("dashboard tests")
        stories.load(Client(), {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"}, _run_worker)
        ids = {key: Article.objects.get(nid=f"{key}-1").doc.doc_id
               for key in ("river", "library", "museum", "xss")}
        outbox.store.cache_clear()
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

    _key, plaintext = ApiKey.issue("dashboard reader", may_read_others=True)
    return {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"}



@pytest.fixture
def editor(db) -> User:
    user = User.objects.create_user("editor", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name=actions.EDITORS_GROUP)[0])
    return user


@pytest.fixture
def viewer(db) -> User:
    return User.objects.create_user("viewer", password=PASSWORD, is_staff=True)


def login(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


def doc_of(nid: str) -> Doc:
    return Article.objects.select_related("doc").get(nid=nid).doc


def at_version(doc: Doc, **data: str) -> dict[str, str | int]:
    """An action's form data as the cluster page sends it: with the docId's current version."""
    return {**data, "version": Doc.objects.get(pk=doc.pk).version}
