"""The desk's smaller behaviours: a refused action keeps the editor's note, /favicon.ico,
claim times with their offset, the merge form naming the target's version, the history
offering only the undos that will pass, and an editor's desk narrowing the queue."""

from __future__ import annotations

import pytest
from django.test import Client

from articles.editor import actions

from .conftest import at_version, login

pytestmark = pytest.mark.django_db


def test_a_refused_stale_action_keeps_the_note_the_editor_typed(client, corpus, editor):
    login(client, editor)
    river = corpus["river"]
    shown = at_version(river, note="两篇都写了十一个公园，确认")
    actions.confirm_doc(river, None)  # someone else, meanwhile
    page = client.post(f"/clusters/{river.doc_id}/confirm/", shown, follow=True)
    html = page.content.decode()
    assert "changed this cluster" in html or "This cluster changed" in html
    assert 'value="两篇都写了十一个公园，确认"' in html
    # offered once: the next visit starts empty
    again = client.get(f"/clusters/{river.doc_id}/").content.decode()
    assert "两篇都写了十一个公园" not in again


def test_the_favicon_is_served():
    response = Client().get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("/favicon.svg")


def test_claim_times_show_their_offset(client, corpus, editor, settings):
    from django.contrib.auth.models import User

    settings.TIME_ZONE = "Asia/Shanghai"
    login(client, editor)
    client.post("/review/take/")
    colleague = User.objects.create_user("editor2")
    colleague.groups.set(editor.groups.all())
    page = login(Client(), colleague).get("/review/").content.decode()
    assert "taken by editor until" in page and "+0800" in page


def test_the_merge_form_names_the_targets_version(client, corpus, editor):
    login(client, editor)
    museum = corpus["museum"]
    html = client.get(f"/clusters/{corpus['river'].doc_id}/?merge_q={museum.doc_id}"
                      ).content.decode()
    assert f'name="target" value="{museum.doc_id}"' in html
    assert f'name="target_version" value="{museum.version}"' in html
    assert 'name="representative"' in html


def test_the_history_says_what_still_stands_and_offers_only_undos_that_will_pass(
        client, corpus, editor):
    import re

    from articles.models import Article, BulkAction, Decision

    login(client, editor)
    river = corpus["river"]
    actions.confirm_doc(river, editor)  # d1
    actions.choose_representative(Article.objects.get(nid="river-3"), editor)  # d2
    first, second = Decision.objects.order_by("pk")
    html = client.get(f"/clusters/{river.doc_id}/").content.decode()
    undo_urls = set(re.findall(r'action="/decisions/(\d+)/undo/"', html))
    assert undo_urls == {str(second.pk)}  # d1 would be refused: d2 changed the docId since
    actions.undo(second, editor)
    html = client.get(f"/clusters/{river.doc_id}/").content.decode()
    assert "undid a decision: chose the representative" in html
    assert html.count('class="undone"') == 1 and "(undone)" in html
    assert set(re.findall(r'action="/decisions/(\d+)/undo/"', html)) == {str(first.pk)}
    # a bulk decision links to its bulk action
    bulk = BulkAction.objects.create(action="confirm", actor=editor)
    museum = corpus["museum"]
    actions.confirm_doc(museum, editor, bulk=bulk)
    html = client.get(f"/clusters/{museum.doc_id}/").content.decode()
    assert f'href="/bulk/{bulk.pk}/">bulk #{bulk.pk}</a>' in html


def test_an_editors_desk_narrows_the_queue_taking_and_the_counts(client, corpus, editor):
    import re

    from articles.editor import review
    from articles.models import Article, DeskPreference, ReviewClaim

    login(client, editor)
    whole = review.review_queue(review.rules())
    medias = sorted(set(whole.values_list("media", flat=True)))
    assert len(medias) >= 1
    media = medias[0]
    wanted = whole.filter(media=media).count()
    assert client.post("/review/filter/", {"media": media}).status_code == 302
    assert DeskPreference.objects.get(user=editor).review_filter == {"media": media}
    html = client.get("/review/").content.decode()
    listed = re.findall(r'id="review-item-(\d+)"', html)
    assert listed and all(Article.objects.get(pk=int(pk)).media == media for pk in listed)
    assert f'data-count="{wanted}"' in html and "in your desk" in html
    nav = client.get("/nav/counts/").content.decode()
    assert f'data-count="{wanted}"' in nav  # the navigation counts the same desk
    client.post("/review/take/")
    assert Article.objects.get(pk=ReviewClaim.objects.get(editor=editor).article_id
                               ).media == media
    # another editor's queue is not narrowed
    assert review.desk_queue(None)[0].count() == whole.count()
    # by reason
    client.post("/review/filter/", {"reason": "title_only"})
    html = client.get("/review/").content.decode()
    assert all(Article.objects.get(pk=int(pk)).matched_by == "title"
               for pk in re.findall(r'id="review-item-(\d+)"', html))
    # a bad value saves nothing; clearing shows the whole queue
    page = client.post("/review/filter/", {"min_size": "0"}, follow=True).content.decode()
    assert DeskPreference.objects.get(user=editor).review_filter == {"reason": "title_only"}
    assert "greater than or equal to 1" in page
    client.post("/review/filter/", {"clear": "1", "media": "x"})
    assert DeskPreference.objects.get(user=editor).review_filter == {}
    html = client.get("/review/").content.decode()
    assert f'data-count="{whole.count()}"' in html and "in your desk" not in html
