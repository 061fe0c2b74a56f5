"""Redis access: one lazily created client per process for each of the two Redis roles.

``client()`` is ``REDIS_URL``, the queue Redis: RQ queues, the bucket-lock stripes,
counters (rate limits, login lockout, boilerplate counts), the index generation
pointer, the pause gate and the expiry cursors. ``index_client()`` is
``INDEX_REDIS_URL`` (default: the same Redis): the indexes themselves, one Redis or a
Redis Cluster (``redis+cluster://host:port[,host:port...]``, redis-py's
``RedisCluster``). Why the split is where it is: docs/scaling.md.

Key layout (prefix from REDIS_PREFIX, default "dd"):
  {p}:c:GEN:...   content SimHash block index (stores.block_index.RedisBlockIndex)   index
  {p}:t:GEN:...   title SimHash block index                                          index
  {p}:x:GEN:...   clause-key index (stores.key_index.RedisKeyIndex)                  index
  {p}:u:GEN:nnnnn URL map: <Q URL hash><I article id> records (stores.url_map)       index
  {p}:live:GEN... the index's presence markers (articles/index/markers.py)           index
  {p}:gen         generation of the indexes (must equal IndexState.generation)       queue
  {p}:pause       the pause gate of an index switch                                  queue
  {p}:lock:...    short-lived assignment locks (see locks.py)                         queue
  {p}:expiry:...  where the window's expiry pass stands                               queue
"""

from __future__ import annotations

import functools
import os
from datetime import UTC, datetime

import django_rq
import redis
import rq
from django.conf import settings
from redis.cluster import ClusterNode, RedisCluster
from rq.job import Job

CLUSTER_SCHEME = "redis+cluster://"

#: the process that last made sure the embedded server runs (a fork must check again)
_ensured_by: int | None = None


def ensure_server() -> None:
    """Start the embedded Redis when REDIS_URL is unset and it is not running; a
    configured Redis is left alone. Checked once per process (not per enqueue: the check
    is a socket round trip) and again after :func:`reset_client`."""
    global _ensured_by
    if settings.EMBEDDED_REDIS and _ensured_by != os.getpid():
        from dedupsite.embedded import ensure_redis

        ensure_redis(settings.VAR_DIR)
        _ensured_by = os.getpid()


@functools.cache
def client() -> redis.Redis:
    ensure_server()
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=10, socket_connect_timeout=5)


def cluster_nodes(url: str) -> list[ClusterNode]:
    """The start-up nodes of a ``redis+cluster://host:port[,host:port...]`` URL."""
    if not url.startswith(CLUSTER_SCHEME):
        raise ValueError(f"not a {CLUSTER_SCHEME} URL: {url!r}")
    nodes = []
    for part in url[len(CLUSTER_SCHEME):].split("/")[0].split(","):
        host, sep, port = part.strip().rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"{url!r}: each node must be host:port, not {part!r}")
        nodes.append(ClusterNode(host, int(port)))
    return nodes


def index_is_separate() -> bool:
    """Do the indexes live elsewhere than the queue Redis (then nothing there tells that
    they were lost: articles/index/markers.py)?"""
    return settings.INDEX_REDIS_URL != settings.REDIS_URL


@functools.cache
def index_client() -> redis.Redis | RedisCluster:
    """The client of the indexes (``INDEX_REDIS_URL``): ``client()`` itself when they
    share the queue Redis, a ``RedisCluster`` for a ``redis+cluster://`` URL."""
    url = settings.INDEX_REDIS_URL
    if not index_is_separate():
        return client()
    if url.startswith(CLUSTER_SCHEME):
        return RedisCluster(startup_nodes=cluster_nodes(url), socket_timeout=10,
                            socket_connect_timeout=5)
    return redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)


def queue(name: str) -> rq.Queue:
    """The RQ queue ``name`` (django-rq's settings), on a running Redis."""
    ensure_server()
    return django_rq.get_queue(name)


def held_jobs(name: str, func_name: str, running_for_less_than_s: float) -> list[Job]:
    """The jobs of queue ``name`` calling ``func_name`` that still hold their work:
    waiting in the queue, waiting for a retry or deferred, or running for less than
    ``running_for_less_than_s`` seconds. A job "running" longer than that is taken for
    one whose worker died (RQ notices a dead worker only minutes later): the watchdog
    enqueues its work again."""
    jobs = queue(name)
    started = set(jobs.started_job_registry.get_job_ids())
    ids = {*jobs.get_job_ids(), *started, *jobs.scheduled_job_registry.get_job_ids(),
           *jobs.deferred_job_registry.get_job_ids()}
    now = datetime.now(UTC)
    held = []
    for job in Job.fetch_many(sorted(ids), connection=jobs.connection):
        if job is None or job.func_name != func_name or not job.args:
            continue
        if job.id in started and (job.started_at is None or (
                now - job.started_at.replace(tzinfo=UTC)).total_seconds()
                >= running_for_less_than_s):
            continue
        held.append(job)
    return held


def key(*parts: object) -> str:
    return ":".join([settings.REDIS_PREFIX, *map(str, parts)])


def reset_client() -> None:
    global _ensured_by
    client.cache_clear()
    index_client.cache_clear()
    _ensured_by = None
