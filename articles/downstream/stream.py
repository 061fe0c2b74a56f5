"""The change log as a Redis Stream (``CHANGES_STREAM`` on ``REDIS_URL``), for consumers
that want consumer groups: each change one entry, in cursor order, the stream capped at
about ``CHANGES_STREAM_MAXLEN`` entries.

Where the stream is up to is read from the stream itself (its last entry's ``cursor``
field), so a job retried after a crash between the XADD and anything else adds nothing
twice, and a stream lost with Redis is fed again from the log's oldest kept change.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings

from articles.changes import log as changes
from articles.models import Change
from dedupsite import redis_store

BATCH = 500


def entry(change: Change) -> dict[Any, Any]:
    """A change as a stream entry (the fields of GET /api/v1/changes, as strings)."""
    return {"cursor": str(change.cursor), "kind": change.kind, "nid": change.nid,
            "docId": change.doc_id, "previousDocId": change.previous_doc_id,
            "representativeNid": change.representative_nid, "status": change.status,
            "reason": change.reason, "at": change.at.isoformat()}


def position(client: Any) -> int:
    """The cursor of the stream's last entry (0: empty or missing)."""
    last = client.xrevrange(settings.CHANGES_STREAM, count=1)
    if not last:
        return 0
    fields = last[0][1]
    return int(fields.get(b"cursor", fields.get("cursor", 0)))


def feed(deadline: float) -> int:
    """Add the changes after the stream's position; how many (negated when it stopped at
    ``deadline`` with more to add)."""
    if not settings.CHANGES_STREAM:
        return 0
    client = redis_store.client()
    after = position(client)
    added = 0
    while True:
        rows = changes.read_after(after, BATCH, None)
        if not rows:
            return added
        pipe = client.pipeline(transaction=False)
        for row in rows:
            pipe.xadd(settings.CHANGES_STREAM, entry(row),
                      maxlen=settings.CHANGES_STREAM_MAXLEN, approximate=True)
        pipe.execute()
        added += len(rows)
        after = rows[-1].cursor
        if time.monotonic() > deadline:
            return -added
