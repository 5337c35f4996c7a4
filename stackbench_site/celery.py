import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "stackbench_site.settings")

app = Celery("stackbench")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

RETRY_POLICY = {"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 1.0}


class QueueUnreachable(Exception):
    """Work could not be sent to the broker, so nothing was started. The message says why."""


def queue(signature, what="the run"):
    """Send work to the broker now, so an unreachable broker is reported to the person who asked."""
    try:
        return signature.apply_async(retry=True, retry_policy=RETRY_POLICY)
    except Exception as exc:
        raise QueueUnreachable(
            f"The task queue is not reachable ({exc.__class__.__name__}: {exc}); "
            f"{what} was not started. Try again once the broker is back."
        ) from None
