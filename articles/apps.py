from django.apps import AppConfig


class ArticlesConfig(AppConfig):
    name = "articles"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.conf import settings

        import dedupsite.security  # noqa: F401  (login-failure signal receivers)

        if settings.EMBEDDED_REDIS:
            from dedupsite.embedded import ensure_redis

            ensure_redis(settings.VAR_DIR)
