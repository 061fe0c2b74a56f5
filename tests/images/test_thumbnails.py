"""Thumbnails of article pictures: made when a picture is read (a real worker, a local HTTP
server), served by the project to editors only."""

from __future__ import annotations

import io
import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth.models import Group, User
from PIL import Image

from articles.editor.actions import EDITORS_GROUP
from articles.images import fetch as fetching
from articles.images.jobs import fetch_pictures
from articles.images.thumbs import LONGER_SIDE, make_thumbnail, thumbnail_size
from articles.models import Article, ArticleImage, ImageStatus
from fingerprints.rule.picture import decode
from tests.images.test_pictures import BODY, photo

pytestmark = pytest.mark.django_db(transaction=True)

ORIGINAL = photo(1)
OTHER = photo(2)


def _jpeg(picture: Image.Image, **options) -> bytes:
    out = io.BytesIO()
    picture.save(out, "JPEG", **options)
    return out.getvalue()


#: the same photo, smaller and re-encoded: other bytes, a near pHash
SMALLER = _jpeg(Image.open(io.BytesIO(ORIGINAL)).resize((320, 240)), quality=40)
ROUTES = {
    "/a/photo.jpg": ("image/jpeg", ORIGINAL),
    "/b/photo-small.jpg": ("image/jpeg", SMALLER),
    "/a/other.jpg": ("image/jpeg", OTHER),
    "/c/text": ("image/jpeg", b"<html>not a picture</html>"),
}


@pytest.fixture
def server():
    hits: Counter[str] = Counter()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_GET(self):  # noqa: N802
            hits[self.path] += 1
            kind, body = ROUTES.get(self.path, ("text/plain", b""))
            self.send_response(200 if self.path in ROUTES else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", hits
    httpd.shutdown()


@pytest.fixture
def loopback_is_public(monkeypatch, settings):
    """127.0.0.1 (the local server) stands for the public web; every other address is
    checked by the real rule."""
    settings.IMAGE_FETCH_ALLOW_PRIVATE = False
    real = fetching._allowed
    monkeypatch.setattr(fetching, "_allowed",
                        lambda address: address == "127.0.0.1" or real(address))


@pytest.fixture
def editor(db) -> User:
    user = User.objects.create_user("editor", password="x" * 12)
    user.groups.add(Group.objects.get_or_create(name=EDITORS_GROUP)[0])
    return user


def post(client, auth, nid: str, title: str, images: list[str]) -> None:
    response = client.post("/api/v1/articles", content_type="application/json", **auth,
                           data=json.dumps({"nid": nid, "url": f"https://news.example/{nid}",
                                            "title": title, "content": BODY,
                                            "images": images}))
    assert response.status_code == 202


@pytest.fixture
def cluster(client, auth, run_worker, server, loopback_is_public):
    """Three copies of one story: g1 and g2 show the same photo (other files, other
    sizes), g1 also one of its own; g3's picture is not a picture."""
    base, hits = server
    post(client, auth, "g1", '绿道贯通 <script>alert("t")</script>',
         [f"{base}/a/photo.jpg", f"{base}/a/other.jpg"])
    post(client, auth, "g2", "滨江绿道全线贯通", [f"{base}/b/photo-small.jpg"])
    post(client, auth, "g3", "绿道今日贯通", [f"{base}/c/text"])
    run_worker()
    docs = {a.nid: a.doc for a in Article.objects.filter(nid__in=["g1", "g2", "g3"])}
    assert len({doc.pk for doc in docs.values()}) == 1, "the three copies are one cluster"
    return docs["g1"], hits


@pytest.mark.dialect  # the thumbnail's BLOB, its length in SQL, unsigned pHashes
def test_a_thumbnail_is_made_when_a_picture_is_read_and_copied_for_the_same_url(
        client, auth, run_worker, server, loopback_is_public):
    base, hits = server
    post(client, auth, "t1", "绿道", [f"{base}/a/photo.jpg", f"{base}/c/text"])
    run_worker()
    read, failed = ArticleImage.objects.filter(article__nid="t1").order_by("position")
    assert read.status == ImageStatus.READ and failed.status == ImageStatus.FAILED
    assert read.url_digest == ArticleImage.digest(f"{base}/a/photo.jpg")
    thumb = Image.open(io.BytesIO(bytes(read.thumbnail)))
    assert thumb.format == "JPEG" and thumb.mode == "RGB"
    assert max(thumb.size) == LONGER_SIDE and thumb.size == (160, 120)
    assert thumb.size == thumbnail_size(read.width, read.height)
    assert bytes(read.thumbnail) == make_thumbnail(decode(ORIGINAL))  # deterministic
    assert bytes(failed.thumbnail) == b""
    # another article naming the same URL: not fetched again, the same thumbnail
    post(client, auth, "t2", "另一篇", [f"{base}/a/photo.jpg"])
    article = Article.objects.get(nid="t2")
    assert fetch_pictures(article.pk) == 1  # the job itself, called directly
    assert hits["/a/photo.jpg"] == 1
    copy = ArticleImage.objects.get(article=article)
    assert bytes(copy.thumbnail) == bytes(read.thumbnail) and copy.phash == read.phash


def test_a_thumbnail_keeps_nothing_of_the_file_and_never_enlarges():
    picture = Image.new("RGBA", (900, 300), (200, 30, 30, 0))  # fully transparent
    exif = Image.Exif()
    exif[0x010E] = "secret description"
    exif[0x0112] = 6  # orientation: not applied, as the pHash does not
    data = _jpeg(Image.new("RGB", (900, 300), "red"), exif=exif.tobytes(),
                 icc_profile=b"\0" * 200, comment=b"a comment")
    thumb = Image.open(io.BytesIO(make_thumbnail(decode(data))))
    assert thumb.size == (160, 53)
    assert not thumb.getexif() and "icc_profile" not in thumb.info
    assert "comment" not in thumb.info and "exif" not in thumb.info
    laid_on_white = Image.open(io.BytesIO(make_thumbnail(picture)))
    assert laid_on_white.getpixel((80, 26)) >= (250, 250, 250)
    assert Image.open(io.BytesIO(make_thumbnail(Image.new("P", (40, 90))))).size == (40, 90)
    with pytest.raises(ValueError, match="0x5"):
        thumbnail_size(0, 5)


def test_the_thumbnail_view_serves_a_jpeg_to_editors_only(client, cluster, editor):
    image = ArticleImage.objects.get(article__nid="g1", position=0)
    url = f"/images/{image.pk}/thumb.jpg"
    anonymous = client.get(url)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    client.force_login(User.objects.create_user("reader", password="x" * 12))
    assert client.get(url).status_code == 403  # signed in, neither staff nor editor
    client.force_login(editor)
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "image/jpeg"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == "default-src 'none'"
    assert response["Cache-Control"].startswith("private")
    assert response.content == bytes(image.thumbnail)
    assert client.head(url).status_code == 200
    assert client.post(url).status_code == 405
    failed = ArticleImage.objects.get(article__nid="g3")
    assert client.get(f"/images/{failed.pk}/thumb.jpg").status_code == 404
    assert client.get("/images/999999/thumb.jpg").status_code == 404
