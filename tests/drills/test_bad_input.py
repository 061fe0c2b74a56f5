"""Drill: a corpus of bad and hostile input through the real API, then a real worker.

Every input must get a 4xx error object (JSON {"error": {"code", "message",
"details"}}; the seed call answers in its own format) or a correct result —
never a 5xx — and a refused input must leave the database exactly as it was
(row counts and a checksum of every table the API writes). Accepted hostile
input is processed by a real RQ worker and must come back verbatim, with a
docId, and be escaped on the editor's pages.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from articles.models import Article, AuditEntry, Doc, EditorLink, RepresentativeOutbox
from support import corpus
from support.drill_records import write_record

pytestmark = [pytest.mark.drill, pytest.mark.django_db(transaction=True)]

TABLES = (Article, Doc, RepresentativeOutbox, AuditEntry, EditorLink)
SCRIPT = '<script>alert("x")</script><img src=x onerror=alert(1)>'
SQL = "'; DROP TABLE articles_article; -- \" OR 1=1 --"


def _one_invalid_at(index: int, field_name: str) -> Callable[[Any], str | None]:
    """A check of a batch answer: item ``index`` refused for ``field_name``, the others
    answered as stored articles, in the request's order."""
    def check(body: Any) -> str | None:
        results = body.get("results", [])
        bad = [r for r in results if r.get("status") == "invalid"]
        if [r.get("index") for r in bad] != [index]:
            return f"expected item {index} alone refused: {results!r:.300}"
        if field_name not in (bad[0].get("error", {}).get("details") or {}):
            return f"the refusal does not name {field_name}: {bad[0]!r:.300}"
        if results.index(bad[0]) != index:
            return "the results are not in the request's order"
        return None
    return check


def good(nid: str, **fields: Any) -> dict[str, Any]:
    """A valid article (a distinct story per nid) with some fields replaced."""
    n = int(hashlib.sha256(nid.encode("utf-8", "surrogatepass")).hexdigest()[:6], 16)
    return {**corpus.article(nid, n), **fields}


def without(key: str) -> dict[str, Any]:
    body = good("missing")
    body.pop(key)
    return body


def nested(depth: int) -> str:
    """JSON text of objects nested `depth` deep (built as text: json.dumps would recurse)."""
    return '{"a": ' * depth + '"x"' + "}" * depth


@dataclass
class Case:
    name: str
    body: Any = None  # bytes are sent as they are, anything else as JSON
    method: str = "post"
    path: str = "/api/v1/articles"
    content_type: str = "application/json"
    auth: bool = True
    headers: dict[str, str] = field(default_factory=dict)
    expect: tuple[int, ...] = ()  # the statuses that are right; () = any 2xx or 4xx
    accepted: list[dict[str, Any]] = field(default_factory=list)  # articles that must be stored
    check: Callable[[Any], str | None] | None = None  # extra check of an accepted response

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if self.body is None:
            return b""
        try:
            return json.dumps(self.body, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: sent as \\uXXXX escapes, valid UTF-8
            return json.dumps(self.body).encode("ascii")


def cases() -> list[Case]:
    many = [good(f"batch-{i}", content=corpus.story(10_000 + i, words=40)) for i in range(501)]
    ten_mb = json.dumps(good("huge", content="长" * (10 * 1024 * 1024 // 3))).encode()
    over_limit = json.dumps(good("over", content="a" * (8 * 1024 * 1024 + 10))).encode()
    zero_width = "\u200b\u200c\u200d\u2060\ufeff" * 20
    hostile = {
        "nid": "h<script>1", "url": "https://x.example/\"><script>alert(1)</script>",
        "title": SCRIPT, "content": SCRIPT + corpus.story(777) + SCRIPT,
        "category": "<b>cat</b>", "media": "<iframe src=//evil>",
    }
    sql = {"nid": "1' OR '1'='1", "url": f"https://x.example/?q={quote(SQL)}", "title": SQL,
           "content": SQL + corpus.story(778), "category": SQL[:100], "media": SQL}
    rtl = {"nid": "rtl-evil", "url": "https://x.example/rtl/a",
           "title": "\u202e标题\u200f\u200b", "content": "\u202e" + corpus.story(779) + "\u200b",
           "category": "\u200f"}
    astral = {"nid": "😀" * 64, "url": "https://例子.测试/路径/😀", "title": "𠀋" * 1000,
              "content": "𠀋𡈽𡌛😀" + corpus.story(780), "media": "🐉"}
    dup_a, dup_b = good("dup", content=corpus.story(781)), good("dup", content=corpus.story(782))
    return [
        # --- malformed bodies: 400 -----------------------------------------------------------
        Case("empty body", b"", expect=(400,)),
        Case("truncated JSON object", b'{"nid": "t1", "url": "https://a.example/', expect=(400,)),
        Case("truncated batch", b'{"articles": [{"nid": "t2", "url": "https://a', expect=(400,)),
        Case("not JSON at all", b"hello crawler", expect=(400,)),
        Case("JSON array at the top", [good("arr")], expect=(400,)),
        Case("JSON string at the top", "an article", expect=(400,)),
        Case("JSON null", b"null", expect=(400,)),
        Case("JSON number", b"42", expect=(400,)),
        Case("invalid UTF-8 bytes", b'{"nid": "\xff\xfe", "url": "https://a.example/1", '
             b'"content": "\xc3\x28"}', expect=(400,)),
        Case("UTF-16 body", json.dumps(good("utf16")).encode("utf-16"), expect=(400,)),
        Case("UTF-8 BOM before JSON", b"\xef\xbb\xbf" + json.dumps(good("bom")).encode(),
             expect=(400,)),
        Case("100,000 nested arrays", b"[" * 100_000 + b"]" * 100_000, expect=(400,)),
        Case("5,000 nested objects in a field", b'{"nid": "deep", "url": "https://a.example", '
             b'"content": "c", "title": ' + nested(5000).encode() + b"}",
             expect=(400,)),
        Case("integer with 5,000 digits", b'{"nid": "d", "url": "https://a.example", '
             b'"content": "c", "imageCount": ' + b"9" * 5000 + b"}", expect=(400,)),
        Case("wrong content type text/plain", good("ct1"), content_type="text/plain",
             expect=(400,)),
        Case("form-urlencoded body", b"nid=ct2&url=https://a.example&content=text",
             content_type="application/x-www-form-urlencoded", expect=(400,)),
        Case("multipart body", b"--b\r\nContent-Disposition: form-data; name=nid\r\n\r\nx\r\n"
             b"--b--\r\n", content_type="multipart/form-data; boundary=b", expect=(400,)),
        Case("no content type", good("ct3"), content_type="", expect=(400,)),
        # --- size: 413 ----------------------------------------------------------------------------
        Case("10 MB body", ten_mb, expect=(413,)),
        Case("just over the 8 MiB limit", over_limit, expect=(413,)),
        Case("Content-Length claims 100 GB", good("cl1"),
             headers={"CONTENT_LENGTH": str(100 * 1024 ** 3)}, expect=(413,)),
        Case("Content-Length not a number", good("cl2"), headers={"CONTENT_LENGTH": "12abc"},
             expect=(400, 411, 413)),
        # --- invalid fields: 422 ------------------------------------------------------------------
        Case("nested object 500 deep as the title",
             {**good("d500"), "title": json.loads(nested(500))}, expect=(422,)),
        Case("missing nid", without("nid"), expect=(422,)),
        Case("missing url", without("url"), expect=(422,)),
        Case("missing content and title", {k: v for k, v in without("content").items()
                                           if k != "title"}, expect=(422,)),
        Case("empty nid", good(""), expect=(422,)),
        Case("whitespace-only nid", good("   "), expect=(422,)),
        Case("nid with leading space", good(" n1"), expect=(422,)),
        Case("nid of 65 characters", good("n" * 65), expect=(422,)),
        Case("nid of 100,000 characters", good("n" * 100_000), expect=(422,)),
        Case("nid is a number", {**good("num"), "nid": 123}, expect=(422,)),
        Case("nid is null", {**good("nul"), "nid": None}, expect=(422,)),
        Case("nid is a list", {**good("lst"), "nid": ["a"]}, expect=(422,)),
        Case("nid is an object", {**good("obj"), "nid": {"$gt": ""}}, expect=(422,)),
        Case("nid with NUL", good("a\x00b"), expect=(422,)),
        Case("url not a URL", good("u1", url="not a url"), expect=(422,)),
        Case("javascript: url", good("u2", url="javascript:alert(1)"), expect=(422,)),
        Case("ftp url", good("u3", url="ftp://a.example/x"), expect=(422,)),
        Case("url of 3,000 characters", good("u4", url="https://a.example/" + "a" * 3000),
             expect=(422,)),
        Case("CRLF header injection in url",
             good("u5", url="https://a.example/\r\nSet-Cookie: x=1"), expect=(422,)),
        Case("title of 100,000 characters", good("t100k", title="标" * 100_000), expect=(422,)),
        Case("title is a number", good("tnum", title=12), expect=(422,)),
        Case("title with NUL", good("tnul", title="a\x00b"), expect=(422,)),
        Case("empty content and title", good("c1", content="", title=""), expect=(422,)),
        Case("markup-only content, markup-only title",
             good("c1b", content="<p></p>", title="<b> </b>"), expect=(422,)),
        Case("whitespace-only content, no title",
             good("c2", title="", content="  \n\t\u3000 \r\n"), expect=(422,)),
        Case("markup-only content, no title",
             good("c3", title="", content="<p> </p><br/><div>&nbsp;</div>"),
             expect=(422,)),
        Case("script-only content, no title",
             good("c4", title="", content="<script>alert(1)</script>"),
             expect=(422,)),
        Case("zero-width-only content, no title", good("c5", title="", content=zero_width),
             expect=(422,)),
        Case("content of 1,000,001 characters", good("c6", content="a" * 1_000_001),
             expect=(422,)),
        Case("content with NUL", good("c7", content="text\x00more"), expect=(422,)),
        Case("content with BEL and ESC", good("c8", content="ring\x07\x1b[31m"), expect=(422,)),
        Case("content with C1 control NEL", good("c9", content="line\x85next"), expect=(422,)),
        Case("lone surrogate in content", good("s1", content="a\ud800b"), expect=(422,)),
        Case("lone surrogate in nid", good("s\udfff2"), expect=(422,)),
        Case("negative hotness", good("h1", hotness=-1), expect=(422,)),
        Case("hotness NaN", b'{"nid": "h2", "url": "https://a.example", "content": "c", '
             b'"hotness": NaN}', expect=(422,)),
        Case("hotness Infinity", b'{"nid": "h3", "url": "https://a.example", "content": "c", '
             b'"hotness": Infinity}', expect=(422,)),
        Case("hotness 1e999", b'{"nid": "h4", "url": "https://a.example", "content": "c", '
             b'"hotness": 1e999}', expect=(422,)),
        Case("hotness is text", good("h5", hotness="hot"), expect=(422,)),
        Case("negative imageCount", good("i1", imageCount=-1), expect=(422,)),
        Case("fractional imageCount", good("i2", imageCount=1.5), expect=(422,)),
        Case("imageCount 10**400", b'{"nid": "i3", "url": "https://a.example", '
             b'"content": "c", "imageCount": 1' + b"0" * 400 + b"}", expect=(422,)),
        Case("publishedAt not a date", good("p1", publishedAt="yesterday"), expect=(422,)),
        Case("publishedAt 1e20", good("p2", publishedAt=1e20), expect=(422,)),
        Case("publishedAt before year 1 in UTC",
             good("p3", publishedAt="0001-01-01T00:00:00+14:00"), expect=(422,)),
        Case("publishedAt after year 9999 in UTC",
             good("p4", publishedAt="9999-12-31T23:59:59-14:00"), expect=(422,)),
        Case("category of 101 characters", good("g1", category="c" * 101), expect=(422,)),
        Case("media is a list", good("g2", media=["a"]), expect=(422,)),
        Case("empty batch", {"articles": []}, expect=(422,)),
        Case("batch of 501", {"articles": many}, expect=(422,)),
        Case("atomic batch with one bad member", {"articles": [good("b1"), good("b2", url="x")]},
             path="/api/v1/articles?atomic=true", expect=(422,)),
        Case("articles is a string", {"articles": "x"}, expect=(422,)),
        Case("articles is null", {"articles": None}, expect=(422,)),
        Case("articles holds scalars", {"articles": [1, "a", None]}, expect=(422,)),
        Case("wait=-1", good("w1"), path="/api/v1/articles?wait=-1", expect=(422,)),
        Case("wait=31", good("w2"), path="/api/v1/articles?wait=31", expect=(422,)),
        Case("wait=abc", good("w3"), path="/api/v1/articles?wait=abc", expect=(422,)),
        # --- authentication: 401 -----------------------------------------------------------------
        Case("no Authorization header", good("a1"), auth=False, expect=(401,)),
        Case("wrong key", good("a2"), auth=False,
             headers={"HTTP_AUTHORIZATION": "Bearer dd_00000000_wrong"}, expect=(401,)),
        Case("Basic auth", good("a3"), auth=False,
             headers={"HTTP_AUTHORIZATION": "Basic YWRtaW46YWRtaW4="}, expect=(401,)),
        Case("SQL in the key", good("a4"), auth=False,
             headers={"HTTP_AUTHORIZATION": "Bearer dd_' OR 1=1 --_x"}, expect=(401,)),
        Case("10,000-character key", good("a5"), auth=False,
             headers={"HTTP_AUTHORIZATION": "Bearer dd_" + "k" * 10_000}, expect=(401,)),
        # --- hostile but valid: accepted, stored verbatim, processed --------------------------
        Case("HTML and script in every field", hostile, accepted=[hostile]),
        Case("SQL-looking strings in every field", sql, accepted=[sql]),
        Case("RTL override and zero-width characters in the text", rtl, accepted=[rtl]),
        Case("RTL override in the nid", good("rtl\u202eevil"), expect=(422,)),
        Case("zero-width space in the nid", good("zw\u200bnid"), expect=(422,)),
        Case("bidi mark in the url", good("bu", url="https://x.example/\u202e/a"),
             expect=(422,)),
        Case("zero-width joiner in the media", good("bm", media="新华\u200d社"),
             expect=(422,)),
        Case("Hangul filler in the nid", good("hf\u3164nid"), expect=(422,)),
        Case("braille blank in the nid", good("bb\u2800nid"), expect=(422,)),
        Case("combining grapheme joiner in the nid", good("cg\u034fnid"), expect=(422,)),
        Case("variation selector in the media", good("vs", media="新华\ufe0f社"),
             expect=(422,)),
        Case("no-break space in the nid", good("nb\u00a0nid"), expect=(422,)),
        Case("mixed-script look-alike nid", good("p\u0430ypal-1"), expect=(422,)),
        Case("url with user information", good("ui", url="https://bank.example@evil.example/"),
             expect=(422,)),
        Case("url whose host mixes scripts", good("mh", url="https://b\u0430nk.com/"),
             expect=(422,)),
        Case("astral characters, 1,000-character title", astral, accepted=[astral]),
        Case("duplicate nids in one batch (the last wins)", {"articles": [dup_a, dup_b]},
             accepted=[dup_b]),
        Case("duplicate keys in one object (the last wins)",
             ('{"nid": "first", "nid": "dupkey", "url": "https://a.example/k", '
              f'"content": "{corpus.story(783)}"}}').encode(),
             accepted=[{"nid": "dupkey", "url": "https://a.example/k",
                        "content": corpus.story(783)}]),
        Case("unknown fields are ignored", {**good("extra"), "__proto__": {"x": 1},
                                            "constructor": "y", "status": "done"},
             accepted=[good("extra")]),
        Case("a case variant of a stored nid is another article (not a 503)", good("EXTRA"),
             accepted=[good("EXTRA")]),
        Case("an accent variant of a stored nid is another article", good("éxtra"),
             accepted=[good("éxtra")]),
        Case("imageCount as a string (the seed's habit)", good("imgstr", imageCount="4"),
             accepted=[good("imgstr")]),
        Case("naive publishedAt", good("naive", publishedAt="2024-01-01T08:00:00"),
             accepted=[good("naive")]),
        Case("nid with a slash", good("a/b"), accepted=[good("a/b")]),
        Case("nid with %, ? and #", good("50% off?#1"), accepted=[good("50% off?#1")]),
        Case("url with a broken IPv6 host", good("v6", url="http://[::1/x"),
             accepted=[good("v6", url="http://[::1/x")]),
        Case("content of 200,000 characters", good("long", content=corpus.story(784) * 160),
             accepted=[good("long", content=corpus.story(784) * 160)]),
        Case("batch of exactly 500", {"articles": many[:500]}, accepted=many[:500]),
        Case("the same nid again, same body (idempotent)", hostile, accepted=[hostile]),
        Case("title-only page (no content)", without("content"),
             accepted=[{k: v for k, v in without("content").items() if k != "content"}]),
        Case("title-only page (markup-only content)", good("to2", content="<div><br></div>"),
             accepted=[good("to2", content="<div><br></div>")]),
        Case("batch with one bad member: the others stored",
             {"articles": [good("bb1"), good("bb2", url="x"), good("bb3")]},
             accepted=[good("bb1"), good("bb3")], check=_one_invalid_at(1, "url")),
        Case("application/json with a charset", good("charset"),
             content_type="application/json; charset=utf-8", accepted=[good("charset")]),
        # --- the other calls ------------------------------------------------------------------
        Case("GET a 10,000-character nid", method="get",
             path="/api/v1/articles/" + "n" * 10_000, expect=(404,)),
        Case("GET nid %00", method="get", path="/api/v1/articles/%00", expect=(400, 404)),
        Case("GET nid with invalid UTF-8 %FF", method="get", path="/api/v1/articles/%FF",
             expect=(400, 404)),
        Case("GET a docId with SQL", method="get", path="/api/v1/docs/" + quote(SQL, safe=""),
             expect=(404,)),
        Case("GET an unknown API path", method="get", path="/api/v1/nothing", expect=(404,)),
        Case("PUT on the articles collection", good("put"), method="put", expect=(405,)),
        Case("DELETE an article", method="delete", path="/api/v1/articles/x", expect=(405,)),
        Case("PATCH negative hotness", {"hotness": -5}, method="patch",
             path="/api/v1/articles/extra", expect=(422,)),
        Case("PATCH hotness NaN", b'{"hotness": NaN}', method="patch",
             path="/api/v1/articles/extra", expect=(422,)),
        Case("PATCH truncated JSON", b'{"hotness": ', method="patch",
             path="/api/v1/articles/extra", expect=(400, 422)),
        Case("PATCH an unknown nid", {"hotness": 1}, method="patch",
             path="/api/v1/articles/nobody", expect=(404,)),
        Case("similar: empty content", {"content": ""}, path="/api/v1/similar", expect=(422,)),
        Case("similar: markup-only content", {"content": "<br>"}, path="/api/v1/similar",
             expect=(422,)),
        Case("similar: truncated JSON", b'{"content": "ab', path="/api/v1/similar",
             expect=(400, 422)),
        Case("similar: content with NUL", {"content": "a\x00"}, path="/api/v1/similar",
             expect=(422,)),
        Case("similar: broken IPv6 url", {"content": corpus.story(785), "url": "http://[::1"},
             path="/api/v1/similar"),
        Case("similar: url is a number", {"content": corpus.story(786), "url": 5},
             path="/api/v1/similar", expect=(422,)),
        Case("1,001 query parameters on the articles call", good("qp"),
             path="/api/v1/articles?" + "&".join(f"p{i}=1" for i in range(1001)),
             expect=(400,)),
        # The seed call answers in the seed's own format.
        Case("seed: PUT", method="put", path="/docId/getDocId", expect=(405,)),
        Case("seed: 1,001 form fields", "&".join(f"f{i}=1" for i in range(1001)).encode(),
             path="/docId/getDocId", content_type="application/x-www-form-urlencoded",
             expect=(400,)),
        Case("seed: truncated json", method="get",
             path="/docId/getDocId?json=" + quote('{"url": "http://a'), expect=(400,)),
        Case("seed: json is a list", method="get", path="/docId/getDocId?json=%5B%5D",
             expect=(400,)),
        Case("seed: 100,000-character title", method="get", path="/docId/getDocId?json="
             + quote(json.dumps({"url": "http://s.example/1", "content": "c",
                                 "title": "t" * 100_000})), expect=(422,)),
        Case("seed: no key", method="get", auth=False,
             path="/docId/getDocId?json=" + quote(json.dumps({"url": "http://s.example/2"})),
             expect=(401,)),
        Case("seed: invalid UTF-8 body", b"\xff\xfe{", path="/docId/getDocId",
             content_type="application/octet-stream", expect=(400,)),
        Case("seed: imageCount is text", method="get", path="/docId/getDocId?json=" + quote(
            json.dumps({"url": "http://s.example/3", "content": "c", "imageCount": "four"})),
            expect=(422,)),
        Case("seed: imageCount is a superscript digit", method="get",
             path="/docId/getDocId?json=" + quote(json.dumps(
                 {"url": "http://s.example/4", "content": "c", "imageCount": "²"})),
             expect=(422,)),
        Case("seed: imageCount of 5,000 digits", method="get",
             path="/docId/getDocId?json=" + quote(json.dumps(
                 {"url": "http://s.example/5", "content": "c", "imageCount": "9" * 5000})),
             expect=(422,)),
        Case("seed: a number of 5,000 digits", b'json={"url": "http://s.example/6", '
             b'"content": "c", "hotness": ' + b"9" * 5000 + b"}",
             path="/docId/getDocId", content_type="application/x-www-form-urlencoded",
             expect=(400, 422)),
        Case("seed: json nested 100,000 deep", b"json=" + quote(nested(100_000)).encode(),
             path="/docId/getDocId", content_type="application/x-www-form-urlencoded",
             expect=(400,)),
    ]


def table_state() -> tuple[dict[str, int], str]:
    """Row counts and a checksum of every table the API writes (not API keys: last use)."""
    counts: dict[str, int] = {}
    digest = hashlib.sha256()
    with connection.cursor() as cursor:
        for model in TABLES:
            table = model._meta.db_table
            cursor.execute(f"SELECT COUNT(*) FROM {table}")
            counts[table] = cursor.fetchone()[0]
            if connection.vendor == "mysql":
                cursor.execute(f"CHECKSUM TABLE {table}")
                digest.update(repr(cursor.fetchone()).encode())
            else:
                cursor.execute(f"SELECT * FROM {table} ORDER BY 1")
                for row in cursor.fetchall():
                    digest.update(repr([bytes(v) if isinstance(v, memoryview) else v
                                        for v in row]).encode("utf-8", "surrogatepass"))
    return counts, digest.hexdigest()


def is_error_object(response: Any) -> bool:
    try:
        error = json.loads(response.content)["error"]
    except (ValueError, KeyError, TypeError):
        return False
    return isinstance(error, dict) and {"code", "message", "details"} <= set(error)


def is_seed_answer(response: Any) -> bool:
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    return isinstance(body, dict) and {"filterReason", "docId", "filterStatus", "status"} <= set(
        body)


def send(client: Client, case: Case, key: str) -> Any:
    extra = dict(case.headers)
    if case.auth:
        extra.setdefault("HTTP_AUTHORIZATION", f"Bearer {key}")
    if case.method == "get":
        return client.get(case.path, **extra)
    return client.generic(case.method.upper(), case.path, case.payload(),
                          content_type=case.content_type, **extra)


def test_a_corpus_of_bad_input_gets_4xx_error_objects_and_changes_nothing(
        api_key, redis_client, run_worker, settings):
    client = Client(raise_request_exception=False)  # a crash must show as the 500 it would be
    corpus_cases = cases()
    names = [c.name for c in corpus_cases]
    assert len(set(names)) == len(names), "every input is distinct"
    outcomes: list[dict[str, Any]] = []
    started = time.monotonic()
    for case in corpus_cases:
        before = table_state()
        response = send(client, case, api_key)
        after = table_state()
        status = response.status_code
        problems = []
        if status >= 500:
            problems.append(f"{status}: {response.content[:300]!r}")
        elif status >= 400:
            seed = case.path.startswith("/docId/")
            if not (is_seed_answer(response) if seed else is_error_object(response)):
                problems.append(f"{status} without an error object: {response.content[:200]!r}")
            if after != before:
                problems.append(f"{status} but the database changed: {before[0]} -> {after[0]}")
        if case.expect and status not in case.expect:
            problems.append(f"answered {status}, expected {case.expect}")
        if case.accepted and status not in (200, 202):
            problems.append(f"a valid input answered {status}: {response.content[:300]!r}")
        elif case.check is not None:
            problem = case.check(response.json())
            if problem:
                problems.append(problem)
        outcomes.append({"input": case.name, "status": status, "problems": problems})
    sent_s = time.monotonic() - started

    # The accepted inputs through a real worker: stored verbatim, processed, given a docId.
    run_worker()
    by_name = {o["input"]: o for o in outcomes}
    verified = 0
    for case in corpus_cases:
        for item in case.accepted:
            article = Article.objects.select_related("doc").filter(nid=item["nid"]).first()
            problems = by_name[case.name]["problems"]
            if article is None:
                problems.append(f"accepted nid {item['nid']!r} is not stored")
                continue
            for attr, key in (("url", "url"), ("title", "title"), ("content", "content"),
                              ("category", "category"), ("media", "media")):
                if key in item and getattr(article, attr) != item[key]:
                    problems.append(f"{key} of {item['nid']!r} not stored verbatim")
            if article.status != "done" or article.doc is None:
                problems.append(f"{item['nid']!r} ended {article.status}: "
                                f"{article.failure_reason[:200]}")
            verified += 1
    # Every accepted nid can be read back through the API, whatever its characters.
    for case in corpus_cases:
        for item in case.accepted[:3]:
            response = client.get("/api/v1/articles/" + quote(item["nid"], safe=""),
                                  HTTP_AUTHORIZATION=f"Bearer {api_key}")
            if response.status_code != 200 or response.json().get("nid") != item["nid"]:
                by_name[case.name]["problems"].append(
                    f"GET of accepted nid {item['nid']!r} answered {response.status_code}")

    # Crawled text is untrusted: escaped on every editor page that shows it.
    editor = Client(raise_request_exception=False)
    editor.force_login(User.objects.create_user("drill-editor", password="x" * 20,
                                                is_staff=True))
    hostile_doc = Article.objects.select_related("doc").get(nid="h<script>1").doc
    pages = ["/clusters/", f"/clusters/{hostile_doc.doc_id}/", "/review/", "/stats/"]
    unescaped = [page for page in pages
                 if "<script>alert" in editor.get(page).content.decode("utf-8", "replace")]
    escape_problems = [f"unescaped script on {page}" for page in unescaped]

    statuses = Counter(o["status"] for o in outcomes)
    failures = [o for o in outcomes if o["problems"]]
    five_xx = sum(n for status, n in statuses.items() if status >= 500)
    refused = sum(n for status, n in statuses.items() if 400 <= status < 500)
    checks = {
        "no 5xx": five_xx == 0,
        "every refusal is an error object and changes nothing": not any(
            "error object" in p or "database changed" in p
            for o in outcomes for p in o["problems"]),
        "every input got its expected answer": not failures,
        "accepted input stored verbatim and processed": verified == sum(
            len(c.accepted) for c in corpus_cases),
        "hostile text escaped on editor pages": not escape_problems,
    }
    write_record(
        "bad-input",
        title="Bad-input corpus through the API and a real worker",
        fault=f"{len(corpus_cases)} distinct bad or hostile inputs (malformed, oversized, "
              "invalid fields, hostile text, bad keys, other calls)",
        system_did=f"{refused} refused with 4xx ({dict(sorted(statuses.items()))}), "
                   f"{statuses[200] + statuses[202]} accepted and processed; {five_xx} × 5xx",
        lost="nothing" if not failures else f"{len(failures)} inputs misanswered",
        recovery_s=None,
        checks=checks,
        figures={"distinct_inputs": len(corpus_cases), "statuses": dict(statuses),
                 "five_xx": five_xx, "accepted_articles_verified": verified,
                 "send_seconds": round(sent_s, 1), "editor_pages_checked": pages,
                 "failures": failures, "escape_problems": escape_problems},
    )
    assert not failures, json.dumps(failures, indent=1, ensure_ascii=False)
    assert not escape_problems
    assert len(corpus_cases) >= 60
