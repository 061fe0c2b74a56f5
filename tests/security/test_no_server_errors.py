"""Inputs that used to answer 500: a picture upload in a format or colour mode the
service does not read (only JPEG, PNG, GIF and WebP are decoded), an upload over the
similar call's pixel limit, and activating a match model version that does not exist."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from PIL import Image

from fingerprints.rule.picture import MAX_PIXELS, NotAPicture, decode

pytestmark = pytest.mark.django_db


def encoded(image: Image.Image, kind: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, kind, **options)
    return out.getvalue()


def upload(client, auth, data: bytes, content_type: str = "image/png"):
    return client.post("/api/v1/images/similar", data=data, content_type=content_type,
                       **auth)


@pytest.mark.parametrize(("mode", "kind"), [("LAB", "TIFF"), ("RGB", "TIFF"), ("RGB", "BMP"),
                                            ("RGB", "ICO"), ("RGB", "PCX"), ("F", "TIFF")])
def test_an_upload_in_another_format_is_a_422(client, auth, mode, kind):
    answer = upload(client, auth, encoded(Image.new(mode, (64, 64)), kind))
    assert answer.status_code == 422
    assert answer.json()["error"]["details"] == {"body": ["undecodable"]}


@pytest.mark.parametrize(("mode", "kind"), [
    ("RGB", "JPEG"), ("L", "JPEG"), ("CMYK", "JPEG"), ("1", "PNG"), ("LA", "PNG"),
    ("I;16", "PNG"), ("P", "PNG"), ("RGBA", "PNG"), ("P", "GIF"), ("L", "GIF"),
    ("RGB", "WEBP"), ("RGBA", "WEBP")])
def test_every_mode_of_the_four_formats_is_answered(client, auth, redis_client, mode, kind):
    answer = upload(client, auth, encoded(Image.new(mode, (64, 48)), kind))
    assert answer.status_code == 200, answer.content


def test_the_similar_call_decodes_fewer_pixels_than_the_fetcher(client, auth):
    big = encoded(Image.new("1", (4000, 3001)), "PNG")  # a few KB, 12 megapixels and more
    answer = upload(client, auth, big)
    assert answer.status_code == 422
    assert answer.json()["error"]["details"] == {"body": ["decompression_bomb"]}
    assert decode(big).size == (4000, 3001)  # a fetched picture may have up to MAX_PIXELS
    with pytest.raises(NotAPicture):
        decode(encoded(Image.new("1", (MAX_PIXELS // 1000 + 1, 1000)), "PNG"))


def test_activating_a_version_that_does_not_exist_is_a_404(client):
    User.objects.create_superuser("admin", "a@example.com", "pw-long-enough-1")
    client.login(username="admin", password="pw-long-enough-1")
    answer = client.post("/admin/articles/matchmodelversion/999999/activate/")
    assert answer.status_code == 404
