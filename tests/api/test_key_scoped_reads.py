"""Which articles a key reads: its own — their results, their docIds' members and their
nids in lookups. Another key's article is a 404 (as if not there), named in a docId or a
lookup by the docId alone, which every key sees; a key the admin lets read others reads
everything."""

from __future__ import annotations

import json

import pytest

from articles.models import ApiKey

pytestmark = pytest.mark.django_db(transaction=True)

BODY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。")


def key(name: str, **fields) -> dict[str, str]:
    _key, plaintext = ApiKey.issue(name, **fields)
    return {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"}


def post(client, auth, nid, content=BODY):
    answer = client.post("/api/v1/articles", data=json.dumps({
        "nid": nid, "url": f"https://{nid}.example/a", "title": "绿道贯通", "content": content,
        "hotness": 10 if nid == "theirs" else 1}), content_type="application/json", **auth)
    assert answer.status_code in (200, 202), answer.content
    return answer


@pytest.fixture
def two_crawlers(client, redis_client, run_worker):
    mine, theirs = key("mine"), key("theirs")
    post(client, theirs, "theirs")
    post(client, mine, "mine", BODY + "（转载）")
    run_worker()
    return mine, theirs


def test_a_key_reads_its_own_articles_only(client, two_crawlers):
    mine, _theirs = two_crawlers
    assert client.get("/api/v1/articles/theirs", **mine).status_code == 404
    own = client.get("/api/v1/articles/mine", **mine).json()
    assert own["duplicate"] is True and own["docId"]
    assert own["duplicateOf"] is None  # the representative is the other key's


def test_a_doc_lists_the_readers_members_and_counts_them_all(client, two_crawlers):
    mine, theirs = two_crawlers
    doc_id = client.get("/api/v1/articles/mine", **mine).json()["docId"]
    doc = client.get(f"/api/v1/docs/{doc_id}", **mine).json()
    assert doc["size"] == 2 and [m["nid"] for m in doc["members"]] == ["mine"]
    assert doc["representative"] is None
    assert {m["nid"] for m in client.get(f"/api/v1/docs/{doc_id}", **theirs).json()[
        "members"]} == {"theirs"}
    outsider = key("outsider")
    assert client.get(f"/api/v1/docs/{doc_id}", **outsider).status_code == 404


def test_a_lookup_names_other_keys_articles_by_docid_only(client, two_crawlers):
    mine, _theirs = two_crawlers
    outsider = key("outsider")
    found = client.post("/api/v1/similar", data=json.dumps({"title": "绿道贯通",
                                                            "content": BODY}),
                        content_type="application/json", **outsider).json()
    assert found["matches"] and {m["nid"] for m in found["matches"]} == {""}
    mine_found = client.post("/api/v1/similar", data=json.dumps({"title": "绿道贯通",
                                                                 "content": BODY}),
                             content_type="application/json", **mine).json()
    assert mine_found["matches"]
    assert {m["nid"] for m in mine_found["matches"]} <= {"", "mine"}


def test_a_key_the_admin_lets_read_others_reads_everything(client, two_crawlers):
    reader = key("reader", may_read_others=True)
    assert client.get("/api/v1/articles/theirs", **reader).status_code == 200
    mine = client.get("/api/v1/articles/mine", **reader).json()
    assert mine["duplicateOf"] == "theirs"
    doc = client.get(f"/api/v1/docs/{mine['docId']}", **reader).json()
    assert {m["nid"] for m in doc["members"]} == {"mine", "theirs"}


def test_create_api_key_makes_a_key_that_reads_others_when_asked(db):
    from django.core.management import call_command

    call_command("create_api_key", "own-only")
    call_command("create_api_key", "reporting", "--may-read-others")
    assert dict(ApiKey.objects.values_list("name", "may_read_others")) == {
        "own-only": False, "reporting": True}
