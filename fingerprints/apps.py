from django.apps import AppConfig


class FingerprintsConfig(AppConfig):
    name = "fingerprints"
    default_auto_field = "django.db.models.BigAutoField"
