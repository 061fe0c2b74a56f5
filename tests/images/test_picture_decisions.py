"""Pictures in the match decision, end to end: crawled-style articles through the real
API, a real worker and a local HTTP server serving their pictures.

A title-only photo post and a repost whose text was rewritten join the original by the
same picture (a resized, recompressed copy of it) and a similar title; an item of a
photo series with another picture stays apart from its sibling although the text
rules would join them; a stock picture (seen under many stories) joins nothing; an
editor's confirmed docId is never split by pictures; and the in-process batch engine,
given the same picture hashes, gives the same docIds as online. A photo post whose
picture has a caption strip drawn over it joins its story; two shots of one scene under
one caption stay apart.
"""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image, ImageDraw, ImageEnhance, ImageOps

from articles.images.hashes import stock_pictures
from articles.index.reindex import apply_settings
from articles.models import (
    Article,
    ArticleImage,
    Doc,
    DocStatus,
    EngineSettings,
    MatchModelVersion,
)
from fingerprints.batch.replay import run
from fingerprints.rule import EngineConfig
from fingerprints.rule.picture import decode, phash, picture_hashes
from tests.browser.conftest import editor  # noqa: F401  (a fixture)
from tests.images.test_pictures import photo
from tests.picture_host import serve

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.dialect]

BODY = ("滨江绿道于本周六全线贯通，全长四十二公里，串联起沿江十一个公园和三个湿地保护区。"
        "绿道沿线新设二十处驿站，提供饮水、休息和自行车维修服务，并在夜间开启节能照明。"
        "市民可通过城市服务平台查询各驿站位置和开放时间，周末还将开通接驳公交。")
REWRITTEN = ("本周六起，沿江四十二公里的滨江绿道正式连通，市民骑行可一路经过十一处公园与三片"
             "湿地。据介绍，新建的二十座驿站能补给饮用水，也能修车休息，夜里还有节能灯照明。")
ORIGINAL = photo(11)


def _copy(data: bytes) -> bytes:
    """A repost's copy of a picture: half the size, recompressed at low quality."""
    out = io.BytesIO()
    Image.open(io.BytesIO(data)).resize((320, 240)).save(out, "JPEG", quality=40)
    return out.getvalue()


def _captioned(data: bytes) -> bytes:
    """A repost's copy with a black caption bar over the bottom sixth."""
    image = Image.open(io.BytesIO(data)).convert("RGB")
    ImageDraw.Draw(image).rectangle((0, 400, 640, 480), fill=(0, 0, 0))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=80)
    return out.getvalue()


def _strip_over(data: bytes) -> bytes:
    """A repost's copy with a dark strip and a line of caption text drawn over the bottom
    12 % of the picture (not added below it)."""
    image = Image.open(io.BytesIO(data)).convert("RGB")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 422, 640, 480), fill=(20, 20, 20))
    draw.text((12, 430), "独家 图片来源：网络 Photo: agency", fill=(240, 240, 240), font_size=20)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=80)
    return out.getvalue()


def _shots() -> tuple[bytes, bytes]:
    """Two shots of one scene: the camera panned a third of a frame between them."""
    scene = Image.open(io.BytesIO(photo(15, size=(960, 480))))
    shots = []
    for left in (0, 320):
        out = io.BytesIO()
        scene.crop((left, 0, left + 640, 480)).save(out, "JPEG", quality=85)
        shots.append(out.getvalue())
    return shots[0], shots[1]


def _brighter(data: bytes) -> bytes:
    out = io.BytesIO()
    ImageEnhance.Brightness(Image.open(io.BytesIO(data))).enhance(1.4).save(out, "JPEG")
    return out.getvalue()


def _mirrored(data: bytes) -> bytes:
    out = io.BytesIO()
    ImageOps.mirror(Image.open(io.BytesIO(data))).save(out, "JPEG", quality=85)
    return out.getvalue()


def _hashes(path: str) -> tuple[int, ...]:
    """A served picture's hashes as the engine stores them: its own, its mirror's and
    its parts'."""
    return picture_hashes(decode(PICTURES[path])).all()


def _nearest(one: str, other: str) -> int:
    return min((a ^ b).bit_count() for a in _hashes(one) for b in _hashes(other))


def _logo() -> bytes:
    out = io.BytesIO()
    image = Image.new("RGB", (200, 80), (20, 60, 160))
    image.paste((250, 250, 250), (20, 20, 180, 60))
    image.save(out, "PNG")
    return out.getvalue()


PICTURES = {"/orig.jpg": ORIGINAL, "/copy.jpg": _copy(ORIGINAL), "/s3.jpg": photo(13),
            "/s4.jpg": photo(14), "/logo.png": _logo(), "/captioned.jpg": _captioned(ORIGINAL),
            "/brighter.jpg": _brighter(ORIGINAL), "/mirrored.jpg": _mirrored(ORIGINAL),
            "/strip.jpg": _strip_over(ORIGINAL), "/shot-a.jpg": _shots()[0],
            "/shot-b.jpg": _shots()[1]}


@pytest.fixture
def pictures(settings):
    settings.IMAGE_FETCH_ALLOW_PRIVATE = True  # the local server stands for the web
    with serve(PICTURES) as (base, _hits):
        yield base


def _post(client, auth, nid, title, content, images, base):
    body = {"nid": nid, "url": f"https://site-{nid}.example/{nid}", "title": title,
            "content": content, "images": [base + path for path in images]}
    answer = client.post("/api/v1/articles", data=json.dumps(body),
                         content_type="application/json", **auth)
    assert answer.status_code in (200, 202), answer.content  # 200: known, pictures added


def _doc(nid: str) -> str:
    return Article.objects.select_related("doc").get(nid=nid).doc.doc_id


def _ingest(client, auth, run_worker, base, items):
    """Each article, then the worker (its text, then its pictures): the order a steady
    stream gives when pictures are read before the next article arrives."""
    for nid, title, content, images in items:
        _post(client, auth, nid, title, content, images, base)
        run_worker()


STREAM = [
    ("o1", "滨江绿道本周六全线贯通 串联十一个公园", BODY, ["/orig.jpg"]),
    # a photo post: the title and the picture, no body
    ("o2", "组图：滨江绿道全线贯通串联十一个公园", "", ["/copy.jpg"]),
    # a repost with its text rewritten around the same photo
    ("o3", "周六起滨江绿道全线贯通，串联十一个公园", REWRITTEN, ["/orig.jpg"]),
    # two items of a photo series: one caption, one title, two pictures
    ("s3", "组图：山西采煤明星村的今昔", "采煤沉陷区治理后村民搬进新居", ["/s3.jpg"]),
    ("s4", "组图：山西采煤明星村的今昔", "采煤沉陷区治理后村民搬进新居", ["/s4.jpg"]),
]


def test_same_picture_joins_and_another_picture_keeps_apart(client, auth, redis_client,
                                                            run_worker, pictures, rule_model):
    """The rule's same-picture level and its another-picture veto (docs/engine.md's
    table), so under the rule's model."""
    _ingest(client, auth, run_worker, pictures, STREAM)
    story = _doc("o1")
    assert _doc("o2") == story and _doc("o3") == story
    # found by their titles' fingerprints, verified by the same-picture rule
    assert client.get("/api/v1/articles/o3", **auth).json()["docId"] == story
    # the photo series: the text rules alone would join them (same title, same caption)
    assert _doc("s3") != _doc("s4")
    assert Doc.objects.filter(doc_id=_doc("s4")).get().anchor.nid == "s4"


def test_under_the_default_vector_model_a_photo_post_joins_its_story_by_the_picture(
        client, auth, redis_client, run_worker, pictures):
    """The model on the comparison vector weighs a shared picture without a body as one
    post (titles 0.8-0.9 alike here); the rewrite under the same photo it leaves apart:
    its body shares under 5 % of the original's, which the vector reads as another
    write-up, and a shared picture beside two long bodies is worth 5 bits, not a join."""
    _ingest(client, auth, run_worker, pictures, STREAM[:3])
    assert _doc("o2") == _doc("o1")
    assert _doc("o3") != _doc("o1")


def test_under_the_default_vector_model_photo_series_items_stay_apart(
        client, auth, redis_client, run_worker, pictures):
    """One caption, a short body of 10-30 shingles, under two photos of a series: the
    identical texts weigh about 50 bits, another photo over a short body is a veto (-60
    bits), as the rule's another-picture rule."""
    _ingest(client, auth, run_worker, pictures, STREAM[3:])
    assert _doc("s3") != _doc("s4")


def test_without_their_pictures_the_same_articles_decide_on_text(client, auth, redis_client,
                                                                run_worker, pictures):
    """The control: the same stream with no pictures keeps the photo post and the
    rewrite apart and joins the series items (what the pictures change above)."""
    _ingest(client, auth, run_worker, pictures,
            [(nid, title, content, []) for nid, title, content, _i in STREAM])
    assert len({_doc("o1"), _doc("o2"), _doc("o3")}) == 3
    assert _doc("s3") == _doc("s4")


def test_a_stock_picture_joins_nothing(client, auth, redis_client, run_worker, pictures):
    config = EngineConfig()
    stories = [(f"n{n}", f"第{n}条互不相干的本地新闻标题{'甲乙丙丁戊'[n]}",
                f"这是第{n}篇完全不同的报道，内容涉及{'交通教育医疗环保文化'[2 * n:2 * n + 2]}"
                "方面的最新进展，记者在现场采访了多位市民和相关负责人。", ["/logo.png"])
               for n in range(config.boilerplate_min_docs)]
    _ingest(client, auth, run_worker, pictures, stories)
    logo = ArticleImage.objects.filter(article__nid="n0").get().phash
    assert stock_pictures([logo], [], config.boilerplate_min_docs) == {logo}
    # two title-only pages whose titles are alike enough for the same-picture rule
    _ingest(client, auth, run_worker, pictures, [
        ("x1", "本地新闻：市区道路改造工程启动", "", ["/logo.png"]),
        ("x2", "本地新闻：市区公园改造工程完工", "", ["/logo.png"]),
    ])
    assert _doc("x1") != _doc("x2")


def test_a_confirmed_docid_is_never_split_by_pictures(client, auth, redis_client,
                                                      run_worker, pictures,
                                                      editor):  # noqa: F811
    from articles.editor.actions import confirm_doc

    _post(client, auth, "s3", *STREAM[3][1:3], [], pictures)
    _post(client, auth, "s4", *STREAM[4][1:3], [], pictures)
    run_worker()
    assert _doc("s3") == _doc("s4")
    confirm_doc(Doc.objects.get(doc_id=_doc("s3")), editor)
    for nid, path in (("s3", "/s3.jpg"), ("s4", "/s4.jpg")):  # the pictures come later
        _post(client, auth, nid, *STREAM[3][1:3], [path], pictures)
    run_worker()
    assert ArticleImage.objects.filter(status="read").count() == 2
    assert _doc("s3") == _doc("s4")
    assert Doc.objects.get(doc_id=_doc("s3")).status == DocStatus.CONFIRMED


def test_the_batch_engine_given_the_hashes_gives_the_online_docids(client, auth,
                                                                  redis_client, run_worker,
                                                                  pictures):
    _ingest(client, auth, run_worker, pictures, STREAM)
    records = [{"nid": nid, "url": f"https://site-{nid}.example/{nid}", "title": title,
                "content": content,
                "pictures": [f"{h:016x}" for path in images for h in _hashes(path)]}
               for nid, title, content, images in STREAM]
    online = {nid: _doc(nid) for nid, *_rest in STREAM}
    assert run(records).mapping() == online
    # and the hashes are what decided it: without them the batch partition differs
    plain = [{k: v for k, v in r.items() if k != "pictures"} for r in records]
    assert run(plain).mapping() != online


def test_similar_pictures_by_url_or_by_upload(client, auth, redis_client, run_worker,
                                              pictures, rule_model):
    # under the rule's model, so that the rewrite (o3) is in the story too
    _ingest(client, auth, run_worker, pictures, STREAM)
    story = _doc("o1")
    by_url = client.get("/api/v1/images/similar", {"url": pictures + "/orig.jpg"}, **auth)
    assert by_url.status_code == 200, by_url.content
    found = by_url.json()
    assert found["docs"][0]["docId"] == story and found["stock"] is False
    assert sorted(found["docs"][0]["nids"]) == ["o1", "o2", "o3"]  # o2's copy is near
    assert _doc("s3") not in {d["docId"] for d in found["docs"]}
    upload = client.post("/api/v1/images/similar", data=PICTURES["/copy.jpg"],
                         content_type="image/jpeg", **auth)
    assert upload.status_code == 200 and upload.json()["docs"][0]["docId"] == story
    # bad input: a clear JSON error each, nothing stored
    unknown = client.get("/api/v1/images/similar", {"url": "https://x.example/never.jpg"},
                         **auth)
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    relative = client.get("/api/v1/images/similar", {"url": "/orig.jpg"}, **auth)
    assert relative.status_code == 422 and "url" in relative.json()["error"]["details"]
    text = client.post("/api/v1/images/similar", data=b"<html>no</html>",
                       content_type="image/jpeg", **auth)
    assert text.status_code == 422
    assert text.json()["error"]["details"] == {"body": ["undecodable"]}
    assert client.get("/api/v1/images/similar", {"url": pictures + "/orig.jpg"}
                      ).status_code == 401


def test_an_oversized_upload_is_refused_before_it_is_decoded(client, auth, settings):
    settings.IMAGE_MAX_BYTES = 1000
    big = client.post("/api/v1/images/similar", data=PICTURES["/orig.jpg"],
                      content_type="image/jpeg", **auth)
    assert big.status_code == 413 and big.json()["error"]["code"] == "too_large"


def _engine(**fields):
    """What saving the admin's engine settings page does (a new version, applied)."""
    saved = EngineSettings.load()
    for name, value in fields.items():
        setattr(saved, name, value)
    saved.version += 1
    saved.save()
    apply_settings(saved)


@pytest.mark.parametrize("margin, joined", [(-1, False), (0, True)])
def test_the_admins_picture_distance_decides_which_pictures_are_one(
        client, auth, redis_client, run_worker, pictures, margin, joined):
    distance = _nearest("/orig.jpg", "/captioned.jpg")
    assert distance > 0
    _engine(picture_bits=distance + margin)
    _ingest(client, auth, run_worker, pictures,
            [STREAM[0], ("o2", STREAM[1][1], "", ["/captioned.jpg"])])
    assert (_doc("o2") == _doc("o1")) is joined


def _model_with(**bounds):
    """What activating a match model version with these level bounds does."""
    from articles.tuning.matcher import activate
    from fingerprints.rule.match_model import starting_model

    data = starting_model().as_dict()
    data["bounds"].update(bounds)
    data["version"] = "test-bounds"
    version = MatchModelVersion.objects.create(version="test-bounds", base="labels-1",
                                               weights=data)
    apply_settings(activate(version))


@pytest.mark.parametrize("similarity, joined", [(0.9, False), (0.8, True)])
def test_the_models_title_similarity_bound_governs_the_same_picture_rule(
        client, auth, redis_client, run_worker, pictures, similarity, joined):
    # the rewrite's title is 0.83 alike to the original's
    _model_with(picture_title_similarity=similarity)
    _ingest(client, auth, run_worker, pictures, [STREAM[0], STREAM[2]])
    assert (_doc("o3") == _doc("o1")) is joined


def test_the_picture_index_is_rebuilt_with_the_features(client, auth, redis_client,
                                                        run_worker, pictures):
    """A rebuild that fingerprints every text again keeps each article's pictures (from
    their rows) and indexes them: a near copy, not an identical hash, still finds the
    story through the picture index (within its k: found for certain)."""
    from articles.index import reindex

    brighter = (phash(decode(PICTURES["/orig.jpg"]))  # what the lookup below compares
                ^ phash(decode(PICTURES["/brighter.jpg"]))).bit_count()
    assert 0 < brighter <= EngineConfig().picture_k
    # the original and its photo post (one story under either model)
    _ingest(client, auth, run_worker, pictures, STREAM[:2])
    reindex.build(recompute=True)
    assert Article.objects.get(nid="o2").features[0] == 7  # pictures, codes, names by kind
    near = client.post("/api/v1/images/similar", data=PICTURES["/brighter.jpg"],
                       content_type="image/jpeg", **auth).json()
    assert near["docs"][0]["docId"] == _doc("o1")
    # through the rebuilt index itself (MySQL finds identical hashes only)
    from articles.index.candidates import Indexes

    config = EngineConfig()
    index = Indexes.open(config, reindex.ensure_index()).pictures
    found = {article_id for article_id, _fp, distance
             in index.query(phash(decode(PICTURES["/brighter.jpg"])), config.picture_bits)
             if distance == brighter}
    assert Article.objects.get(nid="o1").pk in found


def test_pictures_read_before_the_text_is_decided_wait_for_it(client, auth, redis_client,
                                                              run_worker, pictures):
    """A picture known from another article is read at once, maybe before its article's
    text job ran: the re-decision waits behind the text job, then applies."""
    from articles.images.jobs import fetch_pictures
    from articles.ingest.redecide import on_pictures_read

    _ingest(client, auth, run_worker, pictures, STREAM[:1])
    _post(client, auth, "o2", STREAM[1][1], "", ["/orig.jpg"], pictures)  # queued, text too
    o2 = Article.objects.get(nid="o2")
    assert o2.status == "queued"
    assert fetch_pictures(o2.pk) == 1  # "known": o1 read the same URL
    assert on_pictures_read(o2.pk) == "later"
    run_worker()
    assert _doc("o2") == _doc("o1")


def test_the_seed_call_takes_pictures_too(client, api_key, redis_client, run_worker,
                                          pictures):
    seed = {"url": "https://seed.example/1", "title": STREAM[0][1], "content": BODY,
            "images": [pictures + "/orig.jpg"]}
    answer = client.get("/docId/getDocId", {"json": json.dumps(seed), "key": api_key})
    assert answer.status_code == 200 and answer.json()["filterStatus"] == "good"
    run_worker()
    assert ArticleImage.objects.get().status == "read"
    bad = dict(seed, url="https://seed.example/2", images=["ftp://x.example/a.jpg"])
    refused = client.get("/docId/getDocId", {"json": json.dumps(bad), "key": api_key})
    assert refused.status_code == 422 and "images" in refused.json()["filterReason"]
    assert ArticleImage.objects.count() == 1


def test_a_mirrored_copy_is_the_same_picture(client, auth, redis_client, run_worker,
                                             pictures):
    """A repost that flipped the photo left to right: its hash is far from the
    original's (global hashes do not survive a mirror) but near the original's mirror
    image's hash, which the engine stores too."""
    own = (phash(decode(PICTURES["/orig.jpg"]))
           ^ phash(decode(PICTURES["/mirrored.jpg"]))).bit_count()
    assert own > EngineConfig().picture_bits
    _ingest(client, auth, run_worker, pictures,
            [STREAM[0], ("o2", STREAM[1][1], "", ["/mirrored.jpg"])])
    assert _doc("o2") == _doc("o1")
    found = client.post("/api/v1/images/similar", data=PICTURES["/mirrored.jpg"],
                        content_type="image/jpeg", **auth).json()
    assert found["docs"][0]["docId"] == _doc("o1")
    assert sorted(found["docs"][0]["nids"]) == ["o1", "o2"]
    # and the cluster page marks it shared
    from articles.images.shared import pictures_of, shared_positions

    ids = {nid: Article.objects.get(nid=nid).pk for nid in ("o1", "o2")}
    shared = shared_positions(pictures_of(ids.values()), EngineConfig().picture_bits)
    assert shared[ids["o1"]] == {0: {ids["o2"]}} and shared[ids["o2"]] == {0: {ids["o1"]}}


def test_a_photo_post_with_a_caption_strip_over_its_picture_joins_the_story(
        client, auth, redis_client, run_worker, pictures):
    """A title-only photo post whose picture carries a caption strip drawn over its
    bottom: the strip moves the whole picture's hash out of reach, the hash of the
    picture's top 85 % (kept beside it) is still the original's."""
    own = (phash(decode(PICTURES["/orig.jpg"]))
           ^ phash(decode(PICTURES["/strip.jpg"]))).bit_count()
    assert own > EngineConfig().picture_bits
    _ingest(client, auth, run_worker, pictures,
            [STREAM[0], ("o2", STREAM[1][1], "", ["/strip.jpg"])])
    assert _doc("o2") == _doc("o1")
    assert ArticleImage.objects.get(article__nid="o2").top_phash is not None
    # and the original, posted to the similar-pictures call, lists the photo post's doc
    found = client.post("/api/v1/images/similar", data=PICTURES["/orig.jpg"],
                        content_type="image/jpeg", **auth).json()
    assert sorted(found["docs"][0]["nids"]) == ["o1", "o2"]


def test_two_shots_of_one_scene_under_one_caption_stay_apart(client, auth, redis_client,
                                                             run_worker, pictures, rule_model):
    """The text rules alone would join them (one title, one caption); their pictures
    overlap but are two frames, and no hash of one is near a hash of the other: the
    rule's another-picture veto (the default vector model joins them: the xfail above)."""
    assert _nearest("/shot-a.jpg", "/shot-b.jpg") > EngineConfig().picture_bits
    caption = STREAM[3][1:3]
    _ingest(client, auth, run_worker, pictures,
            [("p1", *caption, ["/shot-a.jpg"]), ("p2", *caption, ["/shot-b.jpg"])])
    assert _doc("p1") != _doc("p2")
