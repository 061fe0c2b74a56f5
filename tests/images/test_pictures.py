"""Article pictures through the real API, a real worker and a local HTTP server: read and
fingerprinted, or refused with their reason (private addresses, redirects to them,
oversized bodies, decompression bombs, non-images); the article is processed either
way; the same URL is fetched once."""

from __future__ import annotations

import io
import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from PIL import Image

from articles.images import fetch as fetching
from articles.images.fetch import Refused
from articles.models import Article, ArticleImage
from fingerprints.rule.picture import NotAPicture, decode, phash
from fingerprints.rule.simhash import hamming

pytestmark = pytest.mark.django_db(transaction=True)

BODY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")


def photo(seed: int = 1, size: tuple[int, int] = (640, 480), quality: int = 90) -> bytes:
    """A photo-like picture: smooth shapes and noise, as JPEG."""
    rng = np.random.default_rng(seed)
    h, w = size[1], size[0]
    y, x = np.mgrid[0:h, 0:w]
    base = np.zeros((h, w, 3))
    for _ in range(6):
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(40, 200)
        color = rng.uniform(0, 255, 3)
        mask = ((x - cx) ** 2 + (y - cy) ** 2) < r ** 2
        base[mask] = color
    base += rng.normal(0, 8, base.shape)
    out = io.BytesIO()
    Image.fromarray(np.clip(base, 0, 255).astype(np.uint8)).save(out, "JPEG", quality=quality)
    return out.getvalue()


def bomb() -> bytes:
    out = io.BytesIO()
    Image.new("1", (12_000, 12_000)).save(out, "PNG")  # 144 megapixels, a few KB
    return out.getvalue()


ORIGINAL = photo(1)
ROUTES = {
    "/photo.jpg": (200, {"Content-Type": "image/jpeg"}, ORIGINAL),
    "/disguised.txt": (200, {"Content-Type": "text/plain"}, ORIGINAL),  # sniffed, not trusted
    "/text": (200, {"Content-Type": "image/jpeg"}, b"<html>not a picture</html>"),
    "/bomb.png": (200, {"Content-Type": "image/png"}, bomb()),
    "/missing.jpg": (404, {}, b"no"),
    "/to-photo": (302, {"Location": "/photo.jpg"}, b""),
    "/to-private": (302, {"Location": "http://10.0.0.1/x.jpg"}, b""),
    "/to-metadata": (302, {"Location": "http://169.254.169.254/latest/meta-data"}, b""),
}


@pytest.fixture
def server():
    hits: Counter[str] = Counter()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_GET(self):  # noqa: N802
            hits[self.path] += 1
            if self.path == "/huge":  # declares 2 GB
                self.send_response(200)
                self.send_header("Content-Type", "image/jpeg")
                self.send_header("Content-Length", str(2 * 1024 ** 3))
                self.end_headers()
                self.wfile.write(ORIGINAL[:1000])
                return
            if self.path == "/endless":  # no length, more than the cap
                self.send_response(200)
                self.end_headers()
                for _ in range(40):
                    self.wfile.write(ORIGINAL[:3] + b"\0" * 65536)
                return
            status, headers, body = ROUTES.get(self.path, (404, {}, b""))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", hits
    httpd.shutdown()


def refusal(url: str) -> str:
    with pytest.raises(Refused) as caught:
        fetching.fetch(url)
    return caught.value.reason


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/x.jpg", "http://10.0.0.1/x.jpg",
                                 "http://169.254.169.254/latest/meta-data",
                                 "http://[::1]/x.jpg", "http://192.168.1.5/x.jpg",
                                 "http://0.0.0.0/x.jpg", "http://[::ffff:10.0.0.1]/x.jpg"])
def test_private_loopback_and_link_local_addresses_are_refused_before_connecting(
        url, settings):
    settings.IMAGE_FETCH_ALLOW_PRIVATE = False
    assert refusal(url) == "unreachable"


def test_each_refusal_has_its_reason(server, loopback_is_public, settings):
    base, hits = server
    settings.IMAGE_MAX_BYTES = 1_000_000
    assert fetching.fetch(f"{base}/photo.jpg").kind == "jpeg"
    assert fetching.fetch(f"{base}/disguised.txt").kind == "jpeg"  # the bytes decide
    assert fetching.fetch(f"{base}/to-photo").url.endswith("/photo.jpg")
    assert refusal(f"{base}/to-private") == "unreachable"
    assert refusal(f"{base}/to-metadata") == "unreachable"
    assert refusal(f"{base}/huge") == "too_large"
    assert refusal(f"{base}/endless") == "too_large"
    assert refusal(f"{base}/text") == "not_an_image"
    assert refusal(f"{base}/missing.jpg") == "http_status"
    assert refusal("ftp://example.com/x.jpg") == "bad_url"
    with pytest.raises(NotAPicture) as caught:
        decode(fetching.fetch(f"{base}/bomb.png").data)
    assert caught.value.reason == "decompression_bomb"


def test_near_duplicate_pictures_have_near_hashes():
    original = phash(decode(ORIGINAL))
    smaller = io.BytesIO()
    Image.open(io.BytesIO(ORIGINAL)).resize((320, 240)).save(smaller, "JPEG", quality=35)
    assert hamming(original, phash(decode(smaller.getvalue()))) <= 6
    assert hamming(original, phash(decode(photo(2)))) > 16


def post(client, auth, body):
    return client.post("/api/v1/articles", data=json.dumps(body),
                       content_type="application/json", **auth)


@pytest.mark.dialect  # the unsigned 64-bit pHash column
def test_pictures_through_the_api_a_worker_and_a_local_server(client, auth, redis_client,
                                                              run_worker, server, settings):
    base, hits = server
    settings.IMAGE_FETCH_ALLOW_PRIVATE = True  # the local server
    images = [f"{base}/photo.jpg", f"{base}/text", f"{base}/bomb.png"]
    answer = post(client, auth, {"nid": "p1", "url": "https://n.example/p1", "title": "绿道",
                                 "content": BODY, "images": images})
    assert answer.status_code == 202
    assert [i["status"] for i in answer.json()["images"]] == ["queued"] * 3
    run_worker()
    result = client.get("/api/v1/articles/p1", **auth).json()
    assert result["status"] == "done" and result["docId"]  # the article, whatever its pictures
    assert [(i["status"], i["reason"]) for i in result["images"]] == [
        ("read", None), ("failed", "not_an_image"), ("failed", "decompression_bomb")]
    assert result["images"][0]["width"] == 640
    stored = ArticleImage.objects.get(article__nid="p1", position=0)
    assert stored.phash == phash(decode(ORIGINAL)) and len(stored.content_hash) == 32
    # another article showing the same picture: not fetched again
    post(client, auth, {"nid": "p2", "url": "https://m.example/p2", "title": "另一篇",
                        "content": BODY + "（转载）", "images": [f"{base}/photo.jpg"]})
    run_worker()
    assert hits["/photo.jpg"] == 1
    assert ArticleImage.objects.get(article__nid="p2").phash == stored.phash
    assert Article.objects.get(nid="p2").status == "done"


def test_a_private_picture_fails_and_the_article_is_still_processed(client, auth,
                                                                    redis_client,
                                                                    run_worker, settings):
    settings.IMAGE_FETCH_ALLOW_PRIVATE = False
    post(client, auth, {"nid": "q1", "url": "https://n.example/q1", "title": "绿道",
                        "content": BODY, "images": ["http://10.1.2.3/x.jpg"]})
    run_worker()
    result = client.get("/api/v1/articles/q1", **auth).json()
    assert result["status"] == "done"
    assert result["images"] == [{"url": "http://10.1.2.3/x.jpg", "status": "failed",
                                 "reason": "unreachable", "width": None, "height": None}]


def test_bad_image_lists_get_a_per_field_422_and_store_nothing(client, auth, redis_client,
                                                               settings):
    settings.IMAGE_MAX_PER_ARTICLE = 2
    too_many = post(client, auth, {"nid": "b1", "url": "https://n.example/b1", "content": BODY,
                                   "images": [f"https://i.example/{n}.jpg" for n in range(3)]})
    assert too_many.status_code == 422
    assert "images" in json.dumps(too_many.json()["error"]["details"])
    relative = post(client, auth, {"nid": "b2", "url": "https://n.example/b2",
                                   "content": BODY, "images": ["/x.jpg"]})
    assert relative.status_code == 422
    assert not Article.objects.filter(nid__in=["b1", "b2"]).exists()


def test_a_worker_of_its_own_fetches_pictures_and_leaves_the_text(client, auth, redis_client,
                                                                   server, settings):
    from django.core.management import call_command

    base, _hits = server
    settings.IMAGE_FETCH_ALLOW_PRIVATE = True
    post(client, auth, {"nid": "w1", "url": "https://n.example/w1", "title": "绿道",
                        "content": BODY, "images": [f"{base}/photo.jpg"]})
    call_command("dedup_worker", "--queues", "images", "--burst")
    assert ArticleImage.objects.get(article__nid="w1").status == "read"
    assert Article.objects.get(nid="w1").status == "queued"  # the text is another worker's


def test_the_same_bytes_under_another_url_are_read_once(client, auth, redis_client,
                                                        run_worker, server, settings,
                                                        monkeypatch):
    from articles.images import jobs

    base, hits = server
    settings.IMAGE_FETCH_ALLOW_PRIVATE = True
    decoded = []
    real = jobs.decode
    monkeypatch.setattr(jobs, "decode", lambda data: decoded.append(1) or real(data))
    post(client, auth, {"nid": "s1", "url": "https://n.example/s1", "title": "绿道",
                        "content": BODY, "images": [f"{base}/photo.jpg"]})
    post(client, auth, {"nid": "s2", "url": "https://m.example/s2", "title": "绿道",
                        "content": BODY, "images": [f"{base}/disguised.txt"]})
    run_worker()
    assert hits["/photo.jpg"] == 1 and hits["/disguised.txt"] == 1  # both URLs fetched
    assert len(decoded) == 1  # the second one's bytes were known: not decoded again
    first, second = (ArticleImage.objects.get(article__nid=n) for n in ("s1", "s2"))
    assert second.status == "read" and second.content_hash == first.content_hash
    assert (second.phash, second.mirror_phash) == (first.phash, first.mirror_phash)
    assert bytes(second.thumbnail) == bytes(first.thumbnail) != b""
