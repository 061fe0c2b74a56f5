from django.core.management.base import BaseCommand, CommandParser
from tqdm import tqdm

from articles.index.reindex import rebuild_index
from articles.models import Article, ArticleStatus


class Command(BaseCommand):
    help = "Rebuild every Redis index (content, title, keys, URL) from the database."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--recompute", action="store_true",
            help="first re-extract every stored article's features with this code and the "
                 "active settings (after an upgrade that changes extraction); docIds stay")

    def handle(self, *args: object, **options: object) -> None:
        total = Article.objects.filter(status=ArticleStatus.DONE, doc__isnull=False).count()
        with tqdm(total=total, unit="article", disable=None) as bar:
            count = rebuild_index(progress=bar, recompute=bool(options["recompute"]))
        verb = "Re-extracted and indexed" if options["recompute"] else "Indexed"
        self.stdout.write(f"{verb} {count} articles.")
