"""A real Prometheus (Debian's package, the shipped deploy/prometheus/prometheus.yml)
scrapes a running stack (gunicorn with 2 processes, a dedup_worker in its own process)
with METRICS_TOKEN; articles posted through the API, served by both gunicorn processes
(their access log says which served what), are read back as counters through
Prometheus's query API: counts from every process, none lost to a fork or a restart."""

from __future__ import annotations

import json
import socket
import time

import pytest
import requests

from support.prometheus import PrometheusServer
from support.stack import Stack

pytestmark = pytest.mark.drill

TOKEN = "prometheus-test-token-0123456789"
STORIES = ["滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
           "绿道管理处负责人介绍，开通首日共有约三万名市民前来骑行和散步。",
           "市气象台今天上午发布寒潮蓝色预警，受强冷空气影响，未来三天全市气温将下降八到十度，"
           "最低气温可达零下五度，并伴有五到六级偏北风。",
           "本市第三条地铁线路今日开通试运营，全线设站二十一座，日均客流预计超过二十万人次，"
           "沿线居民通勤时间将缩短近一半。"]


def wait_for(server: PrometheusServer, expr: str, expected: float, timeout: float = 60
             ) -> float | None:
    deadline = time.monotonic() + timeout
    seen = None
    while time.monotonic() < deadline:
        seen = server.query(expr)
        if seen == expected:
            return seen
        time.sleep(0.5)
    return seen


def hold_post(stack: Stack, item: dict) -> tuple[socket.socket, bytes]:
    """A POST whose headers and first body bytes are sent: the process that accepted it
    waits for the rest (finish_post sends it and reads the answer)."""
    body = json.dumps(item).encode()
    host, port = stack.base_url.split("//")[1].split(":")
    conn = socket.create_connection((host, int(port)), timeout=30)
    conn.sendall(f"POST /api/v1/articles HTTP/1.1\r\nHost: {host}:{port}\r\n"
                 f"Authorization: Bearer {stack.api_key}\r\n"
                 f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                 "Connection: close\r\n\r\n".encode() + body[:5])
    time.sleep(1)  # accepted, and its process is reading the body
    return conn, body[5:]


def finish_post(held: tuple[socket.socket, bytes]) -> bytes:
    conn, remainder = held
    with conn:
        conn.sendall(remainder)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer


def test_prometheus_reads_what_every_process_counted(tmp_path):
    stack = Stack(tmp_path / "stack", extra_env={"METRICS_TOKEN": TOKEN}, access_log=True)
    stack.start()
    server = None
    try:
        # without the token the stack refuses; Prometheus sends it from its token file
        assert requests.get(f"{stack.base_url}/metrics", timeout=10).status_code == 401
        server = PrometheusServer(tmp_path / "prometheus", stack.base_url.split("//")[1],
                                  TOKEN).start()
        worker = stack.start_worker()
        articles = [{"nid": f"p{i}-{j}", "url": f"https://site{j}.example/{i}",
                     "title": f"新闻{i}", "content": story + ("（转载）" if j else "")}
                    for i, story in enumerate(STORIES) for j in range(2)]

        # The first post's body arrives slowly: the (sync) process that took it is busy
        # reading it while the other five posts, each on a connection of its own (a
        # keep-alive session stays with one process), reach the other process.
        first, *rest = articles
        held = hold_post(stack, first)
        for item in rest:
            assert requests.post(f"{stack.base_url}/api/v1/articles", json=item, timeout=30,
                                 headers={"Authorization": f"Bearer {stack.api_key}"}
                                 ).status_code == 202
        assert finish_post(held).startswith(b"HTTP/1.1 202")
        assert wait_for(server, "sum(dedupsite_articles_received_total{kind=\"new\"})",
                        6) == 6
        # both gunicorn processes served posts, and Prometheus counts what each served
        by_process = stack.served_by_process("POST", "/api/v1/articles")
        assert len(by_process) == 2 and sum(by_process.values()) == 6, by_process
        print("posts served by each gunicorn process:", by_process)
        assert wait_for(server, "sum(dedupsite_articles_processed_total)", 6) == 6
        assert server.query('dedupsite_articles_processed_total{reason="new"}') == 3
        assert wait_for(server, "dedupsite_articles_queued", 0) == 0
        assert wait_for(server, 'dedupsite_workers{queue="ingest"}', 1) == 1
        assert server.query('sum(dedupsite_job_run_seconds_count{queue="ingest"})') >= 1
        # the six posts and the stack's own start-up health check (a check that timed
        # out on a busy machine and was polled again may have been served too)
        served = server.query('sum(dedupsite_http_requests_total{area="api",status="2xx"})')
        assert 6 + 1 <= served <= 6 + stack.health_polls
        # the refused scrape
        assert server.query('dedupsite_http_requests_total{area="metrics",status="4xx"}') \
            == 1
        assert server.query('up{job="dedupsite"}') == 1
        # the worker stopped: its counts stay (they live in Redis), the gauge notices
        stack.stop_worker(worker)
        assert wait_for(server, 'dedupsite_workers{queue="ingest"}', 0) == 0
        assert server.query("sum(dedupsite_articles_processed_total)") == 6
        rules = requests.get(f"{server.url}/api/v1/rules", timeout=10).json()
        names = {rule["name"] for group in rules["data"]["groups"] for rule in group["rules"]}
        assert {"DedupsiteNoWorkers", "DedupsiteArticlesWaiting"} <= names
    finally:
        if server is not None:
            server.stop()
        stack.stop()
