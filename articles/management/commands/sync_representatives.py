from django.core.management.base import BaseCommand
from tqdm import tqdm

from articles.models import Doc
from articles.representatives import outbox


class Command(BaseCommand):
    help = "Compare the representative store (HBase or local) with MySQL and repair drift."

    def handle(self, *args: object, **options: object) -> None:
        total = Doc.objects.filter(size__gt=0, representative__isnull=False).count()
        with tqdm(total=total, unit="doc", disable=None) as bar:
            counts = outbox.sync(progress=bar)
        self.stdout.write(
            "Checked {checked} docIds: {missing} missing, {stale} stale, "
            "{orphaned} orphaned rows repaired.".format(**counts)
        )
