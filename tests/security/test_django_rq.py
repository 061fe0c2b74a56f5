"""django-rq's pages (queues, jobs, emptying a queue) are for superusers only."""

from __future__ import annotations

import django_rq
import pytest
from django.contrib.auth.models import User

from articles.ingest.jobs import process_batch

pytestmark = pytest.mark.django_db(transaction=True)


def test_staff_who_may_only_look_cannot_reach_or_empty_the_queues(client, redis_client):
    queue = django_rq.get_queue("ingest")
    queue.enqueue(process_batch, ["nobody"])
    queues = django_rq.settings.get_queues_list()
    index = queues.index(next(q for q in queues if q["name"] == "ingest"))
    pages = ["/django-rq/", f"/django-rq/queues/{index}/", "/django-rq/stats.json"]
    for page in pages:
        assert client.get(page).status_code == 302  # anonymous: the login page
    client.force_login(User.objects.create_user("viewer", password="x" * 20, is_staff=True))
    for page in pages:
        assert client.get(page).status_code == 403
    assert client.post(f"/django-rq/queues/{index}/empty/").status_code == 403
    assert queue.count == 1
    client.force_login(User.objects.create_superuser("root", password="x" * 20))
    for page in pages:
        assert client.get(page).status_code == 200
