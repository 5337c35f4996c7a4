import logging

from django.utils import timezone

from stackbench_site.celery import app, queue
from walkthroughs.models import Library
from walkthroughs.sync import SyncError, sync_docs

logger = logging.getLogger(__name__)


@app.task(acks_late=True, reject_on_worker_lost=True)
def sync_docs_task(library_id: int):
    """Sync a library's docs; safe to run twice (an unchanged page is stored once)."""
    library = Library.objects.filter(pk=library_id).first()
    if library is None:
        return
    try:
        sync_docs(library)
    except SyncError as exc:
        Library.objects.filter(pk=library_id).update(
            sync_report={"error": str(exc), "error_at": timezone.now().isoformat()}
        )


def start_sync(library: Library):
    """Queue a sync of the library's docs and mark it pending (raises QueueUnreachable when the broker is down)."""
    queue(sync_docs_task.si(library.pk), what="the sync")
    library.request_sync()
