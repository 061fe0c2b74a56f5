"""The crawler API (django-ninja). Contract: docs/api.md."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import pydantic
import redis
from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.db import DatabaseError, connection, transaction
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.urls import URLPattern, re_path
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI, Status
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer
from redis.exceptions import RedisClusterException

from articles.api.schemas import (
    ArticleBatchIn,
    ArticleIn,
    ArticleResult,
    BatchResult,
    ChangesOut,
    DocOut,
    ErrorDetail,
    ErrorOut,
    HotnessIn,
    InvalidResult,
    PicturesOut,
    SimilarIn,
    SimilarOut,
    field_errors,
)
from articles.ingest import lookup, results
from articles.ingest.assign import assign
from articles.ingest.intake import Accepted, NotOwner, accept_articles, update_hotness
from articles.ingest.jobs import enqueue_processing
from articles.ingest.lookup import find_similar
from articles.lib.conflicts import lock_conflict
from articles.models import ApiKey, Article, ArticleStatus, Doc
from dedupsite import counters, metrics
from fingerprints.rule.normalize import has_text
from fingerprints.rule.picture import NotAPicture, decode, picture_hashes

log = logging.getLogger(__name__)


class _AtomicConflict(Exception):
    """An ?atomic=true batch named another key's nid: its transaction is rolled back."""


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, details: Any = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.details = status, code, message, details
        self.headers = headers or {}


def _key_of(request: HttpRequest) -> ApiKey:
    """The API key django-ninja's auth put on the request (every route requires one)."""
    key = getattr(request, "auth", None)
    assert isinstance(key, ApiKey)
    return key


class BearerKey(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> ApiKey | None:
        key = ApiKey.authenticate(token)
        if key is not None:
            key.touch()
            rate_limit(key)
        return key


#: The rate limit's clock (a module attribute, so a test can hold it at a minute's start).
clock = time.time


def rate_limit(key: ApiKey) -> None:
    """Fixed one-minute window per key in Redis; 429 with Retry-After when exceeded."""
    if not key.rate_limit_per_minute:
        return
    now = clock()
    used = counters.hit("rl", key.prefix, int(now // 60), expire_s=61)
    if used > key.rate_limit_per_minute:
        retry_after = str(max(1, int(60 - now % 60)))
        raise ApiError(429, "rate_limited",
                       f"more than {key.rate_limit_per_minute} requests this minute",
                       {"limitPerMinute": key.rate_limit_per_minute},
                       headers={"Retry-After": retry_after})


class DedupAPI(NinjaAPI):
    """Adds the article request schemas, which the POST body names with oneOf."""

    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> Any:
        schema = super().get_openapi_schema(*args, **kwargs)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in (ArticleIn, ArticleBatchIn):
            body = model.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(body.pop("$defs", {}))
            components[model.__name__] = body
        return schema

    def _get_urls(self) -> list[Any]:
        """Every answer under /api/ is an error object: a wrong method (405) and an
        unknown path (404) too, not the framework's plain text or HTML pages."""
        patterns = super()._get_urls()
        for pattern in patterns:
            if isinstance(pattern, URLPattern):
                pattern.callback = _json_not_allowed(pattern.callback)
        patterns.append(re_path(r"^", _unknown_path))
        return patterns


def _json_not_allowed(view: Any) -> Any:
    @functools.wraps(view)  # keeps csrf_exempt
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        if isinstance(response, HttpResponseNotAllowed):
            allowed = sorted(m.strip() for m in response["Allow"].split(","))
            response = error_response(request, 405, "method_not_allowed",
                                      f"{request.method} is not allowed here",
                                      {"allowed": allowed})
            response["Allow"] = ", ".join(allowed)
        return response

    return wrapped


@csrf_exempt
def _unknown_path(request: HttpRequest) -> HttpResponse:
    return error_response(request, 404, "not_found", f"no API call at {request.path}")


api = DedupAPI(
    title="dedupsite API",
    version="1",
    description="Near-duplicate detection for news: a docId per article.",
    auth=BearerKey(),
    urls_namespace="api",
)

ERRORS = {400: ErrorOut, 401: ErrorOut, 404: ErrorOut, 409: ErrorOut, 413: ErrorOut,
          422: ErrorOut, 429: ErrorOut, 503: ErrorOut}


def error_response(request: HttpRequest, status: int, code: str, message: str,
                   details: Any = None) -> HttpResponse:
    return api.create_response(
        request, {"error": {"code": code, "message": message, "details": details}}, status=status
    )


@api.exception_handler(ApiError)
def _api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
    response = error_response(request, exc.status, exc.code, exc.message, exc.details)
    for name, value in exc.headers.items():
        response[name] = value
    return response


@api.exception_handler(AuthenticationError)
def _auth_error(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return error_response(request, 401, "unauthorized",
                          "a valid API key is required: Authorization: Bearer <key>")


@api.exception_handler(ValidationError)
def _validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    return error_response(request, 422, "invalid", "some fields are invalid",
                          field_errors(exc.errors))


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    code = {400: "malformed", 404: "not_found", 405: "method_not_allowed"}.get(
        exc.status_code, "error")
    return error_response(request, exc.status_code, code, str(exc))


@api.exception_handler(SuspiciousOperation)
def _suspicious(request: HttpRequest, exc: SuspiciousOperation) -> HttpResponse:
    """More than DATA_UPLOAD_MAX_NUMBER_FIELDS parameters, a bad multipart body...:
    the API's JSON error, not Django's HTML page."""
    return error_response(request, 400, "malformed", "the request is malformed (too many "
                          "parameters or an unreadable body)")


@api.exception_handler(DatabaseError)
def _database_down(request: HttpRequest, exc: DatabaseError) -> HttpResponse:
    return error_response(request, 503, "unavailable", "the database is unavailable; retry")


@api.exception_handler(redis.RedisError)
def _redis_down(request: HttpRequest, exc: redis.RedisError) -> HttpResponse:
    return error_response(request, 503, "unavailable", "the queue is unavailable; retry")


@dataclass
class _Parsed:
    """A POST's articles: the valid ones, each invalid one's error, the request's shape."""

    valid: list[tuple[int, ArticleIn]]
    invalid: list[InvalidResult]
    batch: bool


#: A body declared larger than the limit is still read (and dropped) up to this many
#: bytes before the 413 is sent: a client that is still sending gets the 413 instead of
#: a connection reset. Larger ones are answered at once (their client may see the reset).
DRAIN_MAX_BYTES = 64 * 1024 * 1024


def drain(request: HttpRequest, declared: int) -> None:
    """Read and drop a refused body (up to DRAIN_MAX_BYTES), so that a client still
    sending reads the answer instead of a broken pipe."""
    if declared > DRAIN_MAX_BYTES:
        return
    stream = request.META.get("wsgi.input")
    remaining = declared
    while stream is not None and remaining > 0:
        chunk = stream.read(min(remaining, 256 * 1024))
        if not chunk:
            return
        remaining -= len(chunk)


def _read_json(request: HttpRequest) -> Any:
    limit = settings.API_MAX_BODY_BYTES
    declared = request.META.get("CONTENT_LENGTH") or "0"
    if not declared.isdigit():
        raise ApiError(413, "too_large", f"the body exceeds {limit} bytes")
    if int(declared) > limit:
        drain(request, int(declared))
        raise ApiError(413, "too_large", f"the body exceeds {limit} bytes")
    try:
        body = request.body
    except RequestDataTooBig as exc:
        raise ApiError(413, "too_large", f"the body exceeds {limit} bytes") from exc
    if len(body) > limit:
        raise ApiError(413, "too_large", f"the body exceeds {limit} bytes")
    if request.content_type != "application/json":
        raise ApiError(400, "malformed", "Content-Type must be application/json")
    try:
        payload = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ApiError(400, "malformed", "the body is not valid UTF-8") from exc
    except (ValueError, RecursionError) as exc:
        raise ApiError(400, "malformed", f"the body is not valid JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise ApiError(400, "malformed", "the body must be a JSON object")
    return payload


def _validate_item(index: int, raw: Any) -> ArticleIn | InvalidResult:
    try:
        return ArticleIn.model_validate(raw)
    except pydantic.ValidationError as exc:
        nid = raw.get("nid") if isinstance(raw, dict) else None
        return InvalidResult(
            index=index, nid=nid if isinstance(nid, str) else None, status="invalid",
            error=ErrorDetail(code="invalid", message="some fields are invalid",
                              details=field_errors([dict(e) for e in exc.errors()])))


def _parse_articles(request: HttpRequest, atomic: bool) -> _Parsed:
    """One article, or a batch validated item by item. Refused whole: a malformed body,
    too many articles, and with ``atomic`` any invalid article."""
    payload = _read_json(request)
    if "articles" not in payload:
        item = _validate_item(0, payload)
        if isinstance(item, InvalidResult):
            raise ApiError(422, "invalid", "some fields are invalid", item.error.details)
        return _Parsed([(0, item)], [], batch=False)
    raw = payload["articles"]
    limit = settings.API_MAX_BATCH
    if not isinstance(raw, list) or not 1 <= len(raw) <= limit:
        raise ApiError(422, "invalid", "articles must be a list of 1 to "
                       f"{limit} articles", {"articles": [f"1 to {limit} articles"]})
    parsed = _Parsed([], [], batch=True)
    for index, item in enumerate(raw):
        checked = _validate_item(index, item)
        if isinstance(checked, InvalidResult):
            parsed.invalid.append(checked)
        else:
            parsed.valid.append((index, checked))
    if parsed.invalid and (atomic or not parsed.valid):
        # nothing is stored: every item's errors, by its place in the batch
        raise ApiError(422, "invalid", "some articles are invalid; none was stored", {
            f"articles.{bad.index}.{field}": messages
            for bad in parsed.invalid for field, messages in (bad.error.details or {}).items()
        })
    return parsed


ARTICLE_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"oneOf": [
            {"$ref": "#/components/schemas/ArticleIn"},
            {"$ref": "#/components/schemas/ArticleBatchIn"},
        ]}}},
    }
}


#: times a batch is stored again after a lock conflict (a deadlock with a worker that
#: processes one of its articles) before the 503
INTAKE_LOCK_RETRIES = 1
NOT_OWNER = ("this nid was first posted with another API key, which this key may not "
             "change (an admin can allow it per key)")

@api.post(
    "/v1/articles",
    response={200: BatchResult | ArticleResult, 202: BatchResult | ArticleResult, **ERRORS},
    openapi_extra=ARTICLE_BODY,
    summary="Post one article or a batch; get docIds",
)
def post_articles(request: HttpRequest, wait: int = 0, atomic: bool = False
                  ) -> Status[Any]:
    if not 0 <= wait <= 30:
        raise ApiError(422, "invalid", "wait must be between 0 and 30 seconds",
                       {"wait": ["must be between 0 and 30"]})
    parsed = _parse_articles(request, atomic)
    items = [item for _index, item in parsed.valid]
    # A caller that waits for a few articles gets them processed in this request:
    # stored and committed first, then assigned under the same bucket locks a worker
    # takes. If that fails they are enqueued instead (and the worker watchdog
    # re-enqueues anything a crashed web process left queued).
    inline = wait > 0 and len(items) <= settings.API_INLINE_MAX
    key = _key_of(request)
    for attempt in range(1 + INTAKE_LOCK_RETRIES):
        accepted = Accepted()
        try:
            # ?atomic=true: all or nothing, conflicts included (rolled back together)
            with transaction.atomic() if atomic else contextlib.nullcontext():
                stored = accept_articles([a.to_input() for a in items], enqueue=not inline,
                                         accepted=accepted, key=key)
                if atomic and accepted.refused:
                    raise _AtomicConflict
            break
        except _AtomicConflict:
            raise ApiError(409, "not_owner", f"{NOT_OWNER} Nothing was stored (atomic).",
                           {nid: [NOT_OWNER] for nid in sorted(set(accepted.refused))}
                           ) from None
        except DatabaseError as exc:  # answered 503 by _database_down
            # A deadlock with a worker processing one of these articles: the server
            # rolled this transaction back, so running it again is safe (once).
            again = lock_conflict(exc) and attempt < INTAKE_LOCK_RETRIES
            log.warning("storing %d article(s)%s: %s: %s; %s", len(items),
                        " (atomic)" if atomic else "", type(exc).__name__, exc,
                        "storing them again" if again else "answered 503")
            if again:
                continue
            metrics.inc("dedupsite_article_failures_total", len(items), stage="intake")
            raise
    refused = set(accepted.refused)
    if refused and not parsed.batch:
        raise ApiError(409, "not_owner", NOT_OWNER)
    conflicts = [InvalidResult(index=index, nid=item.nid, status="conflict",
                               error=ErrorDetail(code="not_owner", message=NOT_OWNER))
                 for index, item in parsed.valid if item.nid in refused]
    parsed.valid = [(index, item) for index, item in parsed.valid if item.nid not in refused]
    stored = [a for a in stored if a.nid not in refused]
    parsed.invalid.extend(conflicts)
    queued = [a.nid for a in stored if a.status == ArticleStatus.QUEUED]
    if inline and queued:
        try:
            fresh = [a for a in stored if a.status == ArticleStatus.QUEUED and a.pk
                     and a.doc_pk is None]
            targets = fresh if len(fresh) == len(queued) else queued
            done = {a.nid: a for a in assign(targets, count_attempt=False)}
        except Exception:
            log.exception("inline processing failed; the articles go to the queue")
            enqueue_processing(queued)
            done = {}
        # Answer from the assigned objects; read back only what this request did not do.
        missing = [a.nid for a in stored if a.nid not in done]
        done.update((a.nid, a) for a in results.load_articles(missing))
        stored = [done[a.nid] for a in stored if a.nid in done]
    if wait and any(a.status == ArticleStatus.QUEUED for a in stored):
        stored = _wait_for([a.nid for a in stored], wait)
    status = 200 if all(a.status != ArticleStatus.QUEUED for a in stored) else 202
    pictures = (results.images_of(stored) if any(item.images for item in items) else {})
    out: list[Any] = [results.article_result(a, pictures.get(a.nid), key) for a in stored]
    if not parsed.batch:
        return Status(status, out[0])
    # every item in the request's order: the stored ones and the refused ones
    answers = dict(zip([index for index, _item in parsed.valid], out, strict=True))
    answers.update((bad.index, bad) for bad in parsed.invalid)
    return Status(status, {"results": [answers[index] for index in sorted(answers)]})


def _wait_for(nids: list[str], seconds: int) -> list[Article]:
    deadline = time.monotonic() + seconds
    delay = 0.005
    while True:
        rows = results.load_articles(nids)
        if all(a.status != ArticleStatus.QUEUED for a in rows) or time.monotonic() > deadline:
            return rows
        time.sleep(delay)
        delay = min(delay * 1.5, 0.1)


# `path:` so that a nid with a slash (the schema allows one) can be read and patched.
@api.get("/v1/articles/{path:nid}", response={200: ArticleResult, **ERRORS})
def get_article(request: HttpRequest, nid: str) -> Any:
    key = _key_of(request)
    rows = results.load_articles([nid])
    if not rows or not key.reads(rows[0].api_key_id):  # another key's: as if not there
        raise ApiError(404, "not_found", f"no article with nid {nid!r}")
    return results.article_result(rows[0], results.images_of(rows).get(nid), key)


@api.patch("/v1/articles/{path:nid}", response={200: ArticleResult, **ERRORS},
           summary="Update hotness; re-elects the representative")
def patch_article(request: HttpRequest, nid: str, payload: HotnessIn) -> Any:
    key = _key_of(request)
    try:
        article = update_hotness(nid, payload.hotness, actor_label=f"api:{key.name}", key=key)
    except NotOwner as exc:
        raise ApiError(409, "not_owner", NOT_OWNER) from exc
    if article is None:
        raise ApiError(404, "not_found", f"no article with nid {nid!r}")
    return results.article_result(article, reader=key)


@api.post("/v1/similar", response={200: SimilarOut, **ERRORS},
          summary="Dry run: the nearest docIds of an article; stores nothing")
def similar(request: HttpRequest, payload: SimilarIn) -> Any:
    if not has_text(payload.content):
        raise ApiError(422, "invalid", "content is empty after normalization",
                       {"content": ["is empty after removing markup and white space"]})
    return find_similar(payload.title, payload.content, payload.url, reader=_key_of(request))


@api.get("/v1/images/similar", response={200: PicturesOut, **ERRORS},
         summary="The docIds showing a picture read before, by its URL")
def similar_pictures(request: HttpRequest, url: str = "") -> Any:
    try:
        ArticleIn._images([url])
    except ValueError as exc:
        raise ApiError(422, "invalid", f"url {exc}", {"url": [str(exc)]}) from None
    hashes = lookup.read_picture_hashes(url)
    if not hashes:
        raise ApiError(404, "not_found", "no picture was read at this URL; POST the "
                       "picture's bytes to this address instead")
    return lookup.pictures_like(hashes, reader=_key_of(request))


#: the largest picture POST /v1/images/similar decodes: a 12-megapixel photo (4000 x 3000);
#: a request's picture costs CPU and memory in the web server (pictures the workers
#: fetch may have up to fingerprints.rule.picture.MAX_PIXELS)
SIMILAR_MAX_PIXELS = 12_000_000


@api.post("/v1/images/similar", response={200: PicturesOut, **ERRORS},
          summary="The docIds showing a picture, by its bytes (the request body)")
def similar_pictures_upload(request: HttpRequest) -> Any:
    limit = settings.IMAGE_MAX_BYTES
    try:
        data = request.body
    except RequestDataTooBig as exc:  # over DATA_UPLOAD_MAX_MEMORY_SIZE, before reading
        raise ApiError(413, "too_large", f"a picture is at most {limit} bytes") from exc
    if len(data) > limit:
        raise ApiError(413, "too_large", f"a picture is at most {limit} bytes")
    try:
        hashes = picture_hashes(decode(data, max_pixels=SIMILAR_MAX_PIXELS)).all()
    except NotAPicture as exc:
        raise ApiError(422, "invalid", "the body is not a picture this service reads",
                       {"body": [exc.reason]}) from None
    return lookup.pictures_like(hashes, reader=_key_of(request))


@api.get("/v1/docs/{doc_id}", response={200: DocOut, **ERRORS})
def get_doc(request: HttpRequest, doc_id: str) -> Any:
    doc = Doc.objects.select_related("representative").filter(doc_id=doc_id).first()
    found = results.doc_result(doc, _key_of(request)) if doc is not None else None
    if found is None:  # none of its articles is this key's to read: as if not there
        raise ApiError(404, "not_found", f"no docId {doc_id!r}")
    return found


@api.get("/v1/changes", response={200: ChangesOut, **ERRORS})
def get_changes(request: HttpRequest, after: str = "0", limit: int = 100) -> Any:
    """The change log after the cursor ``after``, in commit order: every change of the
    docId of an article this key posted (all articles' with ``may_read_others``), and
    of the representative or status of their docIds. Resume with ``next``."""
    from articles.changes import log as changes

    if not (after.isascii() and after.isdigit() and len(after) <= 20):
        raise ApiError(400, "bad_cursor", "after must be a cursor this API returned")
    if not 1 <= limit <= changes.MAX_LIMIT:
        raise ApiError(400, "bad_limit", f"limit must be from 1 to {changes.MAX_LIMIT}")
    page, following = changes.page_after(int(after), limit, _key_of(request))
    return {"changes": [{
        "cursor": str(c.cursor), "kind": c.kind, "nid": c.nid, "docId": c.doc_id,
        "previousDocId": c.previous_doc_id, "representativeNid": c.representative_nid,
        "status": c.status, "reason": c.reason, "at": c.at} for c in page],
        "next": str(following)}


@api.get("/v1/health", auth=None, response={200: dict, 503: dict})
def health(request: HttpRequest) -> Status[dict[str, Any]]:
    """Each store up or down. The details (the database vendor, queue depth, failed
    jobs, the outbox's lag, and the reason a store is down, whose text can name hosts
    and file paths) only for a caller with an API key or staff login."""
    from articles.representatives import outbox
    from articles.representatives.stores import StoreUnavailable
    from dedupsite import redis_store

    detailed = _known_caller(request)

    def down(exc: Exception) -> dict[str, Any]:
        return {"ok": False, "error": str(exc)} if detailed else {"ok": False}

    report: dict[str, Any] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        report["database"] = {"ok": True, "vendor": connection.vendor}
    except DatabaseError as exc:
        report["database"] = down(exc)
    try:
        redis_store.client().ping()
        queue = redis_store.queue("ingest")
        report["redis"] = {"ok": True}
        report["queue"] = {"ok": True, "depth": queue.count,
                           "failedJobs": queue.failed_job_registry.count}
        pictures = redis_store.queue("images")  # a picture job out of retries shows here
        report["pictureQueue"] = {"ok": True, "depth": pictures.count,
                                  "failedJobs": pictures.failed_job_registry.count}
    except redis.RedisError as exc:
        report["redis"] = down(exc)
    if redis_store.index_is_separate():  # INDEX_REDIS_URL: the indexes' own Redis or cluster
        try:
            redis_store.index_client().ping()
            report["indexRedis"] = {"ok": True}
        except (redis.RedisError, RedisClusterException) as exc:
            report["indexRedis"] = down(exc)
    try:
        outbox.store().ping()
        report["hbase"] = {"ok": True, "backend": "hbase" if settings.HBASE_URL
                                     else "local"}
    except StoreUnavailable as exc:
        report["hbase"] = down(exc)
    try:
        report["outbox"] = {"ok": True, **outbox.outbox_lag()}
    except DatabaseError:
        report["outbox"] = {"ok": False}
    ok = all(part.get("ok") for part in report.values())
    if not detailed:  # anonymous: up or down per store, no vendor, depths or counts
        report = {name: {"ok": bool(part.get("ok"))} for name, part in report.items()}
    return Status(200 if ok else 503, {"ok": ok, **report})


def _known_caller(request: HttpRequest) -> bool:
    """A valid API key in the Authorization header, or a signed-in staff member."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated and user.is_staff:
        return True
    header = request.headers.get("Authorization", "")
    try:
        return header.startswith("Bearer ") and ApiKey.authenticate(header[7:]) is not None
    except DatabaseError:
        return False
