"""Starting runs: the cross-model writes that also queue Celery work."""

from celery import group
from django.db import transaction

from audits.models import Batch, Run, RunBackend, ValidationDocument
from audits.tasks import run_audit_task, validate_document_task
from stackbench_site.celery import QueueUnreachable, queue
from walkthroughs.models import CodeExample, DocPage, Library, Walkthrough


class RunNotStarted(Exception):
    """The run could not be started (nothing to run, or the broker is unreachable); it was not kept. The message
    says why."""


class RunNotQueued(RunNotStarted):
    """The broker could not be reached, so the run was not queued: asking again once it is back can work."""


def _enqueue(run: Run, signature):
    # Queued after the run is committed (so a worker always finds it), and synchronously so that an
    # unreachable broker is reported to the user and leaves no orphan run behind.
    try:
        result = queue(signature)
    except QueueUnreachable as exc:
        run.delete()
        raise RunNotQueued(str(exc)) from None
    Run.objects.filter(pk=run.pk).update(celery_task_id=result.id or "")
    run.refresh_from_db()
    return run


def do_start_audit(
    walkthrough: Walkthrough,
    user=None,
    backend=None,
    version=None,
    previous_run=None,
    origin="dashboard",
    options=None,
    batch=None,
) -> Run:
    if not walkthrough.has_steps:
        raise RunNotStarted(f"{walkthrough.walkthrough_id} has no steps yet: import its walkthrough export first.")
    library = walkthrough.library
    with transaction.atomic():
        run = Run.objects.queue(
            library,
            walkthrough=walkthrough,
            version=version,
            backend=backend or library.default_backend,
            user=user,
            origin=origin,
            options=options,
            previous_run=previous_run or walkthrough.runs.audits().finished().newest_first().first(),
            progress_total=walkthrough.steps.count(),
            batch=batch,
        )
    return _enqueue(run, run_audit_task.si(run.pk))


def do_start_validation(
    library: Library,
    pages: list[DocPage],
    user=None,
    version=None,
    previous_run=None,
    origin="dashboard",
    options=None,
    batch=None,
) -> Run:
    """One run over a set of doc pages: a task per page, so the run spreads over every worker."""
    pages = [page for page in pages if page.library_id == library.pk]
    if not pages:
        raise RunNotStarted(f"{library.name} has no doc pages to validate: import or extract its examples first.")
    version = version or library.default_version
    with transaction.atomic():
        run = Run.objects.queue(
            library,
            version=version,
            backend=RunBackend.VENV,
            user=user,
            origin=origin,
            options=options,
            previous_run=previous_run or _previous_validation(library, pages),
            progress_total=CodeExample.objects.filter(doc_page__in=pages).count(),
            batch=batch,
        )
        run.doc_pages.set(pages)
        documents = [
            ValidationDocument.objects.create(
                run=run,
                doc_page=page,
                page=page.page,
                library_name=library.package_name,
                version=version,
                language=page.language,
            )
            for page in pages
        ]
    return _enqueue(run, group(validate_document_task.si(run.pk, document.pk) for document in documents))


def _previous_validation(library: Library, pages: list[DocPage]) -> Run | None:
    wanted = {page.pk for page in pages}
    for candidate in (
        Run.objects.validations().for_library(library).finished().newest_first().prefetch_related("doc_pages")[:20]
    ):
        if {page.pk for page in candidate.doc_pages.all()} == wanted:
            return candidate
    return None


def do_run_everything(library: Library, user=None, origin="dashboard") -> Batch:
    """Validate every doc page and audit every walkthrough of a library, as one batch."""
    walkthroughs = [w for w in library.walkthroughs.active() if w.has_steps]
    pages = list(library.doc_pages.all())
    if not walkthroughs and not pages:
        raise RunNotStarted(
            f"{library.name} has neither walkthroughs nor doc pages yet: sync or upload its docs first."
        )
    batch = Batch.objects.create(library=library, created_by=user, docs_commit=library.current_docs_commit())
    try:
        if pages:
            do_start_validation(library, pages, user=user, origin=origin, batch=batch)
        for walkthrough in walkthroughs:
            do_start_audit(walkthrough, user=user, origin=origin, batch=batch)
    except RunNotStarted:
        if not batch.runs.exists():
            batch.delete()  # the broker was down from the start: no empty batch is left behind
        raise
    return batch
