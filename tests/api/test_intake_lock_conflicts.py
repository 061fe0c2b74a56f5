"""A batch whose transaction loses a lock conflict (a deadlock with a worker processing
one of its articles: MariaDB rolls the batch back) is stored again once; a second
conflict, or another database error, is a 503 whose reason is logged."""

from __future__ import annotations

import json
import logging

import pytest
from django.db import OperationalError

from articles.api import endpoints
from articles.models import Article

pytestmark = pytest.mark.django_db(transaction=True)

BODY = "市气象台今晨发布寒潮蓝色预警，预计未来三天气温将下降八到十摄氏度，并伴有大风。"
DEADLOCK = OperationalError(1213, "Deadlock found when trying to get lock; try restarting "
                                  "transaction")


def batch(client, auth):
    articles = [{"nid": f"d{n}", "url": f"https://n.example/d{n}", "title": "寒潮",
                 "content": f"{BODY}{n}"} for n in range(3)]
    return client.post("/api/v1/articles?atomic=true", data=json.dumps({"articles": articles}),
                       content_type="application/json", **auth)


def failing(monkeypatch, *errors: Exception) -> list[int]:
    calls: list[int] = []
    real = endpoints.accept_articles

    def accept(*args, **kwargs):
        calls.append(1)
        if len(calls) <= len(errors):
            real(*args, **kwargs)  # the rows written, then the server rolls them back
            raise errors[len(calls) - 1]
        return real(*args, **kwargs)

    monkeypatch.setattr(endpoints, "accept_articles", accept)
    return calls


def test_a_deadlocked_atomic_batch_is_stored_again_once(client, auth, redis_client,
                                                         monkeypatch, caplog):
    calls = failing(monkeypatch, DEADLOCK)
    with caplog.at_level(logging.WARNING, logger="articles.api.endpoints"):
        answer = batch(client, auth)
    assert answer.status_code == 202, answer.content
    assert len(calls) == 2 and Article.objects.count() == 3
    assert "Deadlock found" in caplog.text and "storing them again" in caplog.text


def test_a_second_deadlock_is_a_503_with_its_reason_logged(client, auth, redis_client,
                                                           monkeypatch, caplog):
    calls = failing(monkeypatch, DEADLOCK, DEADLOCK)
    with caplog.at_level(logging.WARNING, logger="articles.api.endpoints"):
        answer = batch(client, auth)
    assert answer.status_code == 503 and answer.json()["error"]["code"] == "unavailable"
    assert len(calls) == 2 and not Article.objects.exists()
    assert "Deadlock found" in caplog.text and "answered 503" in caplog.text


def test_another_database_error_is_not_retried_and_is_logged(client, auth, redis_client,
                                                             monkeypatch, caplog):
    calls = failing(monkeypatch, OperationalError(2006, "MySQL server has gone away"))
    with caplog.at_level(logging.WARNING, logger="articles.api.endpoints"):
        answer = batch(client, auth)
    assert answer.status_code == 503 and len(calls) == 1
    assert "gone away" in caplog.text and "answered 503" in caplog.text
