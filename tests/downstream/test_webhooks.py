"""Webhooks and the Redis Stream follow the change log: signed batches in cursor order,
retried while the receiver is down, dead after too many failures and redelivered; a
loopback receiver, the real API and a real RQ worker (which runs the delivery jobs)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from articles.changes import log as changes
from articles.downstream import delivery, stream, webhooks
from articles.models import Change, Webhook, WebhookStatus
from support import webhook_receiver as support_receiver
from tests.browser import stories

pytestmark = pytest.mark.django_db(transaction=True)


class Receiver(support_receiver.Receiver):
    def changes(self, secret: str) -> list[dict]:
        """Every change received in acknowledged deliveries, each signature checked."""
        found = []
        for headers, body in self.deliveries:
            assert webhooks.verify(secret, body, headers["X-Dedupsite-Signature"])
            found += json.loads(body)["changes"]
        return found


@pytest.fixture
def receiver(settings) -> Iterator[Receiver]:
    settings.WEBHOOK_ALLOW_PRIVATE = True  # the receiver is on loopback
    found = Receiver()
    yield found
    found.stop()


def test_a_receiver_gets_every_change_once_in_order_and_signed(receiver, client, auth,
                                                               run_worker):
    hook = webhooks.create(receiver.url)
    stories.load(client, auth, run_worker)  # the worker runs the delivery jobs too
    run_worker()
    got = receiver.changes(hook.secret)
    logged = [str(c) for c in Change.objects.order_by("cursor").values_list("cursor", flat=True)]
    assert [c["cursor"] for c in got] == logged and logged
    assert not webhooks.verify("another secret", receiver.deliveries[0][1],
                               receiver.deliveries[0][0]["X-Dedupsite-Signature"])
    hook.refresh_from_db()
    assert hook.delivered == int(logged[-1]) and hook.attempts == 0


def test_a_receiver_that_fails_gets_the_same_batch_again_and_then_the_rest(receiver,
                                                                           client, auth,
                                                                           run_worker):
    hook = webhooks.create(receiver.url)
    receiver.status = 503
    stories.load(client, auth, run_worker)
    hook.refresh_from_db()
    assert hook.attempts >= 1 and hook.delivered == 0 and "503" in hook.last_error
    failed = [json.loads(body)["changes"][0]["cursor"] for _h, body in receiver.deliveries]
    receiver.status = 200
    Webhook.objects.filter(pk=hook.pk).update(next_attempt_at=None)  # the back-off over
    delivery.deliver()
    acknowledged = json.loads(receiver.deliveries[len(failed)][1])["changes"]
    assert acknowledged[0]["cursor"] == failed[0]  # the same batch again
    hook.refresh_from_db()
    assert hook.delivered == changes.last_cursor() and hook.attempts == 0


def test_a_webhook_dies_after_its_tries_and_an_admin_redelivers(receiver, client, auth,
                                                                run_worker, monkeypatch,
                                                                admin_client):
    monkeypatch.setattr(webhooks, "MAX_ATTEMPTS", 2)
    hook = webhooks.create(receiver.url)
    receiver.status = 500
    stories.load(client, auth, run_worker)
    Webhook.objects.filter(pk=hook.pk).update(next_attempt_at=None)
    delivery.deliver()
    hook.refresh_from_db()
    assert hook.status == WebhookStatus.DEAD
    tried = len(receiver.deliveries)
    delivery.deliver()
    assert len(receiver.deliveries) == tried  # dead: nothing sent
    receiver.status = 200
    response = admin_client.post("/admin/articles/webhook/",
                                 {"action": "redeliver", "_selected_action": [hook.pk]})
    assert response.status_code == 302
    delivery.deliver()
    hook.refresh_from_db()
    assert hook.status == WebhookStatus.ACTIVE and hook.delivered == changes.last_cursor()


def test_a_key_scoped_webhook_skips_other_keys_changes(receiver, client, auth, run_worker):
    from articles.models import ApiKey

    other, _secret = ApiKey.issue("another crawler")
    hook = webhooks.create(receiver.url, other)
    stories.load(client, auth, run_worker)
    run_worker()
    assert receiver.deliveries == []
    hook.refresh_from_db()
    assert hook.delivered == changes.last_cursor()  # skipped over, once


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/hook", "http://10.1.2.3/hook",
                                 "http://[::1]/hook", "ftp://example.com/x",
                                 "http://example.com:99999/x", "not a url"])
def test_a_url_to_a_private_address_or_not_http_is_refused(url, db):
    with pytest.raises(webhooks.BadWebhook):
        webhooks.create(url)
    with pytest.raises(CommandError):
        call_command("create_webhook", url)
    assert not Webhook.objects.exists()


def test_the_command_prints_the_secret_alone_on_the_last_line(receiver, capsys):
    call_command("create_webhook", receiver.url)
    secret = capsys.readouterr().out.strip().splitlines()[-1]
    assert Webhook.objects.get().secret == secret and len(secret) == 64


def test_the_stream_holds_the_log_in_order_and_is_fed_again_after_a_loss(settings, client,
                                                                         auth, run_worker,
                                                                         redis_client):
    settings.CHANGES_STREAM = "dd:test-changes"
    stories.load(client, auth, run_worker)
    run_worker()
    entries = redis_client.xrange("dd:test-changes")
    logged = [str(c) for c in Change.objects.order_by("cursor").values_list("cursor", flat=True)]
    assert [e[1][b"cursor"].decode() for e in entries] == logged
    assert stream.position(redis_client) == int(logged[-1])
    delivery.deliver()  # up to date: nothing added twice
    assert redis_client.xlen("dd:test-changes") == len(logged)
    redis_client.delete("dd:test-changes")  # lost with Redis
    delivery.deliver()
    assert redis_client.xlen("dd:test-changes") == len(logged)


def test_the_documented_receiver_refuses_a_wrong_secret_and_reads_a_right_one():
    """docs/api.md's receiver example, run as written against a real delivery's body."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text(encoding="utf-8")
    example = page.split("A receiver checks the signature", 1)[1].split("```python", 1)[1]
    namespace: dict = {}
    exec(example.split("```", 1)[0], namespace)  # noqa: S102 (our own documentation)
    body = b'{"changes": [{"cursor": "7", "nid": "a"}], "next": "7"}'
    signature = webhooks.sign("the secret", body)
    assert namespace["changes_of"](body, signature, "the secret") == [{"cursor": "7",
                                                                      "nid": "a"}]
    with pytest.raises(PermissionError):
        namespace["changes_of"](body, signature, "another secret")


def test_the_admin_reads_a_url_without_its_scheme_as_https(settings):
    from articles.admin import WebhookForm

    settings.WEBHOOK_ALLOW_PRIVATE = True
    form = WebhookForm(data={"url": "127.0.0.1:8443/hook"})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["url"] == "https://127.0.0.1:8443/hook"
    settings.WEBHOOK_ALLOW_PRIVATE = False  # still checked after the scheme is added
    assert "url" in WebhookForm(data={"url": "127.0.0.1:8443/hook"}).errors
