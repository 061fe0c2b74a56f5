import sys

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

#: Long-running commands that serve Redis clients of their own (django-rq's workers,
#: the development server): they start the embedded Redis at once. Every other command
#: starts it only if it touches Redis (dedupsite.redis_store), and stops it at exit.
SERVER_COMMANDS = frozenset({"runserver", "rqworker", "rqscheduler", "dedup_worker"})


class ArticlesConfig(AppConfig):
    name = "articles"
    verbose_name = _("Articles")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import dedupsite.security  # noqa: F401  (login-failure signal receivers)
        from articles.changes.log import committed
        from articles.downstream.delivery import on_changes_committed

        # the change log's downstream (webhooks, the stream) hears of every logging commit
        committed.connect(on_changes_committed, dispatch_uid="downstream-delivery")

        if len(sys.argv) > 1 and sys.argv[1] in SERVER_COMMANDS:
            from dedupsite import redis_store

            redis_store.ensure_server()
