from django.core.management.base import BaseCommand, CommandParser

from articles.representatives.retention import BATCH, clear_old_bodies


class Command(BaseCommand):
    help = ("Body retention to the end: clear the bodies older than the admin's retention "
            "period of articles that are neither their docId's representative nor its "
            "founding article (the worker's watchdog does the same a few batches at a time).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch", type=int, default=BATCH,
                            help=f"articles examined per transaction (default {BATCH})")

    def handle(self, *args: object, **options: object) -> None:
        batch = int(options["batch"])  # type: ignore[call-overload]
        if batch < 1:
            self.stderr.write("--batch must be at least 1")
            raise SystemExit(2)
        result = clear_old_bodies(batches=None, batch=batch)
        self.stdout.write(f"Examined {result.examined} articles, cleared {result.cleared} "
                          "bodies.")
