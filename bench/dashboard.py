"""Server time of the editor pages with 100k articles loaded.

Loads synthetic articles (default 100,000 in 20,000 docIds, one of them with 50
members) with bulk_create into a scratch database, then times the views in
process with Django's test client — routing, middleware, queries, diff and
template rendering; no network — and prints p50/p95 over repeats against the
goal of 150 ms for /clusters/ and for the 50-member /clusters/<docId>/ page.

    .venv/bin/python bench/dashboard.py [--articles 100000] [--docs 20000] [--repeats 30]

The database comes from DATABASE_URL (a scratch database `<name>_bench_dashboard`
is created next to it and dropped afterwards); without it, SQLite in a
temporary directory. Nothing is written to the project's own database.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GOAL_MS = 150.0
#: The pages held to the goal: the list, the 50-member cluster, the statistics with the
#: desk and the polls every open page makes.
GOAL_PAGES = ("/clusters/", "/clusters/<50 members>/", "/stats/", "/clusters/news/ (poll)",
              "/nav/counts/ (poll)", "bulk progress (poll)")
BIG_DOC_SIZE = 50
MEDIA = [f"媒体{n:02d}" for n in range(30)] + ["Evening Courier", "City Daily", "Metro Online"]
WORDS = [
    "城市", "绿道", "市民", "骑行", "公园", "湿地", "驿站", "图书馆", "借阅", "读者", "博物馆",
    "展览", "青铜器", "秋粮", "收获", "农机", "玉米", "水稻", "地铁", "线路", "乘客", "学校",
    "学生", "教师", "医院", "患者", "医生", "企业", "工厂", "产品", "市场", "价格", "消费",
    "旅游", "景区", "游客", "天气", "降雨", "气温", "交通", "道路", "车辆", "环保", "污染",
    "治理", "科技", "创新", "研发", "人工智能", "数据", "网络", "安全", "社区", "居民", "服务",
    "政策", "改革", "发展", "项目", "建设", "投资", "就业", "收入", "文化", "体育", "比赛",
]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--articles", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--keep", action="store_true",
                        help="keep the scratch database (and reuse it when it is already loaded)")
    return parser.parse_args()


def configure() -> tempfile.TemporaryDirectory[str]:
    """Environment before Django starts: a scratch database, no embedded Redis."""
    scratch = tempfile.TemporaryDirectory(prefix="bench-dashboard-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedupsite.settings")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{scratch.name}/unused.sqlite3")
    os.environ["DEDUPSITE_VAR_DIR"] = scratch.name
    # The pages never touch Redis; an explicit URL keeps the embedded server from starting.
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    return scratch


def sentence(rng: random.Random, words: int) -> str:
    return "".join(rng.choice(WORDS) for _ in range(words)) + "。"


def story(rng: random.Random, sentences: int = 12) -> str:
    paragraphs = []
    for _ in range(3):
        paragraphs.append("".join(sentence(rng, rng.randint(6, 14)) for _ in range(sentences // 3)))
    return "\n".join(paragraphs)


def variant(rng: random.Random, base: str) -> str:
    """A repost: a sentence dropped, a word changed, maybe a footer."""
    parts = base.split("。")
    if len(parts) > 4:
        del parts[rng.randrange(1, len(parts) - 1)]
    text = "。".join(parts)
    old = rng.choice(WORDS)
    text = text.replace(old, rng.choice(WORDS), 1)
    if rng.random() < 0.5:
        text += "\n（来源：综合报道 责任编辑：王小明）"
    return text


def doc_sizes(rng: random.Random, articles: int, docs: int) -> list[int]:
    """The 50-member doc first, then sizes skewed like news: half the docIds are single
    articles, the others reposted a few times, a few widely (capped below 50)."""
    rest, others = articles - BIG_DOC_SIZE, docs - 1
    singles = others // 2
    weights = [rng.paretovariate(1.2) for _ in range(others - singles)]
    scale = (rest - singles) / sum(weights)
    sizes = [max(2, min(round(w * scale), BIG_DOC_SIZE - 1)) for w in weights]
    deficit = rest - singles - sum(sizes)
    while deficit != 0:  # settle the rounding on random docIds, within 2..49
        i = rng.randrange(len(sizes))
        step = 1 if deficit > 0 else -1
        if 2 <= sizes[i] + step <= BIG_DOC_SIZE - 1:
            sizes[i] += step
            deficit -= step
    rng.shuffle(sizes)
    return [BIG_DOC_SIZE, *sizes, *([1] * singles)]


def load(args: argparse.Namespace) -> tuple[str, str]:
    """Bulk-load the synthetic corpus; return (docId of the 50-member doc, a word to search)."""
    from django.utils import timezone

    from articles.models import Article, ArticleStatus, Doc, DocStatus, MatchedBy
    from fingerprints.rule import extract

    rng = random.Random(args.seed)
    now = timezone.now()
    sizes = doc_sizes(rng, args.articles, args.docs)
    docs: list[Doc] = []
    articles: list[Article] = []
    article_id = 0
    started = time.perf_counter()
    for doc_pk, size in enumerate(sizes, start=1):
        base_title = "".join(rng.choice(WORDS) for _ in range(rng.randint(3, 6)))
        big = doc_pk == 1
        base = story(rng) if big else ""
        seen = now - timedelta(minutes=rng.randrange(60 * 24 * 60))
        members = []
        for n in range(size):
            article_id += 1
            received = seen + timedelta(minutes=n * rng.randint(1, 30))
            title = base_title if n == 0 or rng.random() < 0.5 else base_title + "（转载）"
            content = (base if n == 0 else variant(rng, base)) if big else (
                f"{base_title}。" + sentence(rng, 40))
            matched = None if n == 0 else rng.choices(
                [MatchedBy.CONTENT, MatchedBy.TITLE, MatchedBy.URL], [80, 15, 5])[0]
            members.append(Article(
                id=article_id, nid=f"n{article_id:07d}",
                url=f"https://news{n % 7}.example/{article_id}",
                title=title, content=content, media=rng.choice(MEDIA),
                hotness=round(rng.uniform(0, 100), 1), received_at=received,
                published_at=received - timedelta(minutes=5), status=ArticleStatus.DONE,
                doc_id=doc_pk, matched_by=matched,
                distance=None if matched is None else rng.choices([0, 1, 2, 3], [60, 25, 10, 5])[0],
                similarity=None if matched is None else round(rng.uniform(0.55, 1.0), 3),
                processed_at=received,
                features=extract(title, content).to_bytes() if big else None,
            ))
        rep = max(members, key=lambda a: a.hotness)
        docs.append(Doc(
            id=doc_pk, doc_id=f"{rng.getrandbits(64):016x}-{rng.getrandbits(64):016x}",
            status=rng.choices([DocStatus.AUTO, DocStatus.NEEDS_REVIEW, DocStatus.CONFIRMED],
                               [80, 10, 10])[0],
            size=size, first_seen=members[0].received_at, last_seen=members[-1].received_at,
            anchor_id=members[0].id, representative_id=rep.id,
        ))
        articles.extend(members)
    # Docs first without their two article links (circular foreign keys), then articles,
    # then the links.
    links = {d.id: (d.anchor_id, d.representative_id) for d in docs}
    for d in docs:
        d.anchor_id = d.representative_id = None
    Doc.objects.bulk_create(docs, batch_size=2000)
    Article.objects.bulk_create(articles, batch_size=2000)
    for d in docs:
        d.anchor_id, d.representative_id = links[d.id]
    Doc.objects.bulk_update(docs, ["anchor", "representative"], batch_size=1000)
    print(f"loaded {len(articles):,} articles in {len(docs):,} docIds "
          f"(largest {max(sizes)}) in {time.perf_counter() - started:.1f} s")
    return docs[0].doc_id, rng.choice(WORDS)


def desk_activity(user: object, seed: int) -> tuple[int, int]:
    """A busy desk for /stats/ and the polls: a finished bulk confirm of 200 docIds (one
    Decision each), 300 more decisions by four editors today, queue samples every five
    minutes for two days. Returns (the bulk action's id, the newest article id)."""
    from django.contrib.auth.models import User
    from django.utils import timezone

    from articles.models import Article, BulkAction, BulkStatus, Decision, Doc, QueueSample

    rng = random.Random(seed)
    now = timezone.now()
    BulkAction.objects.all().delete()
    Decision.objects.all().delete()
    QueueSample.objects.all().delete()
    docs = list(Doc.objects.order_by("id").values_list("pk", "doc_id", "version")[:500])
    job = BulkAction.objects.create(action="confirm", actor=user, status=BulkStatus.DONE,
                                    targets=[[pk, v] for pk, _d, v in docs[:200]],
                                    processed=200, changed=200, finished_at=now)
    editors = [user, *(User.objects.get_or_create(username=f"editor{n}")[0] for n in range(3))]
    decisions = [Decision(action="confirm", doc_id=doc_id, actor=user, bulk=job)
                 for _pk, doc_id, _v in docs[:200]]
    decisions += [Decision(action=rng.choice(["confirm", "split", "merge", "representative"]),
                           doc_id=doc_id, actor=rng.choice(editors))
                  for _pk, doc_id, _v in docs[200:]]
    made = Decision.objects.bulk_create(decisions)
    midnight = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    for decision in made:  # spread over the day so far
        seconds = rng.uniform(0, max(60.0, (now - midnight).total_seconds()))
        decision.created_at = midnight + timedelta(seconds=seconds)
    Decision.objects.bulk_update(made, ["created_at"], batch_size=500)
    QueueSample.objects.bulk_create([
        QueueSample(taken_at=now - timedelta(minutes=5 * n), size=rng.randint(200, 1500))
        for n in range(576)])
    newest = Article.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    return job.pk, newest


def timed(client: object, path: str, repeats: int, before: Callable[[], None] | None = None,
          **headers: str) -> tuple[list[float], list[float], int, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    response = client.get(path, **headers)  # warm-up (segmenter, IDF table, templates)
    assert response.status_code == 200, (path, response.status_code)
    if before is not None:
        before()
    with CaptureQueriesContext(connection) as queries:
        client.get(path, **headers)
    query_count = len(queries)  # now: every request start empties the query log
    times, cpu = [], []
    for _ in range(repeats):
        if before is not None:
            before()
        started, started_cpu = time.perf_counter(), time.process_time()
        response = client.get(path, **headers)
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    return times, cpu, query_count, len(response.content)


def main() -> None:
    args = parse_args()
    warnings.filterwarnings("ignore", message="No directory at")  # no collectstatic here
    scratch = configure()
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core import signals
    from django.core.cache import cache
    from django.db import close_old_connections, connection
    from django.test import Client

    # As in Django's test runner: one connection for the whole run (production keeps
    # connections open with CONN_MAX_AGE), so that the timings are of the pages alone.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)

    test_settings = settings.DATABASES["default"].setdefault("TEST", {})
    if connection.vendor == "sqlite":
        folder = Path(tempfile.gettempdir()) if args.keep else Path(scratch.name)
        test_settings["NAME"] = str(folder / "dedupsite-bench-dashboard.sqlite3")
    else:
        test_settings["NAME"] = f"{settings.DATABASES['default']['NAME']}_bench_dashboard"
    print(f"database: {connection.vendor}, scratch {test_settings['NAME']}")
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True,
                                                  keepdb=args.keep)
    settings.DEBUG = False  # as in production: no query log, no template debug info
    try:
        from articles.models import Article, Doc

        loaded = Doc.objects.order_by("id").first()
        if args.keep and loaded is not None and Doc.objects.count() == args.docs:
            big_doc, word = loaded.doc_id, WORDS[7]
            print(f"reusing the loaded scratch database ({Article.objects.count():,} articles)")
        else:
            Article.objects.all().delete()
            Doc.objects.all().delete()
            big_doc, word = load(args)

        compare = (Article.objects.filter(doc__doc_id=big_doc).order_by("hotness")
                   .values_list("nid", flat=True).first())
        user = (User.objects.filter(username="bench").first()
                or User.objects.create_superuser("bench", password=None))
        client = Client()
        client.force_login(user)
        bulk_pk, newest = desk_activity(user, args.seed)
        htmx = {"HTTP_HX_REQUEST": "true"}
        pages = [
            ("/clusters/", "/clusters/", {}),
            ("/clusters/<50 members>/", f"/clusters/{big_doc}/", {}),
            ("/clusters/?sort=-size", "/clusters/?sort=-size", {}),
            ("/clusters/?status=needs_review", "/clusters/?status=needs_review", {}),
            ("/clusters/?q=<word>", f"/clusters/?q={word}", {}),
            ("/clusters/?media=<outlet>", f"/clusters/?media={MEDIA[3]}", {}),
            ("/clusters/?page=150", "/clusters/?page=150", {}),
            ("diff fragment (htmx)", f"/clusters/{big_doc}/?compare={compare}",
             {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "diff"}),
            ("/review/", "/review/", {}),
            ("/stats/", "/stats/", {}),
            # every visit recomputes the system's figures (as the first one a minute does)
            ("/stats/ (system figures cold)", "/stats/", {"before": cache.clear}),
            ("/clusters/news/ (poll)", f"/clusters/news/?since={newest - 50}",
             {**htmx, "HTTP_HX_TARGET": "clusters-news"}),
            ("/nav/counts/ (poll)", "/nav/counts/", {**htmx, "HTTP_HX_TARGET": "nav-review-count"}),
            ("bulk progress (poll)", f"/bulk/{bulk_pk}/",
             {**htmx, "HTTP_HX_TARGET": "bulk-status"}),
        ]
        load_1m = os.getloadavg()[0]
        print(f"machine: {os.cpu_count()} CPUs, load average {load_1m:.1f} (timings are wall "
              "clock: a busy machine inflates them)")
        print("\nwall: server time per request (p50, p95); cpu: this process's CPU time (p50),"
              " the part a busy machine does not inflate (database time excluded)")
        print(f"\n{'page':34} {'p50 ms':>8} {'p95 ms':>8} {'cpu ms':>8} {'queries':>8} {'KB':>6}"
              "  goal (p95)")
        for label, path, headers in pages:
            times, cpu, queries, size = timed(client, path, args.repeats, **headers)
            p50 = statistics.median(times)
            p95 = statistics.quantiles(times, n=20)[-1] if len(times) >= 2 else times[0]
            goal = ""
            if label in GOAL_PAGES:
                goal = f"<= {GOAL_MS:.0f} ms: {'met' if p95 <= GOAL_MS else 'MISSED'}"
            print(f"{label:34} {p50:8.1f} {p95:8.1f} {statistics.median(cpu):8.1f} "
                  f"{queries:8d} {size / 1024:6.0f}  {goal}")
    finally:
        if not args.keep:
            connection.creation.destroy_test_db(old_name, verbosity=0)
        scratch.cleanup()


if __name__ == "__main__":
    main()
