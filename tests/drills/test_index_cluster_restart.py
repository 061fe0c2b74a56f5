"""Drill: the index on a Redis Cluster loses a node in the middle of ingest.

The production-style stack (gunicorn, two `dedup_worker` processes, dedicated MariaDB
and queue Redis) runs with INDEX_REDIS_URL on a three-node Redis Cluster of its own
(`redis-server --cluster-enabled yes --appendonly yes`, joined by `redis-cli --cluster
create`). A crawler posts reposts of known stories and new stories while

1. one node is SIGKILLed and restarted on its append-only file (it keeps its data), and
2. later another node is SIGKILLed and restarted *without* its data (its AOF deleted,
   as a lost disk would): the presence markers (articles/index/markers.py) must notice
   and the index be rebuilt from MySQL.

The same articles are first ingested with the index on the single queue Redis: the
reference. Afterwards every accepted article must have a docId, and the docIds must be
those of the reference run. Before the reference, one warm-up run on the single Redis:
the boilerplate the engine learns (headers and footers of the reposts) outlives
`stack.clear()`, and a run that learns it as it goes decides some reposts before the
clauses are known, so only runs that start from the same learned state compare.
"""

from __future__ import annotations

import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from redis.cluster import ClusterNode, RedisCluster

from support import corpus
from support.drill_records import write_record
from tests.drills.client import RetryingClient
from tests.drills.test_redis_restart import supervise

pytestmark = [pytest.mark.drill(slow=True)]

STORIES = 40
BATCHES = 24


def batches() -> list[list[dict[str, Any]]]:
    """Batches of 15 reposts of known stories and 10 new stories."""
    out = []
    for b in range(BATCHES):
        items = [corpus.article(f"r{b}-{i}", (b * 15 + i) % STORIES,
                                copy=1 + ((b * 15 + i) // STORIES) % 5) for i in range(15)]
        items += [corpus.article(f"n{b}-{i}", 1000 + b * 10 + i) for i in range(10)]
        out.append(items)
    return out


def run_ingest(stack, faults: list[Any]) -> dict[str, Any]:
    """The originals, then the batches through a retrying crawler; each of ``faults`` is
    called once the crawler has had that many more batches accepted."""
    stack.clear()
    stack.start_worker()
    stack.start_worker()
    session = stack.session()
    originals = [corpus.article(f"o{n}", n, hotness=10) for n in range(STORIES)]
    for i in range(0, STORIES, 20):
        response = session.post(f"{stack.base_url}/api/v1/articles",
                                json={"articles": originals[i:i + 20]}, timeout=60)
        assert response.status_code in (200, 202), response.text
    assert stack.wait_until_processed(STORIES, 180) is not None, "the originals were not done"
    client = RetryingClient(stack.base_url, stack.api_key, batches(), retry_delay=0.3,
                            pace=0.4)
    client.start()
    events: list[dict[str, Any]] = []
    restarted: list[float] = []
    for n, fault in enumerate(faults, start=1):
        while client.is_alive() and client.sent < n * BATCHES // (len(faults) + 1):
            supervise(stack, restarted)
            time.sleep(0.05)
        events.append(fault())
    started = time.monotonic()
    stable_since, last_counts = time.monotonic(), None
    while time.monotonic() - started < 300:
        supervise(stack, restarted)
        counts = stack.status_counts()
        if counts != last_counts:
            stable_since, last_counts = time.monotonic(), counts
        settled = not client.is_alive() and stack.queue_depth() == 0
        if settled and (not counts.get("queued") or time.monotonic() - stable_since > 75):
            break
        time.sleep(0.5)
    client.join(timeout=5)
    outbox_drained_s = stack.wait_until_outbox_drained(90)
    accepted = client.accepted_nids() | {a["nid"] for a in originals}
    logs = "".join(w.log.read_text(errors="replace") for w in stack.workers)
    return {"accepted": accepted, "doc_ids": stack.doc_ids(), "events": events,
            "settled_s": time.monotonic() - started, "outbox_drained_s": outbox_drained_s,
            "consistency": stack.consistency(), "failed_jobs": stack.failed_jobs(),
            "workers_restarted": len(restarted),
            "rebuilds_logged": logs.count("rebuilding from the database"),
            "refused": sum(1 for a in client.attempts if a.status not in (200, 202))}


class IndexCluster:
    """The stack's index cluster: kill a node, start it again with or without its data."""

    def __init__(self, stack) -> None:
        self.stack = stack
        self.url = stack.servers.start_redis_cluster(appendonly=True, name="index-cluster")
        self.nodes = [s for s in stack.servers.servers if s.name.startswith("index-cluster")]

    def client(self) -> RedisCluster:
        return RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", s.port)
                                           for s in self.nodes])

    def keys_per_node(self) -> list[int]:
        cluster = self.client()
        try:
            return [cluster.get_redis_connection(node).dbsize()
                    for node in sorted(cluster.get_primaries(), key=lambda n: n.port)]
        finally:
            cluster.close()

    def restart(self, number: int, *, keep_data: bool) -> dict[str, Any]:
        node = self.nodes[number]
        keys_before = self.keys_per_node()[sorted(s.port for s in self.nodes).index(node.port)]
        node.proc.send_signal(signal.SIGKILL)
        node.proc.wait(timeout=10)
        killed = time.monotonic()
        if not keep_data:  # a lost disk: the node keeps its cluster config, not its data
            shutil.rmtree(Path(node.log).parent / "appendonlydir", ignore_errors=True)
        time.sleep(3)
        self.stack.servers.restart(node)
        self.stack.servers.wait_cluster_ok([s.port for s in self.nodes])
        keys_after = self.keys_per_node()[sorted(s.port for s in self.nodes).index(node.port)]
        return {"node": number, "keep_data": keep_data, "down_s": time.monotonic() - killed,
                "keys_before": keys_before, "keys_after_restart": keys_after}

    def stop(self) -> None:
        for node in self.nodes:
            self.stack.servers._terminate(node)
            self.stack.servers.servers.remove(node)


def restart_web(stack) -> None:
    stack._stop_process(stack.web, signal.SIGTERM, 15)
    stack.start_web()


@pytest.fixture(scope="module")
def drill(stack) -> dict[str, Any]:
    warm_up = run_ingest(stack, [])
    reference = run_ingest(stack, [])
    cluster = IndexCluster(stack)
    stack.extra_env["INDEX_REDIS_URL"] = cluster.url
    restart_web(stack)
    try:
        faulted = run_ingest(stack, [lambda: cluster.restart(1, keep_data=True),
                                     lambda: cluster.restart(2, keep_data=False)])
        spread = cluster.keys_per_node()
        queue_keys = [key.decode() for key in stack.redis().scan_iter("dd:c:*")]
        generation = stack.scalar("SELECT generation FROM articles_indexstate WHERE id = 1")
        pointer = stack.redis().get("dd:gen")
    finally:
        for worker in list(stack.workers):
            stack.kill_worker(worker)
        stack.extra_env.pop("INDEX_REDIS_URL", None)
        restart_web(stack)
        cluster.stop()
    ref_ids, got = reference["doc_ids"], faulted["doc_ids"]
    return {
        "reference": {k: v for k, v in reference.items() if k not in ("accepted", "doc_ids")},
        "faulted": {k: v for k, v in faulted.items() if k not in ("accepted", "doc_ids")},
        "accepted": len(faulted["accepted"]),
        "missing": sorted(faulted["accepted"] - {n for n, d in got.items() if d}),
        "different": sorted(n for n in ref_ids if got.get(n) != ref_ids[n]),
        "reference_complete": reference["accepted"] <= {n for n, d in ref_ids.items() if d},
        "warm_up_docs": len(set(warm_up["doc_ids"].values())),
        "reference_docs": len(set(ref_ids.values())),
        "docs": len(set(got.values())),
        "keys_per_node": spread, "index_keys_on_queue_redis": len(queue_keys),
        "generation_matches": pointer is not None and pointer.decode() == generation,
    }


@pytest.fixture(scope="module")
def recorded(drill: dict[str, Any]) -> dict[str, Any]:
    faulted, c = drill["faulted"], drill["faulted"]["consistency"]
    kept, emptied = faulted["events"]
    checks = {
        "no accepted article lost (every one has a docId)": not drill["missing"]
        and c["done"] == drill["accepted"] and drill["reference_complete"],
        "docIds equal to the reference run on a single Redis": not drill["different"]
        and drill["docs"] == drill["reference_docs"],
        "a node restarted on its AOF kept its keys": kept["keys_after_restart"]
        >= kept["keys_before"] > 0,
        "a node back empty was noticed and the index rebuilt": emptied["keys_after_restart"]
        < emptied["keys_before"] and drill["generation_matches"]
        # every run rebuilds once at its start (stack.clear() empties IndexState): one more
        and faulted["rebuilds_logged"] > drill["reference"]["rebuilds_logged"],
        "the index spread over the three nodes, none on the queue Redis":
        min(drill["keys_per_node"]) > 0 and drill["index_keys_on_queue_redis"] == 0,
        "docs consistent (sizes = members, nothing failed)": c["size_mismatches"] == 0
        and c["failed"] == 0 and c["done_without_doc"] == 0 and c["outbox_pending"] == 0,
    }
    write_record(
        "index-cluster-restart",
        title="A node of the index's Redis Cluster restarted mid-ingest",
        fault=f"INDEX_REDIS_URL on a 3-node Redis Cluster (appendonly yes); during ingest "
              f"SIGKILL of node {kept['node']}, restarted on its AOF after "
              f"{kept['down_s']:.1f} s, then SIGKILL of node {emptied['node']}, restarted "
              f"without its data after {emptied['down_s']:.1f} s; a crawler retrying",
        system_did=f"batches touching the down node failed and were retried (RQ back-off); "
                   f"the node restarted on its AOF had {kept['keys_before']} keys before "
                   f"the kill and {kept['keys_after_restart']} after the restart; the emptied node "
                   f"({emptied['keys_before']} keys before, {emptied['keys_after_restart']} "
                   f"after) was noticed by the presence markers and the index rebuilt from "
                   f"MySQL ({faulted['rebuilds_logged']} rebuild(s)); "
                   f"{drill['accepted']} articles, {len(drill['different'])} docIds different "
                   "from the single-Redis reference run",
        lost="nothing" if not drill["missing"] else f"{len(drill['missing'])} articles",
        recovery_s=faulted["settled_s"],
        checks=checks,
        figures=drill | {"missing": drill["missing"][:10], "different": drill["different"][:10]},
        findings=[f"The warm-up run on a fresh database (boilerplate not learned yet) gave "
                  f"{drill['warm_up_docs']} docIds where the later runs gave "
                  f"{drill['reference_docs']}: reposts decided before their headers and "
                  "footers were learned as boilerplate started docIds of their own "
                  "(single Redis as well as cluster; not a cluster matter)."]
        if drill["warm_up_docs"] != drill["reference_docs"] else [],
    )
    return checks


def test_no_article_is_lost_and_doc_ids_equal_the_single_redis_run(recorded, drill):
    assert recorded["no accepted article lost (every one has a docId)"], drill["missing"][:10]
    assert recorded["docIds equal to the reference run on a single Redis"], \
        drill["different"][:10]
    assert recorded["docs consistent (sizes = members, nothing failed)"], drill["faulted"]


def test_a_restarted_node_keeps_its_data_and_an_emptied_one_is_rebuilt(recorded, drill):
    assert recorded["a node restarted on its AOF kept its keys"], drill["faulted"]["events"]
    assert recorded["a node back empty was noticed and the index rebuilt"], drill["faulted"]
    assert recorded["the index spread over the three nodes, none on the queue Redis"], \
        drill["keys_per_node"]
