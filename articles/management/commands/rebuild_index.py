from django.core.management.base import BaseCommand, CommandParser
from tqdm import tqdm

from articles.index.reindex import active_generation, ensure_index, rebuild_index
from articles.models import Article, ArticleStatus


class Command(BaseCommand):
    help = "Rebuild every Redis index (content, title, keys, URL) from the database."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--recompute", action="store_true",
            help="first re-extract every stored article's features with this code and the "
                 "active settings (after an upgrade that changes extraction); docIds stay")
        parser.add_argument(
            "--if-missing", action="store_true",
            help="rebuild only when Redis does not hold this database's index (a release "
                 "step: deploy/systemd/dedupsite-release.service); otherwise do nothing")

    def handle(self, *args: object, **options: object) -> None:
        if options["if_missing"] and not options["recompute"]:
            if active_generation() is not None:
                self.stdout.write("The index is present; nothing rebuilt.")
                return
            ensure_index()  # under the rebuild lock: one rebuild however many callers
            self.stdout.write("The index was missing: rebuilt.")
            return
        total = Article.objects.filter(status=ArticleStatus.DONE, doc__isnull=False).count()
        with tqdm(total=total, unit="article", disable=None) as bar:
            count = rebuild_index(progress=bar, recompute=bool(options["recompute"]))
        verb = "Re-extracted and indexed" if options["recompute"] else "Indexed"
        self.stdout.write(f"{verb} {count} articles.")
