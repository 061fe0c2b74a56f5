import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from pydantic import ValidationError
from tqdm import tqdm

from articles.api.schemas import ArticleIn
from articles.ingest.intake import ArticleInput, accept_articles


class Command(BaseCommand):
    help = "Load articles from a JSON-lines file (API field names) and queue them for dedup."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--batch", type=int, default=500)

    def handle(self, *args: object, **options: object) -> None:
        path: Path = options["file"]  # type: ignore[assignment]
        if not path.exists():
            raise CommandError(f"{path} does not exist")
        batch: list[ArticleInput] = []
        accepted = rejected = 0
        with path.open(encoding="utf-8") as lines, tqdm(unit="article", disable=None) as bar:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    item = ArticleIn.model_validate(json.loads(line))
                except (ValueError, ValidationError) as exc:
                    rejected += 1
                    self.stderr.write(f"line {number}: {str(exc).splitlines()[0]}")
                    continue
                batch.append(ArticleInput(
                    nid=item.nid, url=item.url, title=item.title, content=item.content,
                    category=item.category, media=item.media, image_count=item.imageCount,
                    hotness=item.hotness, published_at=item.publishedAt,
                ))
                if len(batch) >= int(options["batch"]):  # type: ignore[call-overload]
                    accepted += len(accept_articles(batch))
                    bar.update(len(batch))
                    batch = []
            if batch:
                accepted += len(accept_articles(batch))
                bar.update(len(batch))
        self.stdout.write(f"Queued {accepted} articles; rejected {rejected} lines.")
