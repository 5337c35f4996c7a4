from django.apps import AppConfig


class WalkthroughsConfig(AppConfig):
    name = "walkthroughs"
    default_auto_field = "django.db.models.BigAutoField"
