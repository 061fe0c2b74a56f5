from django.core.management.base import BaseCommand
from tqdm import tqdm

from articles.index.reindex import rebuild_index
from articles.models import Article, ArticleStatus


class Command(BaseCommand):
    help = "Rebuild every Redis index (content, title, URL) from the database."

    def handle(self, *args: object, **options: object) -> None:
        total = Article.objects.filter(status=ArticleStatus.DONE, doc__isnull=False).count()
        with tqdm(total=total, unit="article", disable=None) as bar:
            count = rebuild_index(progress=bar)
        self.stdout.write(f"Indexed {count} articles.")
