from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from articles import watchdog


class Command(BaseCommand):
    help = ("An RQ worker on every dedupsite queue (ingest, push, default) with the "
            "scheduler, plus the recovery watchdog (articles/watchdog.py).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--burst", action="store_true", help="stop when the queues are empty")

    def handle(self, *args: object, **options: object) -> None:
        stop = watchdog.start()
        try:
            call_command("rqworker", "ingest", "push", "default", with_scheduler=True,
                         burst=bool(options["burst"]))
        finally:
            stop.set()
