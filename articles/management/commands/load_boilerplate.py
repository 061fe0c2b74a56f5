"""``manage.py load_boilerplate``: the shipped starting boilerplate list into the database."""

from django.core.management.base import BaseCommand

from articles.tuning.boilerplate import load_shipped


class Command(BaseCommand):
    help = ("Load the boilerplate list the project ships (clause hashes learned from public "
            "corpora: fingerprints/rule/data/boilerplate.txt) so that a fresh database "
            "removes the chrome a warm one has learned. Idempotent: a clause already in "
            "the database (learned, added, or switched off by an admin) is left as it is.")

    def handle(self, *args: object, **options: object) -> None:
        added, shipped = load_shipped()
        self.stdout.write(f"{added} of {shipped} shipped boilerplate clauses added.")
