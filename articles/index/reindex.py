"""Building the Redis indexes from MySQL, in generations, with an atomic switch.

Every index key lives under its generation ({prefix}:c:{gen}:..., :t:, :u:, :x:),
on the index Redis (``INDEX_REDIS_URL``: one Redis or a Redis Cluster).
`{prefix}:gen` on the queue Redis and `IndexState.generation` in MySQL name the
active one; a mismatch (Redis restarted empty, or pointed at another database)
means the index is missing, and workers rebuild it before handing out any docId.
An index Redis of its own that lost the index is noticed by its presence markers
(markers.py), which then drop `{prefix}:gen`.

A rebuild or a reindex after a settings change builds a *new* generation
while the old one keeps serving; then it sets the pause gate (new batches
wait), waits for the batches in flight to release their bucket locks, catches
up on articles processed meanwhile, applies recomputed fingerprints in one
statement, switches the generation and the active configuration, and lifts
the gate. Doc assignments are never touched: no docId is lost and editor
decisions stay as they are.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from django.db import connection, models, transaction
from django.utils import timezone

from articles.images.hashes import read_pictures
from articles.index import markers, window
from articles.index.locks import multi_lock
from articles.models import Article, ArticleStatus, EngineSettings, IndexState, PendingFeatures
from articles.tuning.boilerplate import active_boilerplate
from articles.tuning.state import active_config, config_to_json, forget_state
from dedupsite import redis_store
from fingerprints.rule import EngineConfig, extract_many
from fingerprints.rule.features import Features
from fingerprints.rule.ids import to_signed
from fingerprints.rule.keys import stored_keys
from fingerprints.stores.block_index import RedisBlockIndex
from fingerprints.stores.key_index import RedisKeyIndex
from fingerprints.stores.redis_records import unlink_matching
from fingerprints.stores.url_map import RedisUrlMap

log = logging.getLogger(__name__)

CHUNK = 2000


def gate_key() -> str:
    return redis_store.key("pause")


def generation_key() -> str:
    return redis_store.key("gen")


#: The Redis layout of the indexes, at the head of every generation name. A generation
#: built by code with another layout (an upgrade that changed it: 2 = the URL map in
#: buckets of records, fingerprints/stores/url_map.py) counts as missing, so the first worker
#: to need the index rebuilds it (``ensure_index``); docs/architecture.md, upgrading.
LAYOUT = "l2-"


def namespaces(generation: str) -> dict[str, str]:
    return {name: redis_store.key(name, generation) for name in ("c", "t", "u", "x", "p")}


_READ = object()


def active_generation(state: Any = _READ) -> str | None:
    """The generation to use, or None when Redis does not hold the database's index.
    ``state``: the database's generation when the caller has just read it."""
    if state is _READ:
        state = IndexState.objects.filter(pk=1).values_list("generation", flat=True).first()
    current = redis_store.client().get(generation_key())
    if isinstance(current, bytes):
        current = current.decode()
    if not state or current != state or not state.startswith(LAYOUT):
        return None
    return state


# Delete the generation pointer KEYS[1] only while it still names ARGV[1].
_FORGET = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def forget_generation(generation: str) -> bool:
    """The index Redis lost ``generation`` (markers.py): drop the generation pointer, if
    it still names it, so that the next batch or watchdog tick rebuilds the index."""
    script = redis_store.client().register_script(_FORGET)
    return bool(script(keys=[generation_key()], args=[generation]))


def _drop_generation(generation: str) -> None:
    client = redis_store.index_client()
    for prefix in [*namespaces(generation).values(), markers.prefix(generation)]:
        unlink_matching(client, f"{prefix}*")


def _fill(generation: str, config: EngineConfig, recompute: bool, since_id: int = 0,
          since_time: datetime | None = None,
          progress: Callable[[int], object] | None = None) -> tuple[int, int]:
    """Index done articles into `generation`; return (count, last id seen)."""
    client = redis_store.index_client()
    names = namespaces(generation)
    content = RedisBlockIndex(client, k=config.k, namespace=names["c"])
    title = RedisBlockIndex(client, k=config.title_k, namespace=names["t"])
    keys = RedisKeyIndex(client, namespace=names["x"])
    urls = RedisUrlMap(client, namespace=names["u"])
    pictures = RedisBlockIndex(client, k=config.picture_k, namespace=names["p"])
    done = Article.objects.filter(status=ArticleStatus.DONE, doc__isnull=False)
    # only the time window (articles/index/window.py); the URL map keeps every URL
    # of the window too, MySQL answers for older ones
    lowest = window.floor()
    if lowest:
        done = done.filter(id__gte=lowest)
    if since_time is not None:
        done = done.filter(processed_at__gte=since_time)
    total = 0
    last_id = since_id
    fields = ("id", "url_hash", "title_fp", "content_fp", "features",
              *(("title", "content", "body_cleared_at") if recompute else ()))
    while True:
        rows: list[tuple[Any, ...]] = list(
            done.filter(id__gt=last_id).order_by("id").values_list(*fields)[:CHUNK])
        if not rows:
            break
        last_id = rows[-1][0]
        if recompute:
            # An article whose body retention cleared has no text to fingerprint again:
            # it keeps its stored features and is found by its URL only (its doc's
            # anchor and representative keep their bodies and are indexed).
            texts = [r for r in rows if r[7] is None]
            feats = extract_many([(r[5], r[6]) for r in texts], config,
                                 boilerplate=active_boilerplate())
            # the text is fingerprinted again; the pictures' hashes come from their rows
            shown = read_pictures(r[0] for r in texts)
            feats = [replace(f, pictures=shown[r[0]]) if r[0] in shown else f
                     for r, f in zip(texts, feats, strict=True)]
            PendingFeatures.objects.filter(article_id__in=[r[0] for r in texts]).delete()
            PendingFeatures.objects.bulk_create([
                PendingFeatures(article_id=r[0], title_fp=_signed(f.title_fp or None),
                                content_fp=_signed(f.content_fp), features=f.to_bytes())
                for r, f in zip(texts, feats, strict=True)
            ])
            pairs = [(r[0], f.title_fp, f.content_fp) for r, f in zip(texts, feats, strict=True)]
            decoded = [(r[0], f) for r, f in zip(texts, feats, strict=True)]
        else:
            pairs = [(r[0], r[2], r[3]) for r in rows]
            decoded = [(r[0], Features.from_bytes(bytes(r[4]))) for r in rows if r[4]]
        keys.bulk_load([(i, stored_keys(f.keys)) for i, f in decoded])
        pictures.add_many((i, p) for i, f in decoded for p in f.pictures)
        urls.bulk_load([r[0] for r in rows if r[1] is not None],
                       [r[1] for r in rows if r[1] is not None])
        content.add_many((i, c) for i, _t, c in pairs if c is not None)
        title.add_many((i, t) for i, t, _c in pairs if t)
        total += len(rows)
        if progress is not None:
            progress(len(rows))
    return total, last_id


def _signed(value: int | None) -> int | None:
    """PendingFeatures keeps fingerprints in signed BIGINT columns on every backend."""
    return None if value is None else to_signed(value)


def _apply_pending() -> None:
    table = connection.ops.quote_name(Article._meta.db_table)
    if connection.vendor == "mysql":
        sql = (f"UPDATE {table} a JOIN articles_pendingfeatures p ON a.id = p.article_id "
               "SET a.features = p.features, a.title_fp = CAST(p.title_fp AS UNSIGNED), "
               "a.content_fp = CAST(p.content_fp AS UNSIGNED)")
    else:  # SQLite keeps unsigned values in two's complement already (articles/fields.py)
        sql = (f"UPDATE {table} SET features = p.features, title_fp = p.title_fp, "
               "content_fp = p.content_fp FROM articles_pendingfeatures p "
               f"WHERE {table}.id = p.article_id")
    with connection.cursor() as cursor:
        cursor.execute(sql)
    PendingFeatures.objects.all().delete()


def _wait_for_batches(timeout: float = 120.0) -> None:
    """After the gate is set: wait until no batch holds a bucket lock."""
    client = redis_store.client()
    deadline = time.monotonic() + timeout
    pattern = redis_store.key("lock", "*")
    while any(b":push:" not in key and not key.endswith(b":rebuild")
              for key in client.scan_iter(match=pattern, count=10_000)):
        if time.monotonic() > deadline:
            raise TimeoutError("batches still hold index locks; the switch was not made")
        time.sleep(0.05)


def build(config: EngineConfig | None = None, *, recompute: bool = False,
          settings_version: int | None = None,
          progress: Callable[[int], object] | None = None) -> int:
    """Build a new index generation and switch to it; return the articles indexed.

    `recompute` re-extracts every article's fingerprints with `config` (a change
    of tokens or of the block layout); otherwise stored fingerprints are reused.
    """
    config = config or active_config()
    client = redis_store.client()
    state = IndexState.load()
    old_generation = state.generation
    generation = LAYOUT + secrets.token_hex(8)
    started = timezone.now()
    total = Article.objects.filter(status=ArticleStatus.DONE, doc__isnull=False).count()
    IndexState.objects.filter(pk=1).update(
        reindex_status="running", reindex_total=total, reindex_done=0, reindex_error="")

    def advance(n: int) -> None:
        IndexState.objects.filter(pk=1).update(reindex_done=models.F("reindex_done") + n)
        if progress is not None:
            progress(n)

    try:
        markers.write(generation)  # first: a node that loses them during the fill is seen
        count, last_id = _fill(generation, config, recompute, progress=advance)
        client.set(gate_key(), generation, ex=600)
        try:
            _wait_for_batches()
            # Articles processed while the bulk was built (new ones, and re-processed ones).
            more, _ = _fill(generation, config, recompute, since_id=last_id, progress=advance)
            _fill(generation, config, recompute, since_time=started)
            count += more
            with transaction.atomic():
                if recompute:
                    _apply_pending()
                    Article.objects.filter(status=ArticleStatus.DONE).update(
                        settings_version=settings_version)
                IndexState.objects.filter(pk=1).update(
                    generation=generation, built_at=timezone.now(), article_count=count,
                    config=config_to_json(config),
                    config_version=settings_version or state.config_version or 1,
                    reindex_status="done",
                )
            client.set(generation_key(), generation)
            forget_state()
        finally:
            client.delete(gate_key())
    except Exception as exc:
        IndexState.objects.filter(pk=1).update(reindex_status="failed",
                                               reindex_error=f"{type(exc).__name__}: {exc}")
        _drop_generation(generation)
        raise
    if old_generation and old_generation != generation:
        _drop_generation(old_generation)
    log.info("index generation %s active: %d articles (recompute=%s)", generation, count,
             recompute)
    return count


def ensure_index(state: Any = _READ) -> str:
    """The active generation; rebuilt first when Redis lost it (one worker rebuilds).
    ``state``: the database's generation when the caller has just read it."""
    generation = active_generation(state)
    if generation is not None:
        return generation
    client = redis_store.client()
    with multi_lock(client, [redis_store.key("lock", "rebuild")], ttl_ms=600_000, wait_s=600):
        generation = active_generation()
        if generation is None:
            log.warning("Redis indexes missing or stale: rebuilding from the database")
            build()
            generation = active_generation()
    assert generation is not None
    return generation


def apply_settings(settings: EngineSettings) -> dict[str, Any]:
    """Make the admin's settings active: at once, or through a reindex job."""
    from articles.tuning.state import needs_reindex

    new = settings.engine_config()
    old = active_config()
    if needs_reindex(old, new):

        redis_store.queue("default").enqueue(
            run_reindex, settings.version, job_timeout=24 * 3600)
        IndexState.objects.filter(pk=1).update(reindex_status="queued")
        return {"reindex": True}
    IndexState.objects.update_or_create(pk=1, defaults={
        "config": config_to_json(new), "config_version": settings.version})
    forget_state()
    return {"reindex": False}


def run_reindex(settings_version: int) -> int:
    """RQ job: reindex with the settings of `settings_version` (skipped if superseded)."""
    settings = EngineSettings.load()
    if settings.version != settings_version:
        return 0
    client = redis_store.client()
    with multi_lock(client, [redis_store.key("lock", "rebuild")], ttl_ms=24 * 3600_000,
                    wait_s=3600):
        return build(settings.engine_config(), recompute=True, settings_version=settings_version)


def rebuild_index(progress: Any = None, *, recompute: bool = False) -> int:
    """Rebuild every Redis structure from MySQL (a new generation, then the switch);
    one rebuild at a time. ``progress``: a tqdm-like bar (``update(n)``).
    ``recompute``: re-extract every stored article's features with this code and the
    active configuration first (after an upgrade that changes how features are made,
    e.g. titles cut to their headline: docs/engine.md); docIds are not touched."""
    client = redis_store.client()
    # re-extracting every article takes hours on a large store, as a settings reindex does
    ttl_ms = 24 * 3600_000 if recompute else 3_600_000
    with multi_lock(client, [redis_store.key("lock", "rebuild")], ttl_ms=ttl_ms, wait_s=3600):
        version = IndexState.load().config_version if recompute else None
        return build(recompute=recompute, settings_version=version,
                     progress=progress.update if progress is not None else None)
