"""Body retention: MySQL keeps the full text of the articles that still need it.

After ``EngineSettings.retention_days`` (0 = keep every body), an article's body is
cleared (``content = ""``, ``body_cleared_at`` set) unless it is its docId's
representative (its full text is what the representative store delivers) or its
docId's founding article, the anchor (``decide`` verifies every newcomer against it,
and a settings change that re-fingerprints articles re-reads its text). Everything
else stays: title, URL, metadata and the stored features, so the index, verification
and the editor's "why matched" work as before; the dashboard says "body no longer
kept" where a text is gone.

:func:`clear_old_bodies` examines articles in arrival order, a small batch at a time
(each batch one short transaction that locks the batch's docs, as elections do, so a
member is never cleared while it is being elected), and remembers how far it got
(``IndexState.bodies_examined_through`` / ``bodies_examined_id``). An article that was
a representative or an anchor when it was examined keeps its body even if it later
stops being one: retention runs days after arrival, when a story's representative has
settled, and it never looks back. The worker's watchdog runs a few batches per tick;
``manage.py clear_bodies`` runs it to the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from articles.models import Article, Doc, EngineSettings, IndexState

BATCH = 500


@dataclass
class RetentionPass:
    examined: int = 0
    cleared: int = 0
    done: bool = False  # every article older than the retention period was examined


def clear_old_bodies(*, batches: int | None = 4, batch: int = BATCH,
                     now: datetime | None = None) -> RetentionPass:
    """Examine up to ``batches`` batches (None: until done) of articles received more
    than ``retention_days`` ago and clear the bodies that are no longer needed."""
    days = EngineSettings.objects.filter(pk=1).values_list("retention_days", flat=True).first()
    result = RetentionPass()
    if not days:
        result.done = True
        return result
    cutoff = (now or timezone.now()) - timedelta(days=days)
    n = 0
    while batches is None or n < batches:
        n += 1
        examined, cleared = _one_batch(cutoff, batch)
        result.examined += examined
        result.cleared += cleared
        if examined < batch:
            result.done = True
            break
    return result


def _one_batch(cutoff: datetime, size: int) -> tuple[int, int]:
    with transaction.atomic():
        state = IndexState.objects.select_for_update().get_or_create(pk=1)[0]
        rows = Article.objects.filter(received_at__lt=cutoff)
        if state.bodies_examined_through is not None:
            mark = state.bodies_examined_through
            rows = rows.filter(Q(received_at__gt=mark)
                               | Q(received_at=mark, id__gt=state.bodies_examined_id))
        batch = list(rows.order_by("received_at", "id")
                     .values_list("id", "received_at", "doc", "body_cleared_at")[:size])
        if not batch:
            return 0, 0
        doc_ids = sorted({d for _i, _r, d, _c in batch if d is not None})
        # the docs' representative and anchor, locked in id order like every election
        keep: set[int] = set()
        for rep, anchor in (Doc.objects.select_for_update().filter(pk__in=doc_ids)
                            .order_by("pk").values_list("representative_id", "anchor_id")):
            keep.update(x for x in (rep, anchor) if x is not None)
        clear = [i for i, _r, d, cleared in batch
                 if d is not None and cleared is None and i not in keep]
        cleared = 0
        if clear:
            cleared = Article.objects.filter(pk__in=clear, body_cleared_at__isnull=True,
                                             doc__isnull=False).update(
                content="", body_cleared_at=timezone.now())
        last_id, last_received = batch[-1][0], batch[-1][1]
        IndexState.objects.filter(pk=state.pk).update(
            bodies_examined_through=last_received, bodies_examined_id=last_id)
    return len(batch), cleared
