from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from articles.models import ApiKey


class Command(BaseCommand):
    help = "Create an API key for a crawler. The key is printed once, alone on the last line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="who uses the key, e.g. the crawler's name")
        parser.add_argument("--rate-limit", type=int, default=6000,
                            help="requests per minute (0 = unlimited)")
        parser.add_argument("--may-read-others", action="store_true",
                            help="may read the articles other keys posted (by default a key "
                                 "reads its own; docs/api.md)")

    def handle(self, *args: Any, **options: Any) -> None:
        key, plaintext = ApiKey.issue(str(options["name"]),
                                      rate_limit_per_minute=options["rate_limit"],
                                      may_read_others=options["may_read_others"])
        self.stderr.write(f"Created API key {key.prefix} for {key.name!r}. It is shown only once:")
        self.stdout.write(plaintext)
