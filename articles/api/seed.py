"""The seed system's call (2018 paper): GET/POST /docId/getDocId?json={...}.

Answers synchronously `{"filterReason", "docId", "filterStatus", "status"}` so
that its existing clients move over unchanged. The seed request has no nid: the
canonical URL stands in for it (`url-<hash>`), so repeating a URL is idempotent.
A key is still required: `Authorization: Bearer <key>` or `&key=<key>`.
"""

from __future__ import annotations

import json
import re
from typing import Any

import redis
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.db import DatabaseError
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from pydantic import ValidationError

from articles.api.endpoints import ApiError, drain, rate_limit
from articles.api.schemas import ArticleIn
from articles.index.locks import LockTimeout
from articles.ingest.assign import process_articles, url_hash
from articles.ingest.intake import Accepted, accept_articles
from articles.ingest.results import load_articles
from articles.models import ApiKey
from dedupsite import metrics


def _answer(status: int, reason: str, doc_id: str = "", filter_status: str = "error",
            outcome: str = "fail") -> JsonResponse:
    return JsonResponse({"filterReason": reason, "docId": doc_id, "filterStatus": filter_status,
                         "status": outcome}, status=status, json_dumps_params={
                             "ensure_ascii": False})


def _key(request: HttpRequest) -> ApiKey | None:
    header = request.headers.get("Authorization", "")
    token = header[7:] if header.startswith("Bearer ") else request.GET.get("key", "")
    return ApiKey.authenticate(token) if token else None


def _raw_json(request: HttpRequest) -> str | None:
    """The `json` parameter: query string, form field, else (POST) the raw body.

    Raises UnicodeDecodeError or RequestDataTooBig for the caller to answer.
    """
    raw = request.GET.get("json") or request.POST.get("json")
    if raw is None and request.method == "POST" and request.body:
        raw = request.body.decode("utf-8", errors="strict")
    return raw


def _adapt_seed_fields(data: dict[str, Any]) -> None:
    """Bring the seed's request (in place) to the shape ``ArticleIn`` validates."""
    if "url" in data and "nid" not in data and isinstance(data["url"], str):
        data["nid"] = f"url-{url_hash(data['url']):016x}"
    image_count = data.get("imageCount")
    # the seed sends it as a string; only plain ASCII digits (not "²", not 5,000 of them)
    if isinstance(image_count, str) and re.fullmatch(r"[0-9]{1,9}", image_count):
        data["imageCount"] = int(image_count)
    if isinstance(data.get("category"), int):
        data["category"] = str(data["category"])


def _caller(request: HttpRequest) -> ApiKey | JsonResponse:
    """The caller's key, or the answer when it may not call now: no valid key (401),
    over the key's per-minute limit (429, as on the JSON API), the key store down (503)."""
    try:
        key = _key(request)
        if key is None:
            return _answer(401, "a valid API key is required (Bearer header or key=)")
        key.touch()
        rate_limit(key)
    except ApiError as exc:
        response = _answer(exc.status, exc.message)
        for name, value in exc.headers.items():
            response[name] = value
        return response
    except (redis.RedisError, DatabaseError):
        return _answer(503, "a store is unavailable; retry", outcome="fail")
    return key


@csrf_exempt
def get_doc_id(request: HttpRequest) -> JsonResponse:
    """The seed paper's call, answered in its own format for every outcome: a method
    other than GET and POST (405), too many parameters or an unreadable body (400), a
    body too large (413, after reading it, so that the client reads the answer)."""
    if request.method not in ("GET", "POST"):
        response = _answer(405, "use GET or POST")
        response["Allow"] = "GET, POST"
        return response
    try:
        return _get_doc_id(request)
    except SuspiciousOperation:  # e.g. more than DATA_UPLOAD_MAX_NUMBER_FIELDS parameters
        return _answer(400, "the request is malformed (too many parameters?)")


def _get_doc_id(request: HttpRequest) -> JsonResponse:
    key = _caller(request)
    if isinstance(key, JsonResponse):
        return key
    try:
        raw = _raw_json(request)
    except UnicodeDecodeError:
        return _answer(400, "the body is not valid UTF-8")
    except RequestDataTooBig:
        declared = request.META.get("CONTENT_LENGTH") or "0"
        drain(request, int(declared) if declared.isascii() and declared.isdigit() else 0)
        return _answer(413, "the body is too large")
    if not raw:
        return _answer(400, "missing json parameter")
    try:
        data: Any = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nested too deep
        return _answer(400, "json is not valid JSON")
    if not isinstance(data, dict):
        return _answer(400, "json must be an object")
    _adapt_seed_fields(data)
    try:
        item = ArticleIn.model_validate(data)
    except ValidationError as exc:
        fields = sorted({".".join(map(str, e["loc"])) for e in exc.errors()})
        return _answer(422, f"invalid fields: {', '.join(fields)}")
    try:
        return _process(item, key)
    except (redis.RedisError, DatabaseError, LockTimeout):
        metrics.inc("dedupsite_article_failures_total", stage="intake")
        return _answer(503, "a store is unavailable; retry", outcome="fail")


def _process(item: ArticleIn, key: ApiKey) -> JsonResponse:
    accepted = Accepted()
    accept_articles([item.to_input()], enqueue=False, accepted=accepted, key=key)
    if accepted.refused:
        return _answer(409, "this url was first posted with another API key, which this key "
                            "may not change")
    process_articles([item.nid])
    article = load_articles([item.nid])[0]
    if article.doc is None:
        return _answer(503, "not processed; retry", outcome="fail")
    if article.matched_by:
        return _answer(200, f"docId_filter duplicate by {article.matched_by}",
                       article.doc.doc_id, "duplicate", "success")
    return _answer(200, "docId_filter good news", article.doc.doc_id, "good", "success")
