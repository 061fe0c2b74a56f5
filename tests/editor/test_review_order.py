"""The review queue in the admin's order: by the model (the match
probability nearest the threshold first, then the hottest) by default, or as before
(lowest verified similarity first)."""

from __future__ import annotations

import pytest

from articles.editor import review
from articles.models import Article, EngineSettings, ReviewOrder
from articles.tuning.state import active_config

pytestmark = pytest.mark.django_db


def item(nid: str, probability: float | None, hotness: float, similarity: float) -> int:
    return Article.objects.create(nid=nid, url=f"https://r.example/{nid}", title="t",
                                  content="c", match_probability=probability,
                                  hotness=hotness, similarity=similarity, distance=1).pk


@pytest.fixture
def queue() -> dict[str, int]:
    t = active_config().match_threshold
    return {
        "sure": item("sure", min(t + 0.45, 1.0), 9.0, 0.10),
        "near_cold": item("near_cold", t + 0.02, 1.0, 0.95),
        "near_hot": item("near_hot", t - 0.02, 5.0, 0.90),
        "unscored": item("unscored", None, 50.0, 0.50),
    }


def test_by_default_the_model_orders_the_queue_nearest_the_threshold_then_hottest(queue):
    assert EngineSettings.load().review_order == ReviewOrder.MODEL
    ids = review.in_order(Article.objects.order_by("-pk"), 10)
    assert ids == [queue["near_hot"], queue["near_cold"], queue["sure"], queue["unscored"]]


def test_as_before_orders_it_by_lowest_similarity(queue):
    settings = EngineSettings.load()
    settings.review_order = ReviewOrder.DOUBT
    settings.save()
    ids = review.in_order(Article.objects.order_by("-pk"), 10)
    assert ids == [queue["sure"], queue["unscored"], queue["near_hot"], queue["near_cold"]]


def test_the_limit_takes_the_first_in_that_order(queue):
    assert review.in_order(Article.objects.order_by("-pk"), 1) == [queue["near_hot"]]
