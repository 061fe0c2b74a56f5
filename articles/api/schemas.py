"""API schemas (pydantic via django-ninja): camelCase on the wire, as in DESIGN.md."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Literal

from ninja import Schema
from pydantic import BaseModel, ConfigDict, Field, field_validator

# C0/C1 control characters other than tab, newline and carriage return.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def _no_control(value: str) -> str:
    if _CONTROL.search(value):
        raise ValueError("must not contain control characters")
    return value


# The request and result models are plain pydantic models: ninja's Schema wraps every
# validation in an ORM-attribute getter, which costs ~0.1 ms per article on a batch.
class ArticleIn(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=False)

    nid: str = Field(min_length=1, max_length=64, description="Crawler's id; unique.")
    url: str = Field(min_length=1, max_length=2048)
    title: str = Field("", max_length=1000)
    content: str = Field(min_length=1, max_length=1_000_000)
    category: str = Field("", max_length=100)
    media: str = Field("", max_length=200)
    imageCount: int = Field(0, ge=0, le=100_000)
    hotness: float = Field(0.0, ge=0)
    publishedAt: datetime | None = None

    @field_validator("nid", "url", "title", "content", "category", "media")
    @classmethod
    def _clean(cls, value: str) -> str:
        return _no_control(value)

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
    articles: list[ArticleIn] = Field(min_length=1, max_length=500)


class ArticleResult(BaseModel):
    nid: str
    status: Literal["queued", "done", "failed"]
    docId: str | None
    duplicate: bool
    matchedBy: Literal["url", "title", "content", "editor"] | None
    duplicateOf: str | None = Field(description="nid of the docId's representative")
    distance: int | None
    similarity: float | None = None
    failureReason: str | None = None


class BatchResult(BaseModel):
    results: list[ArticleResult]


class DocMember(Schema):
    nid: str
    url: str
    title: str
    media: str
    hotness: float
    matchedBy: str | None
    distance: int | None
    similarity: float | None


class DocOut(Schema):
    docId: str
    size: int
    status: str
    representative: DocMember | None
    members: list[DocMember]


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
    matchedBy: Literal["url", "title", "content"]
    distance: int
    similarity: float
    verified: bool = Field(description="passes the engine's verification (would join)")


class SimilarOut(Schema):
    docId: str | None = Field(description="the docId this article would get; null if new")
    matches: list[SimilarDoc]
