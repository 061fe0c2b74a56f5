from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from articles.downstream import webhooks
from articles.models import ApiKey


class Command(BaseCommand):
    help = ("Register a webhook that receives the change log (docs/api.md). Its signing "
            "secret is printed once, alone on the last line.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("url", help="the receiver, http:// or https://")
        parser.add_argument("--key", default=None,
                            help="the name of an active API key: the webhook receives the "
                                 "changes that key may read (default: every change)")

    def handle(self, *args: Any, **options: Any) -> None:
        key = None
        if options["key"] is not None:
            key = ApiKey.objects.active().filter(name=options["key"]).order_by("pk").first()
            if key is None:
                raise CommandError(f"no active API key named {options['key']!r}")
        try:
            hook = webhooks.create(str(options["url"]), key)
        except webhooks.BadWebhook as exc:
            raise CommandError(str(exc)) from None
        self.stderr.write(f"Webhook {hook.pk} registered for {hook.url}; it receives the "
                          "changes from now on. Its signing secret is shown only once:")
        self.stdout.write(hook.secret)
