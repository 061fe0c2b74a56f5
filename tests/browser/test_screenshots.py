"""Screenshots of every editor page, English and Chinese, into docs/screenshots/.

Not part of the normal run (skipped): regenerate them with

    DEDUPSITE_SCREENSHOTS=1 .venv/bin/pytest tests/browser/test_screenshots.py

The data is demo/sample.jsonl (stories written for the demo, with reposts), posted
through the API and processed by a real worker, plus two editor decisions.
"""

from __future__ import annotations

import io
import re
import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import expect

from articles.editor import actions
from articles.models import Article, Doc
from tests.browser.conftest import log_in
from tests.picture_host import serve

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "screenshots"


@pytest.fixture
def sample(client, auth, run_worker, editor):
    lines = (ROOT / "demo" / "sample.jsonl").read_text(encoding="utf-8").splitlines()
    for line in lines:
        response = client.post("/api/v1/articles", data=line, content_type="application/json",
                               **auth)
        assert response.status_code in (200, 202)
    run_worker()
    docs = list(Doc.objects.filter(size__gt=1).select_related("representative")
                .order_by("-size", "id"))
    assert len(docs) > 1, "the sample made too few clusters"
    chinese = [d for d in docs if any("\u4e00" <= ch <= "\u9fff" for ch in d.representative.title)]
    shown = (chinese or docs)[0]
    # Two decisions, so that statuses and the history have something to show.
    actions.confirm_doc(next(d for d in reversed(docs) if d != shown), editor,
                        "checked against the originals")
    actions.choose_representative(shown.representative, editor, "the most complete copy")
    return shown


def shoot(page, name: str, full_page: bool = False) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    badge = page.locator("nav #nav-review-count")
    if badge.count():  # loaded after the page
        expect(badge).to_have_text(re.compile(r"\d"))
    page.screenshot(path=str(OUT / name), full_page=full_page)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_screenshots(page, live_server, sample, language):
    if language == "zh":
        page.context.add_cookies([{"name": "django_language", "value": "zh-hans",
                                   "url": live_server.url}])
    page.goto("/accounts/login/")
    shoot(page, f"login-{language}.png")
    log_in(page, "editor")
    shoot(page, f"clusters-{language}.png")

    members = list(Article.objects.filter(doc=sample).exclude(pk=sample.representative_id)
                   .order_by("-hotness"))
    compare = members[-1] if members else None
    url = f"/clusters/{sample.doc_id}/"
    page.goto(url + (f"?compare={compare.nid}" if compare else ""))
    page.locator("#diff").scroll_into_view_if_needed()
    page.locator("[data-related]").wait_for()  # the matching clusters load after the page
    shoot(page, f"cluster-{language}.png", full_page=True)

    page.goto("/review/")
    shoot(page, f"review-{language}.png")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_admin_and_stats_screenshots(page, live_server, sample, editor, language):
    from articles.models import EngineSettings

    editor.is_staff = editor.is_superuser = True
    editor.save()
    if language == "zh":
        page.context.add_cookies([{"name": "django_language", "value": "zh-hans",
                                   "url": live_server.url}])
    split = Article.objects.filter(doc=sample).exclude(pk=sample.representative_id).first()
    if split is not None:
        actions.split_article(split, editor, "a different story")
    log_in(page, "editor", "/stats/")
    shoot(page, f"stats-{language}.png", full_page=True)
    page.goto(f"/admin/articles/enginesettings/{EngineSettings.load().pk}/change/")
    shoot(page, f"settings-{language}.png", full_page=True)
    page.fill("input[name=k]", "5")
    page.click("input[name=_preview]")
    page.wait_for_url("**/enginesettings/preview/")
    shoot(page, f"settings-preview-{language}.png", full_page=True)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_conflict_screenshot(page, live_server, sample, editor, language):
    """Two editors at once: the page an editor sees when another decided first."""
    from django.contrib.auth.models import User

    if language == "zh":
        page.context.add_cookies([{"name": "django_language", "value": "zh-hans",
                                   "url": live_server.url}])
    log_in(page, "editor", f"/clusters/{sample.doc_id}/")
    other = User.objects.create_user("wang", password="x" * 12)
    member = Article.objects.filter(doc=sample).exclude(pk=sample.representative_id).first()
    assert member is not None
    actions.split_article(member, other, "another event")  # decided in another browser
    page.locator("[data-action=confirm]").click()  # on the stale page
    page.locator(".message.warning").wait_for()
    shoot(page, f"conflict-{language}.png")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_review_claims_screenshot(page, live_server, sample, editor, language):
    """/review/ after "take the next item", with another editor holding one item."""
    from django.contrib.auth.models import User

    from articles.editor import review

    if language == "zh":
        page.context.add_cookies([{"name": "django_language", "value": "zh-hans",
                                   "url": live_server.url}])
    other = User.objects.create_user("wang", password="x" * 12)
    review.take_next(other, review.most_doubtful(review.review_queue(review.rules()), 25))
    log_in(page, "editor", "/review/")
    page.keyboard.press("t")
    page.locator(".message.success").wait_for()
    shoot(page, f"review-claims-{language}.png")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_undo_screenshot(page, live_server, sample, editor, language):
    """The message with Undo after a split, and the history's Undo buttons."""
    if language == "zh":
        page.context.add_cookies([{"name": "django_language", "value": "zh-hans",
                                   "url": live_server.url}])
    log_in(page, "editor", f"/clusters/{sample.doc_id}/")
    page.locator("tr.member-row:not(.rep) [data-action=split]").first.click()
    page.locator(".message.toast").wait_for()
    shoot(page, f"undo-toast-{language}.png")
    page.locator(".audit").scroll_into_view_if_needed()
    page.locator(".audit").screenshot(path=str(OUT / f"undo-history-{language}.png"))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_review_news_screenshot(page, live_server, sample, editor, language, client, auth,
                                run_worker, settings):
    """/review/ open while a new borderline match arrives: the banner, not a jumping list."""
    import json

    settings.REVIEW_POLL_SECONDS = 1
    if language == "zh":
        page.context.add_cookies([{"name": "django_language", "value": "zh-hans",
                                   "url": live_server.url}])
    log_in(page, "editor", "/review/")
    shown = sample.representative
    response = client.post("/api/v1/articles", content_type="application/json", **auth,
                           data=json.dumps({"nid": "late-copy", "url": "https://late.example/1",
                                            "title": shown.title,
                                            "content": shown.content + "（完）本报记者 李华"}))
    assert response.status_code in (200, 202)
    run_worker()
    page.locator(".news-banner").wait_for(timeout=15_000)
    shoot(page, f"review-news-{language}.png")


def _chinese(page, live_server, language: str) -> None:
    if language == "zh":
        page.context.add_cookies([{"name": "django_language", "value": "zh-hans",
                                   "url": live_server.url}])


@pytest.mark.parametrize("language", ["en", "zh"])
def test_bulk_screenshots(page, live_server, sample, editor, language):
    """A bulk confirm of every cluster on /clusters/: under way, then done with one cluster
    skipped because another editor split it between the selection and the job's turn."""

    from django.contrib.auth.models import User
    from django.db import connection, transaction

    from articles.editor import bulk
    from articles.models import BulkAction

    _chinese(page, live_server, language)
    log_in(page, "editor")
    page.check("input[name=scope][value=filter]")
    page.locator("#bulk-form button[value=confirm]").click()
    page.locator("#bulk-status progress").wait_for()
    job = BulkAction.objects.get(action="confirm", status="queued")
    targets = [pk for pk, _version in job.targets]
    assert len(targets) >= 4, "the sample made too few clusters"
    wang = User.objects.create_user("wang", password="x" * 12)
    member = Article.objects.filter(doc_id=targets[-1]).exclude(
        pk=Doc.objects.get(pk=targets[-1]).representative_id).first()
    actions.split_article(member, wang, "another event")  # in another browser, meanwhile

    def work() -> None:
        try:
            bulk.run(job.pk)
        finally:
            connection.close()

    with transaction.atomic():
        Doc.objects.select_for_update().get(pk=targets[2])  # the job waits there a moment
        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        page.locator("#bulk-status[data-running] progress[value='2']").wait_for(timeout=20_000)
        shoot(page, f"bulk-progress-{language}.png")
    worker.join(30)
    page.locator("#bulk-status [data-action=bulk-undo]").wait_for(timeout=20_000)
    page.locator("table.clusters .badge.status-confirmed").first.wait_for()
    shoot(page, f"bulk-done-{language}.png")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_clusters_news_screenshot(page, live_server, sample, editor, language, client, auth,
                                  run_worker, settings):
    """/clusters/ open while a copy of a listed story arrives: the banner, not a new order."""
    import json

    settings.CLUSTERS_POLL_SECONDS = 1
    _chinese(page, live_server, language)
    log_in(page, "editor")
    shown = sample.representative
    response = client.post("/api/v1/articles", content_type="application/json", **auth,
                           data=json.dumps({"nid": "late-copy", "url": "https://late.example/2",
                                            "title": shown.title + "（转载）",
                                            "content": shown.content}))
    assert response.status_code in (200, 202)
    run_worker()
    page.locator(".news-banner").wait_for(timeout=15_000)
    shoot(page, f"clusters-news-{language}.png")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_stats_desk_screenshot(page, live_server, sample, editor, language):
    """The desk on /stats/: my decisions today, the desk's throughput, the queue sampled
    over two days (decisions and samples backdated over the day, as a day's work)."""
    import random
    from datetime import timedelta

    from django.contrib.auth.models import User
    from django.utils import timezone

    from articles.editor import bulk
    from articles.models import Decision, QueueSample

    _chinese(page, live_server, language)
    editor.is_staff = True
    editor.save()
    docs = list(Doc.objects.filter(size__gt=1).exclude(status="confirmed").order_by("id"))
    job = bulk.start(editor, "confirm", [(d.pk, d.version) for d in docs[1:]])
    bulk.run(job.pk)
    wang = User.objects.create_user("wang", password="x" * 12)
    actions.mark_for_review(docs[0], wang, "two stories?")
    rng = random.Random(19)
    now = timezone.now()
    for decision in Decision.objects.all():
        decision.created_at = now - timedelta(minutes=rng.randint(0, min(600, now.hour * 60)))
        decision.save(update_fields=["created_at"])
    size = 260
    for n in range(48 * 12):
        size = max(40, size + rng.randint(-12, 14))
        QueueSample.objects.create(taken_at=now - timedelta(minutes=5 * n), size=size)
    log_in(page, "editor", "/stats/")
    page.locator(".desk").screenshot(path=str(OUT / f"stats-desk-{language}.png"))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_stats_teaching_screenshot(page, live_server, editor, language):
    """What teaching did on /stats/: two editors' labels and five fitted versions whose
    held-out precision and recall rise (figures written as a week of retraining)."""
    from datetime import timedelta

    from django.contrib.auth.models import User
    from django.utils import timezone

    from articles.models import Decision, MatchModelVersion, PairLabel

    _chinese(page, live_server, language)
    wang = User.objects.create_user("wang", password="x" * 12)
    for who, answers in ((editor, "ssdsdusdsdssdd"), (wang, "sdsdsuds")):
        for i, code in enumerate(answers):
            PairLabel.objects.create(nid_a=f"{who.username}{i}a", nid_b=f"{who.username}{i}b",
                                     editor=who, answer={"s": "same", "d": "different",
                                                         "u": "unsure"}[code])
    for i in range(5):
        Decision.objects.create(action="split" if i % 2 else "confirm", actor=wang,
                                doc_id=f"{i:032d}", before={})
    now = timezone.now()
    figures = [(0.78, 0.61), (0.82, 0.66), (0.85, 0.70), (0.84, 0.75), (0.89, 0.77)]
    for day, (precision, recall) in enumerate(figures):
        row = {"precision": precision, "recall": recall,
               "f1": 2 * precision * recall / (precision + recall)}
        made = MatchModelVersion.objects.create(
            version=f"editors-2026112{day + 4}-0300", base="vector-3", weights={},
            trained_pairs=30 + 25 * day, held_out_pairs=8 + 6 * day, scheduled=True,
            flagged=day == 3, report={"thresholds": [0.5], "threshold": 0.5,
                                      "current": [row], "proposed": [row]})
        MatchModelVersion.objects.filter(pk=made.pk).update(
            created_at=now - timedelta(days=5 - day))
    log_in(page, "editor", "/stats/")
    page.locator("#teaching").screenshot(path=str(OUT / f"stats-teaching-{language}.png"))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_admin_proxy_warning_screenshot(page, live_server, sample, editor, language):
    editor.is_staff = editor.is_superuser = True
    editor.save()
    if language == "zh":
        page.context.add_cookies([{"name": "django_language", "value": "zh-hans",
                                   "url": live_server.url}])
    page.set_extra_http_headers({"X-Forwarded-For": "198.51.100.7"})
    log_in(page, "editor", "/admin/")
    expect(page.locator("#proxy-warning")).to_be_visible()
    shoot(page, f"admin-proxy-warning-{language}.png")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_operations_screenshot(page, live_server, sample, editor, language, client, auth):
    editor.is_staff = True
    editor.save()
    if language == "zh":
        page.context.add_cookies([{"name": "django_language", "value": "zh-hans",
                                   "url": live_server.url}])
    client.post("/api/v1/articles", content_type="application/json", **auth,
                data='{"nid": "ops-waiting", "url": "https://w.example/1", "title": "等待处理",'
                     ' "content": "一篇还在队列里等待的文章。"}')  # no worker runs: it waits
    log_in(page, "editor", "/ops/")
    expect(page.locator(".ops-checks li").first).to_be_visible()
    shoot(page, f"operations-{language}.png", full_page=True)


def _scene(kind: str, size: tuple[int, int] = (800, 500), seed: int = 1) -> Image.Image:
    """A photo-like picture: a riverside ``landscape``, a ``skyline`` or a ``sunset``."""
    rng = np.random.default_rng(seed)
    width, height = size
    y, x = np.mgrid[0:height, 0:width] / np.array([height, width])[:, None, None]
    if kind == "sunset":
        pixels = np.array([250, 170, 80]) + np.array([-90, -110, 20]) * y[..., None]
        sun = (x - 0.6) ** 2 + ((y - 0.45) * height / width) ** 2 < 0.012
        pixels[sun] = [255, 235, 170]
        pixels[y > 0.62] = np.array([60, 50, 90]) + 40 * np.sin(x[y > 0.62, None] * 60)
    else:
        top = [30, 40, 90] if kind == "skyline" else [70, 130, 210]
        pixels = np.array(top) + (np.array([200, 220, 240]) - top) * y[..., None]
        if kind == "skyline":
            for left in np.arange(0, 1, 0.09):
                roof = rng.uniform(0.25, 0.6)
                block = (x >= left) & (x < left + 0.07) & (y > roof)
                pixels[block] = rng.uniform(60, 110)
                windows = block & (np.sin(x * 400) > 0.3) & (np.sin(y * 300) > 0.4)
                pixels[windows] = [250, 220, 120]
        else:
            pixels[y > 0.45 + 0.08 * np.sin(x * 6 + 1)] = [70, 130, 60]
            pixels[np.abs(y - (0.75 + 0.1 * np.sin(x * 3 + 1))) < 0.06] = [70, 120, 180]
    pixels += rng.normal(0, 6, pixels.shape)
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def _jpeg(picture: Image.Image, quality: int = 88) -> bytes:
    out = io.BytesIO()
    picture.save(out, "JPEG", quality=quality)
    return out.getvalue()


@pytest.fixture
def picture_host():
    """A local web server standing for the sites the pictures come from."""
    greenway = _scene("landscape")
    routes = {
        "/greenway.jpg": _jpeg(greenway),
        "/copy/greenway-640.jpg": _jpeg(greenway.resize((640, 400)), quality=60),
        "/skyline.jpg": _jpeg(_scene("skyline", seed=2)),
        "/sunset.jpg": _jpeg(_scene("sunset", (600, 800), seed=3)),
    }

    with serve(routes) as (base, _hits):
        yield base


def test_cluster_pictures_screenshot(page, live_server, client, auth, run_worker, editor,
                                     picture_host, settings):
    """The cluster page's members with their pictures: thumbnails served by the site, the
    picture two members share outlined, one that could not be read."""
    import json

    settings.IMAGE_FETCH_ALLOW_PRIVATE = True  # the local picture host
    pictures = {
        "riverside-orig": ["/greenway.jpg", "/skyline.jpg"],
        "riverside-repost-1": ["/copy/greenway-640.jpg", "/sunset.jpg"],
        "riverside-repost-2": ["/gone.jpg"],
        "riverside-repost-3": [],
    }
    for line in (ROOT / "demo" / "sample.jsonl").read_text(encoding="utf-8").splitlines():
        article = json.loads(line)
        if article["nid"] in pictures:
            article["images"] = [picture_host + path for path in pictures[article["nid"]]]
            response = client.post("/api/v1/articles", data=json.dumps(article),
                                   content_type="application/json", **auth)
            assert response.status_code in (200, 202)
    run_worker()
    doc = Article.objects.get(nid="riverside-orig").doc
    assert doc.size == len(pictures)
    log_in(page, "editor", f"/clusters/{doc.doc_id}/")
    members = page.locator("section.card", has=page.locator("table.members"))
    members.scroll_into_view_if_needed()
    page.wait_for_function("() => [...document.querySelectorAll('.pictures img')]"
                           ".every(img => img.complete && img.naturalWidth > 0)")
    expect(page.locator(".picture.shared")).to_have_count(2)
    OUT.mkdir(parents=True, exist_ok=True)
    members.screenshot(path=str(OUT / "cluster-pictures.png"))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_cluster_waterfall_screenshot(page, live_server, sample, editor, language):
    """The cluster page's members with one "why this match" open: the match model's
    waterfall (the prior, each comparison's level and weight, the match weight)."""
    _chinese(page, live_server, language)
    scored = [a for a in Article.objects.filter(doc=sample)
              if isinstance(a.match_explanation, dict) and a.match_explanation.get("weights")]
    assert scored, "no member of the sample's cluster was scored"
    member = max(scored, key=lambda a: (len(a.match_explanation["weights"]), a.nid))
    log_in(page, "editor", f"/clusters/{sample.doc_id}/")
    why = page.locator(f'tr.member-row[data-nid="{member.nid}"] details.why')
    why.locator("summary").click()
    expect(why.locator("table.waterfall")).to_be_visible()
    members = page.locator("section.card", has=page.locator("table.members"))
    members.scroll_into_view_if_needed()
    OUT.mkdir(parents=True, exist_ok=True)
    members.screenshot(path=str(OUT / f"cluster-waterfall-{language}.png"))


@pytest.fixture
def vector_engine(transactional_db):
    """The shipped model on the comparison vector (engine v4), added and activated as an
    admin does, before the sample is posted."""
    from articles.index.reindex import apply_settings
    from articles.tuning import matcher

    apply_settings(matcher.activate(matcher.shipped_vector_version()))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_cluster_vector_waterfall_screenshot(page, live_server, vector_engine, sample, editor,
                                             language):
    """The waterfall of a member the vector model placed: every comparison of the
    vector, its level, measure and weight, and the calibrated probability."""
    from fingerprints.rule.comparison import COMPARISONS

    _chinese(page, live_server, language)
    scored = [a for a in Article.objects.filter(doc=sample)
              if isinstance(a.match_explanation, dict)
              and a.match_explanation.get("kind") == "vector"]
    assert scored, "no member of the sample's cluster was scored by the vector model"
    member = min(scored, key=lambda a: a.nid)
    log_in(page, "editor", f"/clusters/{sample.doc_id}/")
    why = page.locator(f'tr.member-row[data-nid="{member.nid}"] details.why')
    why.locator("summary").click()
    table = why.locator("table.waterfall")
    expect(table).to_be_visible()
    expect(table.locator("tbody tr.step")).to_have_count(1 + len(COMPARISONS))
    OUT.mkdir(parents=True, exist_ok=True)
    why.screenshot(path=str(OUT / f"cluster-vector-waterfall-{language}.png"))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_match_model_version_screenshot(page, live_server, sample, editor, language,
                                       rule_model):
    """A proposed match model version before activation: the held-out comparison, the
    weights and the level bounds, the moved ones in bold (a version of the rule's levels,
    proposed while labels-1 is active, as fitting one asks)."""
    from dataclasses import replace

    from articles.tuning import matcher
    from articles.tuning.state import active_config
    from fingerprints.rule.match_model import starting_model

    editor.is_staff = editor.is_superuser = True
    editor.save()
    _chinese(page, live_server, language)
    start = starting_model()
    proposed = replace(start, version="editors-demo", description="a screenshot's version",
                       bounds=replace(start.bounds, guard_conflicts=0.15))
    held = matcher.editor_pairs(active_config())
    version = matcher._saved(proposed, start, active_config(), 40, held, editor)
    log_in(page, "editor", f"/admin/articles/matchmodelversion/{version.pk}/change/")
    expect(page.locator("table.model-bounds tr.moved")).to_have_count(1)
    shoot(page, f"match-model-version-{language}.png", full_page=True)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_teaching_screenshots(page, live_server, sample, editor, language, settings):
    """/review/teach/: a pair asked blind, then the same pair after "different"."""
    settings.TEACHING_AUDIT_PERCENT = 0
    if language == "zh":
        page.context.add_cookies([{"name": "django_language", "value": "zh-hans",
                                   "url": live_server.url}])
    log_in(page, "editor", "/review/teach/")
    page.locator(".teach-pair").wait_for()
    shoot(page, f"teach-blind-{language}.png")
    page.keyboard.press("d")
    page.locator(".teach-verdict").wait_for()
    why = page.locator(".teach-verdict details.why")
    if why.count():
        why.locator("summary").click()
    shoot(page, f"teach-answered-{language}.png", full_page=True)


@pytest.mark.data
@pytest.mark.parametrize("language", ["en", "zh"])
def test_two_editors_teaching_screenshots(page, other_page, live_server, taught, editor,
                                          second_editor, language):
    """The two editors' teaching scene (test_teaching_two_editors_browser.py): a pair
    answered by keyboard, the retrained version's preview in the admin, /stats/."""
    from tests.browser.test_teaching_two_editors_browser import in_chinese, scene

    if language == "zh":
        in_chinese(page, live_server)
        in_chinese(other_page, live_server)

    def shoot_step(target, name: str) -> None:
        path = str(OUT / f"{name}-{language}.png")
        if not hasattr(target, "keyboard"):  # a part of a page
            target.screenshot(path=path)
        elif name == "teach-retrained-preview":  # the version, its chart and comparison
            target.screenshot(path=path, full_page=True,
                              clip={"x": 0, "y": 0, "width": 1360, "height": 1500})
        else:
            shoot(target, f"{name}-{language}.png", full_page=True)

    scene(page, other_page, live_server, taught, editor, second_editor, shoot_step)
