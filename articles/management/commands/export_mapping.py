import json

from django.core.management.base import BaseCommand, CommandParser

from articles.models import Article, ArticleStatus


class Command(BaseCommand):
    help = 'Write the nid -> docId mapping as JSON lines {"nid", "docId"}.'

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", "-o", default="-", help="file path, or - for stdout")

    def handle(self, *args: object, **options: object) -> None:
        to_file = options["output"] != "-"
        out = open(str(options["output"]), "w") if to_file else self.stdout  # noqa: SIM115
        rows = (
            Article.objects.filter(status=ArticleStatus.DONE, doc__isnull=False)
            .order_by("id").values_list("nid", "doc__doc_id").iterator(chunk_size=5000)
        )
        count = 0
        for nid, doc_id in rows:
            out.write(json.dumps({"nid": nid, "docId": doc_id}, ensure_ascii=False) + "\n")
            count += 1
        if to_file:
            out.close()
        self.stderr.write(f"Exported {count} mappings.")
