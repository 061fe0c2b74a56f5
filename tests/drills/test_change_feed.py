"""Drill: the change feed survives a receiver outage and a killed worker.

1,000 articles (200 stories, five copies each) are posted in batches to a production-style
stack with two workers and a webhook to a receiver on loopback; a Redis Stream is fed too.
While the articles are processed the receiver is stopped for 60 s (connections refused)
and one worker is SIGKILLed (another takes its place). Then 50 editor decisions (splits)
and their undo. The receiver must end with every change of the log exactly once after
deduplication by cursor, in cursor order, each delivery's signature valid; the changes
API must give the same sequence, and the stream hold it too.
"""

from __future__ import annotations

import json
import random
import signal
import time
from typing import Any

import pytest

from support import corpus
from support.drill_records import write_record
from support.webhook_receiver import Receiver

pytestmark = [pytest.mark.drill(slow=True)]

STORIES, COPIES, BATCH = 200, 5, 100
OUTAGE_S = 60
DECISIONS = 50


def plan() -> list[dict[str, Any]]:
    items = [corpus.article(f"f{n}-{copy}", n, copy=copy)
             for copy in range(COPIES) for n in range(STORIES)]
    random.Random(50).shuffle(items)
    return items


DECIDE = """
from articles.editor import actions
from articles.models import Article, Decision
splits = []
for article in Article.objects.filter(doc__size__gt=1).order_by("nid"):
    article.refresh_from_db()
    if len(splits) < {n} and article.doc.size > 1:
        splits.append(actions.split_article(article, None))
for decision in Decision.objects.filter(action="split", undone_at=None).order_by("-pk"):
    actions.undo(decision, None)
print(len(splits))
"""


def test_the_receiver_gets_every_change_once_in_order_despite_an_outage_and_a_kill(stack):
    from articles.downstream.webhooks import verify

    stack.clear()
    stack.extra_env.update(WEBHOOK_ALLOW_PRIVATE="true", CHANGES_STREAM="dd:changes-drill")
    receiver = Receiver()
    try:
        secret = stack.manage("create_webhook",
                              receiver.url).strip().splitlines()[-1]
        workers = [stack.start_worker(), stack.start_worker()]
        session = stack.session()
        items = plan()
        started = time.monotonic()
        for i in range(0, len(items), BATCH):
            response = session.post(f"{stack.base_url}/api/v1/articles",
                                    json={"articles": items[i:i + BATCH]}, timeout=120)
            assert response.status_code in (200, 202), response.text
            if i == 3 * BATCH:
                receiver.stop()
                outage_at = time.monotonic()
            if i == 5 * BATCH:
                stack.kill_worker(workers[0], signal.SIGKILL)
                workers[0] = stack.start_worker()
        processed = stack.wait_until_processed(len(items), timeout=600)
        assert processed is not None
        splits = int(stack.python(DECIDE.replace("{n}", str(DECISIONS))).strip().splitlines()[-1])
        time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - outage_at)))
        receiver.start()
        restarted_at = time.monotonic()
        newest = int(stack.scalar("SELECT MAX(`cursor`) FROM articles_change"))
        received: dict[int, dict[str, Any]] = {}
        order: list[int] = []
        read = 0  # deliveries looked at
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and max(received, default=0) < newest:
            for headers, body in receiver.deliveries[read:]:
                read += 1
                assert verify(secret, body, headers["X-Dedupsite-Signature"])
                for change in json.loads(body)["changes"]:
                    order.append(int(change["cursor"]))
                    received.setdefault(int(change["cursor"]), change)
            time.sleep(0.5)
        caught_up = time.monotonic() - restarted_at
        first_seen = list(dict.fromkeys(order))
        logged = [int(c) for (c,) in stack.sql("SELECT `cursor` FROM articles_change "
                                               "ORDER BY `cursor`")]
        api: list[int] = []
        after = "0"
        while True:
            page = session.get(f"{stack.base_url}/api/v1/changes",
                               params={"after": after, "limit": 1000}, timeout=60).json()
            api += [int(c["cursor"]) for c in page["changes"]]
            if page["next"] == after:
                break
            after = page["next"]
        stream = [int(fields[b"cursor"]) for _id, fields in
                  stack.redis().xrange("dd:changes-drill")]
        checks = {
            "every change received once after dedupe": sorted(received) == logged,
            "in cursor order": first_seen == sorted(first_seen),
            "the changes API gives the same sequence": api == logged,
            "the stream holds it": stream == logged,
            "every article done": stack.status_counts() == {"done": len(items)},
            "50 decisions and their undo": splits == DECISIONS,
        }
        write_record(
            "change_feed", title="The change feed through a receiver outage and a killed worker",
            fault=f"receiver down {OUTAGE_S} s during ingest; one worker SIGKILLed",
            system_did="deliveries retried with back-off; the other worker carried on; "
                       "the receiver caught up in cursor order",
            lost="nothing" if all(checks.values()) else "see checks",
            recovery_s=round(caught_up, 1), checks=checks,
            figures={"articles": len(items), "changes": len(logged), "splits": splits,
                     "deliveries": len(receiver.deliveries),
                     "duplicates_received": len(order) - len(received),
                     "processed_s": round(processed, 1),
                     "total_s": round(time.monotonic() - started, 1)})
        assert all(checks.values()), checks
    finally:
        for key in ("WEBHOOK_ALLOW_PRIVATE", "CHANGES_STREAM"):
            stack.extra_env.pop(key, None)
        receiver.stop()
