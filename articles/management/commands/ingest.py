import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from pydantic import ValidationError
from tqdm import tqdm

from articles.api.schemas import ArticleIn, field_errors
from articles.ingest.intake import Accepted, ArticleInput, accept_articles


class Command(BaseCommand):
    help = "Load articles from a JSON-lines file (API field names) and queue them for dedup."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--batch", type=int, default=500)

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        if not path.exists():
            raise CommandError(f"{path} does not exist")
        batch: list[ArticleInput] = []
        accepted = Accepted()
        rejected = 0
        with path.open(encoding="utf-8") as lines, tqdm(unit="article", disable=None) as bar:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                parsed = _parse_line(line)
                if isinstance(parsed, str):
                    rejected += 1
                    self.stderr.write(f"line {number}: {parsed}")
                    continue
                batch.append(parsed.to_input())
                if len(batch) >= options["batch"]:
                    accept_articles(batch, accepted=accepted)
                    bar.update(len(batch))
                    batch = []
            if batch:
                accept_articles(batch, accepted=accepted)
                bar.update(len(batch))
        self.stdout.write(
            f"Queued {accepted.queued} articles ({accepted.new} new, {accepted.changed} "
            f"changed); {accepted.unchanged} unchanged, {accepted.updated} updated without "
            f"re-processing, {accepted.pinned} pinned by an editor; rejected {rejected} lines."
        )


def _parse_line(line: str) -> ArticleIn | str:
    """The line's article, or what is wrong with it, naming each field."""
    try:
        return ArticleIn.model_validate(json.loads(line))
    except ValidationError as exc:
        return "; ".join(f"{field}: {', '.join(messages)}"
                         for field, messages in field_errors([dict(e) for e in exc.errors()])
                         .items())
    except ValueError as exc:
        return f"not JSON: {exc}"
