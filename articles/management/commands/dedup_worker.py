from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from articles.ingest import jobs, watchdog

QUEUES = ("ingest", "push", "default", "images")  # in this order: text before pictures
#: Seconds between a waiting worker's heartbeats + 15; a killed worker's registration
#: expires 60 s after that (RQ's default, 420, would hide a dead worker for 8 minutes
#: from dedupsite_workers, which the "no workers" alert reads).
WORKER_TTL = 60


class Command(BaseCommand):
    help = ("An RQ worker on every dedupsite queue (ingest, push, default, images, served "
            "in that order) with the scheduler, plus the recovery watchdog "
            "(articles/ingest/watchdog.py).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--burst", action="store_true",
                            help="stop when the queues are empty, scheduled jobs included")
        parser.add_argument("--queues", default=",".join(QUEUES),
                            help="the queues to serve, comma-separated, in priority order "
                                 f"(default {','.join(QUEUES)}; e.g. 'images' for a worker "
                                 "of its own that fetches pictures)")

    def handle(self, *args: object, **options: object) -> None:
        queues = [name.strip() for name in str(options["queues"]).split(",") if name.strip()]
        unknown = sorted(set(queues) - set(QUEUES))
        if not queues or unknown:
            raise CommandError(f"--queues: choose among {', '.join(QUEUES)} "
                               f"(unknown: {', '.join(unknown) or 'none given'})")
        # Load the segmenter dictionary and IDF table once, before the first job: jobs
        # run in this process (SimpleWorker: no fork per job, which would load them
        # again for every batch and add a fork to every single-article request).
        from articles.tuning.state import active_config
        from fingerprints.rule import extract

        extract("预热", "加载分词词典和逆文档频率表。warm up", active_config())
        stop = watchdog.start()
        try:
            while True:
                call_command("rqworker", *queues, with_scheduler=True,
                             burst=bool(options["burst"]), worker_ttl=WORKER_TTL,
                             worker_class="articles.ops.worker.MeteredWorker")
                # A burst worker runs what it scheduled (the delayed representative
                # pushes, retries) before it exits, instead of leaving it to a later one.
                if not options["burst"] or not jobs.release_scheduled(queues):
                    break
        finally:
            stop.set()
