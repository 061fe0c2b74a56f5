"""Slow picture hosts never delay the text, through the real stack: gunicorn, one
`manage.py dedup_worker` serving every queue (what `make worker` runs), MariaDB and
Redis of their own, and a local picture host that sends a PNG header and then a byte
every 5 seconds. Two articles with eight such pictures each are posted, then a text-only
article 8 seconds later: it is done within 30 seconds of being posted."""

from __future__ import annotations

import time

import pytest

from tests.picture_host import Drip, serve

BODY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")
OTHER = ("市气象台今晨发布寒潮蓝色预警，预计未来三天气温将下降八到十摄氏度，"
         "并伴有五到六级偏北风，请市民注意防寒保暖，农业设施做好加固。")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory):
    from support.stack import Stack

    server = Stack(tmp_path_factory.mktemp("pictures"), web_workers=1,
                   extra_env={"IMAGE_FETCH_ALLOW_PRIVATE": "true"}).start()
    yield server
    server.stop()


def wait_done(session, base_url: str, nid: str, within_s: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < within_s:
        answer = session.get(f"{base_url}/api/v1/articles/{nid}", timeout=10)
        if answer.status_code == 200 and answer.json()["status"] == "done":
            return time.monotonic() - started
        time.sleep(0.25)
    raise AssertionError(f"{nid} not done within {within_s} s")


def test_a_text_article_behind_two_articles_of_slow_pictures_is_done_within_30_s(stack):
    session = stack.session()
    api = f"{stack.base_url}/api/v1/articles"
    routes = {f"/{n}.png": Drip(every_s=5.0) for n in range(16)}
    worker = stack.start_worker()
    try:
        with serve(routes) as (host, hits):
            for article in range(2):
                answer = session.post(api, timeout=30, json={
                    "nid": f"slow-{article}", "url": f"https://n.example/slow-{article}",
                    "title": f"绿道{article}", "content": BODY + str(article),
                    "images": [f"{host}/{article * 8 + n}.png" for n in range(8)]})
                assert answer.status_code == 202
            wait_done(session, stack.base_url, "slow-1", within_s=60)
            started = time.monotonic()
            while sum(hits.values()) == 0 and time.monotonic() - started < 30:
                time.sleep(0.2)  # a picture job holds the worker now
            assert sum(hits.values()) >= 1
            time.sleep(8)
            answer = session.post(api, timeout=30, json={
                "nid": "text", "url": "https://n.example/text", "title": "寒潮预警",
                "content": OTHER})
            assert answer.status_code == 202
            took = wait_done(session, stack.base_url, "text", within_s=30)
            print(f"the text article was done {took:.1f} s after it was posted")
            assert took < 30
            slow = session.get(f"{api}/slow-0", timeout=10).json()
            assert {image["status"] for image in slow["images"]} <= {"queued", "failed"}
            assert all(image["reason"] in (None, "timeout") for image in slow["images"])
    finally:
        stack.kill_worker(worker)
