"""API schemas (pydantic via django-ninja): camelCase on the wire (docs/api.md)."""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import UTC, datetime
from typing import Any, Literal

from ninja import Schema
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from articles.api import lookalikes
from articles.images import fetch
from articles.ingest.intake import ArticleInput
from fingerprints.rule.normalize import has_text

# C0/C1 control characters other than tab, newline and carriage return.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _no_format_characters(value: str) -> str:
    """Identifiers must look like what they are: no zero-width, bidi-control or other
    invisible format characters (Unicode category Cf), which make one nid or URL look
    like another, or flip the text around it."""
    if any(unicodedata.category(ch) == "Cf" for ch in value):
        raise ValueError("must not contain invisible format or bidi control characters")
    return value


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def _no_control(value: str) -> str:
    if _CONTROL.search(value):
        raise ValueError("must not contain control characters")
    return value


def field_errors(errors: list[dict[str, Any]]) -> dict[str, list[str]]:
    """pydantic's errors as {"field": [messages]} (nested fields dotted: "articles.3.url")."""
    fields: dict[str, list[str]] = {}
    for err in errors:
        loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "payload")]
        message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        fields.setdefault(".".join(loc) or "body", []).append(message)
    return fields


# The request and result models are plain pydantic models: ninja's Schema wraps every
# validation in an ORM-attribute getter, which costs ~0.1 ms per article on a batch.
class ArticleIn(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=False)

    nid: str = Field(min_length=1, max_length=64, description="Crawler's id; unique.")
    url: str = Field(min_length=1, max_length=2048)
    title: str = Field("", max_length=1000)
    content: str = Field("", max_length=1_000_000, validate_default=True, description=(
        "May be empty (or markup only) when the title has text: a title-only page "
        "(video, images), matched by URL and title."))
    category: str = Field("", max_length=100)
    media: str = Field("", max_length=200)
    imageCount: int = Field(0, ge=0, le=100_000)
    hotness: float = Field(0.0, ge=0)
    publishedAt: datetime | None = None
    images: list[str] = Field(default_factory=list, description=(
        "Absolute http(s) URLs of the article's pictures, at most IMAGE_MAX_PER_ARTICLE "
        "(default 8); fetched by their own job, each reported in the result."))

    @field_validator("nid", "url", "title", "content", "category", "media")
    @classmethod
    def _clean(cls, value: str) -> str:
        return _no_control(value)

    @field_validator("content")
    @classmethod
    def _some_text(cls, value: str, info: ValidationInfo) -> str:
        # One rule for every entry point (API, `ingest`, the seed call): a body, or at
        # least a title, with text left after markup and white space are removed.
        if not has_text(value) and not has_text(info.data.get("title") or ""):
            raise ValueError("is empty after removing markup and white space, and so is "
                             "the title (a title-only article needs a title)")
        return value

    def to_input(self) -> ArticleInput:
        return ArticleInput(
            nid=self.nid, url=self.url, title=self.title, content=self.content,
            category=self.category, media=self.media, image_count=self.imageCount,
            hotness=self.hotness, published_at=self.publishedAt, images=tuple(self.images),
        )

    @field_validator("nid", "url", "media")
    @classmethod
    def _visible(cls, value: str) -> str:
        return _no_format_characters(value)

    @field_validator("nid", "media")
    @classmethod
    def _no_lookalikes(cls, value: str) -> str:
        return lookalikes.check_identifier(value) if value else value

    @field_validator("url")
    @classmethod
    def _no_lookalike_host(cls, value: str) -> str:
        return lookalikes.check_url(value)

    @field_validator("nid")
    @classmethod
    def _nid_printable(cls, value: str) -> str:
        if value.strip() != value or not value.strip():
            raise ValueError("must not be blank or have leading/trailing white space")
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not re.match(r"^https?://[^\s/]+", value, re.IGNORECASE):
            raise ValueError("must be an absolute http(s) URL")
        if re.search(r"[\t\n\r]", value):  # a URL has no line breaks (header injection)
            raise ValueError("must not contain tabs or line breaks")
        return value

    @field_validator("images")
    @classmethod
    def _images(cls, value: list[str]) -> list[str]:
        from django.conf import settings

        if len(value) > settings.IMAGE_MAX_PER_ARTICLE:
            raise ValueError(f"at most {settings.IMAGE_MAX_PER_ARTICLE} images")
        for url in value:
            if len(url) > 2048:
                raise ValueError("an image URL is longer than 2048 characters")
            cls._url(url)
            try:  # what the picture fetcher can fetch: a host, a port from 1 to 65535
                fetch.parse(url)
            except fetch.Refused:
                raise ValueError("an image URL needs a host and a port from 1 to "
                                 "65535") from None
            _no_format_characters(url)
            lookalikes.check_url(url)
        return list(dict.fromkeys(value))  # the same picture twice is one

    @field_validator("publishedAt")
    @classmethod
    def _storable(cls, value: datetime | None) -> datetime | None:
        # Stored in UTC: 0001-01-01T00:00+14:00 or 9999-12-31T23:59-14:00 would overflow.
        if value is not None and value.tzinfo is not None:
            try:
                value.astimezone(UTC)
            except OverflowError as exc:
                raise ValueError("is out of range once converted to UTC") from exc
        return value

    @field_validator("hotness")
    @classmethod
    def _finite(cls, value: float) -> float:
        return _finite(value)


class ArticleBatchIn(BaseModel):
    """The documented shape of a batch (the OpenAPI schema). The endpoint validates the
    articles one by one: each invalid one gets its own error in the results."""

    articles: list[ArticleIn] = Field(min_length=1, description=(
        "At most API_MAX_BATCH (default 500) articles."))


class ImageResult(BaseModel):
    url: str
    status: Literal["queued", "read", "failed"]
    reason: str | None = Field(None, description="why it failed (unreachable, timeout, "
                               "too_large, not_an_image, decompression_bomb, ...)")
    width: int | None = None
    height: int | None = None


class MatchWeight(BaseModel):
    # a vector model's comparisons are its measures: any name of COMPARISONS
    comparison: str = Field(description=(
        "under the rule's model (labels-1) body, title, numbers, names or pictures; under a "
        "model on the comparison vector (the default) one measure of the vector "
        "(docs/engine.md, \"The comparison vector and the learned model\")"))
    level: str = Field(description="the comparison's level (docs/engine.md, the match model)")
    weight: float = Field(description="match weight in bits (log2 of a Bayes factor)")
    value: float | None = Field(None, description=(
        "the measure (a model on the comparison vector; null when the data is missing)"))


class MatchExplanation(BaseModel):
    """The match model's score: ``prior`` plus the weights is ``matchWeight``; the rule's
    model's probability is 1 / (1 + 2^-matchWeight), a vector model's is calibrated
    (``probability``). A canonical-URL match has only ``rule``."""

    rule: str | None = Field(None, description="a hard rule that matched (\"url\")")
    model: str | None = Field(None, description="the model's version")
    prior: float | None = None
    matchWeight: float | None = None
    probability: float | None = Field(None, description=(
        "a vector model's calibrated match probability (the rule's model: none)"))
    weights: list[MatchWeight] = Field(default_factory=list)


class ArticleResult(BaseModel):
    nid: str
    status: Literal["queued", "done", "failed"]
    docId: str | None
    duplicate: bool
    matchedBy: Literal["url", "title", "content", "picture", "editor"] | None
    duplicateOf: str | None = Field(description="nid of the docId's representative")
    distance: int | None
    similarity: float | None = None
    matchProbability: float | None = Field(
        None, description="the match model's probability that the article and the doc it "
        "joined are one story (1 for a canonical-URL match); null for a new docId")
    matchExplanation: MatchExplanation | None = Field(
        None, description="how the match model's weights add up to matchProbability")
    failureReason: str | None = None
    images: list[ImageResult] = Field(default_factory=list)


class ErrorDetail(BaseModel):
    code: str
    message: str
    details: dict[str, list[str]] | None = None


class InvalidResult(BaseModel):
    """A batch item that was refused (nothing of it stored); the others were. Status
    ``invalid``: bad fields (error code ``invalid``); ``conflict``: the nid was first
    posted with another API key, which this key may not change (code ``not_owner``)."""

    index: int = Field(description="its position in the request's articles, from 0")
    nid: str | None = Field(description="the nid it gave, if it gave one")
    status: Literal["invalid", "conflict"]
    error: ErrorDetail


class BatchResult(BaseModel):
    results: list[ArticleResult | InvalidResult]


class DocMember(Schema):
    nid: str
    url: str
    title: str
    media: str
    hotness: float
    matchedBy: str | None
    distance: int | None
    similarity: float | None
    matchProbability: float | None = None


class DocOut(Schema):
    docId: str
    size: int
    status: str
    representative: DocMember | None
    members: list[DocMember]


class ChangeOut(Schema):
    cursor: str = Field(description="Its place in the log, in commit order: resume after it")
    kind: str = Field(description="membership (an article's docId), representative, status")
    nid: str = Field(description="The article whose docId changed (membership)")
    docId: str
    previousDocId: str = Field(description="Its docId before (empty: a new article)")
    representativeNid: str = Field(description="The docId's new representative")
    status: str = Field(description="The docId's new review status")
    reason: str = Field(description="ingest, redecide, rebuild, hotness, editor:<action>")
    at: datetime


class ChangesOut(Schema):
    changes: list[ChangeOut]
    next: str = Field(description="Pass it as after= for the next page")


class ErrorBody(Schema):
    code: str
    message: str
    details: dict | list | None = None


class ErrorOut(Schema):
    error: ErrorBody


class HotnessIn(Schema):
    hotness: float = Field(ge=0)

    @field_validator("hotness")
    @classmethod
    def _finite(cls, value: float) -> float:
        return _finite(value)


class SimilarIn(Schema):
    title: str = Field("", max_length=1000)
    content: str = Field(min_length=1, max_length=1_000_000)
    url: str | None = Field(None, max_length=2048)

    @field_validator("title", "content")
    @classmethod
    def _clean(cls, value: str) -> str:
        return _no_control(value)


class SimilarDoc(Schema):
    docId: str
    nid: str = Field(description="the closest member")
    matchedBy: Literal["url", "title", "content", "picture"]
    distance: int
    similarity: float
    probability: float = Field(description="the match model's probability for the pair "
                               "(1 for a canonical-URL match)")
    verified: bool = Field(description="the probability reaches the match threshold "
                           "(would join)")


class PictureDoc(Schema):
    docId: str
    distance: int = Field(description="bits between the picture and the doc's closest one")
    nids: list[str] = Field(description="the doc's articles showing the picture")


class PicturesOut(Schema):
    hash: str = Field(description="the picture's 64-bit perceptual hash, 16 hex digits")
    stock: bool = Field(description="seen under so many stories that it is no evidence")
    pictureBits: int = Field(description="the engine's picture_bits: the distance searched")
    docs: list[PictureDoc]
    more: int = Field(description="docIds beyond the list")


class SimilarOut(Schema):
    docId: str | None = Field(description="the docId this article would get; null if new")
    matches: list[SimilarDoc]
