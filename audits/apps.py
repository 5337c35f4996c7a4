from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AuditsConfig(AppConfig):
    name = "audits"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from stackbench_site.roles import ensure_roles

        post_migrate.connect(ensure_roles, sender=self, dispatch_uid="stackbench-roles")
