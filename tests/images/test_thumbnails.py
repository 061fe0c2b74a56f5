"""Thumbnails of article pictures: made when a picture is read (a real worker, a local HTTP
server), served by the project to editors only, shown on the cluster page — never the
crawled URL — with the pictures two members share marked and failed ones explained."""

from __future__ import annotations

import io
import json
from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from PIL import Image

from articles.editor.actions import EDITORS_GROUP
from articles.images import fetch as fetching
from articles.images.jobs import fetch_pictures
from articles.images.shared import shared_positions
from articles.images.thumbs import LONGER_SIDE, make_thumbnail, thumbnail_size
from articles.models import Article, ArticleImage, ImageStatus
from fingerprints.rule.picture import decode, phash
from fingerprints.rule.simhash import hamming
from tests.images.test_pictures import BODY, photo
from tests.picture_host import serve

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
    with serve(ROUTES) as (base, hits):
        yield base, hits


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


class Page(HTMLParser):
    """The members' pictures on the cluster page: each <li class="picture"> with the nid
    of its row, and every <img>."""

    def __init__(self) -> None:
        super().__init__()
        self.nid = ""
        self.pictures: dict[tuple[str, int], dict[str, str]] = {}
        self.images: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if tag == "tr" and "data-nid" in found:
            self.nid = found["data-nid"]
        elif tag == "li" and "picture" in found.get("class", "").split():
            self.pictures[self.nid, int(found["data-position"])] = found
        elif tag == "img":
            self.images.append(found)


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    return page


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


@pytest.mark.dialect  # the thumbnail's BLOB, its length in SQL, unsigned pHashes
def test_the_cluster_page_shows_the_thumbnails_and_marks_the_shared_picture(
        client, cluster, editor, server):
    doc, _hits = cluster
    base, _ = server
    client.force_login(editor)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/clusters/{doc.doc_id}/")
    assert response.status_code == 200
    html = response.content.decode()
    page = parse(html)
    # every picture from this site, none from the crawled host
    assert len(page.images) == 3
    for img in page.images:
        assert img["src"].startswith("/images/") and img["src"].endswith("/thumb.jpg")
        assert "127.0.0.1" not in img["src"] and base not in img["src"]
        assert int(img["width"]) <= LONGER_SIDE and int(img["height"]) <= LONGER_SIDE
    assert {img["src"] for img in page.images} == {
        f"/images/{pk}/thumb.jpg" for pk in
        ArticleImage.objects.filter(status=ImageStatus.READ).values_list("pk", flat=True)}
    # one query for the pictures of all the members
    assert sum("articleimage" in q["sql"].lower() for q in queries.captured_queries) == 1
    # g1's photo and g2's smaller copy: shared; g1's other photo: its own
    g1_photo, g2_photo = page.pictures["g1", 0], page.pictures["g2", 0]
    assert "shared" in g1_photo["class"].split() and g1_photo["data-shared"] == "g2"
    assert "shared" in g2_photo["class"].split() and g2_photo["data-shared"] == "g1"
    assert "shared" not in page.pictures["g1", 1]["class"].split()
    assert "data-shared" not in page.pictures["g1", 1]
    assert html.count('class="badge shared-badge"') == 2
    assert '<span class="visually-hidden">: also shown by g2</span>' in html
    # g3's picture failed: its reason, no image
    assert page.pictures["g3", 0]["data-status"] == "failed"
    assert 'Picture not read: <bdi class="mono">not_an_image</bdi>' in html


def test_crawled_markup_in_a_title_stays_text_in_the_alt(client, cluster, editor):
    doc, _hits = cluster
    client.force_login(editor)
    html = client.get(f"/clusters/{doc.doc_id}/").content.decode()
    assert '<script>alert("t")' not in html
    alts = [img["alt"] for img in parse(html).images]
    assert 'Picture 1 of “绿道贯通 <script>alert("t")</script>”' in alts  # parsed back
    assert "alt=\"Picture 1 of “绿道贯通 &lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt;”\"" \
        in html


def test_the_shared_mark_is_in_chinese_too(client, cluster, editor):
    doc, _hits = cluster
    client.force_login(editor)
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/clusters/"})
    html = client.get(f"/clusters/{doc.doc_id}/").content.decode()
    assert '<html lang="zh-hans">' in html
    assert "Picture not read" not in html and ">shared<" not in html
    assert ">共用<" in html and "图片未能读取" in html and "也见于 g2" in html
    assert "的第 1 张图片" in html


def test_shared_positions_compare_the_members_pictures_only_across_members():
    near = phash(decode(ORIGINAL))
    smaller = near ^ 0b111  # three bits apart
    other = phash(decode(OTHER))
    assert hamming(near, other) > 8

    def image(position: int, value: int | None, status: str = ImageStatus.READ):
        return ArticleImage(position=position, phash=value, status=status)

    pictures = {
        1: [image(0, near), image(1, other)],
        2: [image(0, smaller), image(1, other ^ 0xFF, ImageStatus.FAILED)],
        3: [image(0, None, ImageStatus.QUEUED)],
        4: [image(0, other), image(1, other)],  # the same picture twice in one article
    }
    assert shared_positions(pictures, 8) == {1: {0: {2}, 1: {4}}, 2: {0: {1}},
                                             4: {0: {1}, 1: {1}}}
    assert shared_positions(pictures, 3) == shared_positions(pictures, 8)
    assert shared_positions(pictures, 2) == {1: {1: {4}}, 4: {0: {1}, 1: {1}}}
    assert shared_positions({1: [image(0, near)]}, 8) == {}
    with pytest.raises(ValueError, match="max_bits"):
        shared_positions(pictures, -1)
