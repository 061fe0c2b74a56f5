from django.core.management.base import BaseCommand, CommandParser

from articles.ingest.intake import requeue_stale


class Command(BaseCommand):
    help = "Enqueue again every article still queued after --older-than seconds."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--older-than", type=float, default=60.0)

    def handle(self, *args: object, **options: object) -> None:
        count = requeue_stale(older_than_seconds=float(options["older_than"]))  # type: ignore[arg-type]
        self.stdout.write(f"Re-enqueued {count} queued articles.")
