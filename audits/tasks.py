"""Celery tasks. Each takes primary keys, re-fetches, claims its run with a guarded update (so a redelivered
task is a no-op) and stores progress and findings as they happen, so a run that dies keeps what it found."""

import logging
import time
from pathlib import Path

from celery import group
from celery.signals import worker_ready
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection
from django.utils import timezone

from audits.models import ExampleResult, Run, RunKind, RunStatus, ServiceBeat, ValidationDocument, record_problems
from stackbench.auditing.common import AuditError, AuditObserver, AuditRequest
from stackbench.auditing.rules import AuditCancelled
from stackbench.auditing.run import run_audit
from stackbench.formats.results import ValidationSummary, validation_file_name
from stackbench.lib.jsonfiles import write_model
from stackbench.sandbox import cgroups, leftovers
from stackbench.validation.batch import validate_document
from stackbench.validation.options import ValidationError, ValidationObserver
from stackbench_site.celery import QueueUnreachable, app, queue
from stackbench_site.configuration import claude_settings, sandbox_settings, validation_options

logger = logging.getLogger(__name__)


class RunObserver(AuditObserver):
    """Feeds a stored run: progress, the last command, and each gap the moment the step server stores it."""

    def __init__(self, run: Run, attempt: int):
        self.run = run
        self.cancel = Lease(run, attempt)

    def step_started(self, number, total, title):
        self.run.report_progress(current=number, total=total, label=f"Step {number}: {title}")

    def gap_reported(self, seq, gap):
        self.run.record_gap(seq, gap)

    def command_started(self, command):
        self.run.report_progress(command=command)

    def sandbox_ready(self, description):
        self.run.record_environment(description)

    def agent_finished(self, usage, cost_usd):
        Run.objects.filter(pk=self.run.pk).update(usage=usage, cost_usd=cost_usd)

    def should_stop(self) -> bool:
        return self.cancel()

    def close(self):
        connection.close()


@app.task(acks_late=True, reject_on_worker_lost=True)
def run_audit_task(run_id: int):
    attempt = None
    try:
        attempt = Run.objects.claim(run_id)
        if attempt is None:
            logger.info("run %s is not queued any more; nothing to do", run_id)
            return
        _audit(run_id, attempt)
    except DATABASE_OUTAGE as exc:
        _queue_again_after_outage(run_id, attempt, exc, lambda: run_audit_task.si(run_id))


def _audit(run_id: int, attempt: int):
    run = Run.objects.select_related("walkthrough", "library").get(pk=run_id)
    output = run.ensure_output_dir()
    inputs = output / "input"
    inputs.mkdir(exist_ok=True)
    walkthrough_path = inputs / f"{run.walkthrough.walkthrough_id}.json"
    walkthrough_path.write_text(run.walkthrough.export_json())
    options = run.options or {}
    try:
        request = AuditRequest(
            walkthrough_path=walkthrough_path,
            output_dir=output,
            library_name=run.library.name,
            library_version=run.library_version,
            sandbox=sandbox_settings(
                run.library.python_version,
                run.library.network,
                **({"timeout": float(options["timeout"])} if options.get("timeout") else {}),
            ),
        )
    except LookupError as exc:
        close_run(run, RunStatus.FAILED, error=f"The audit could not run: {exc}")
        return
    try:
        result = run_audit(request, backend=run.backend, observer=RunObserver(run, attempt), claude=claude_settings())
    except AuditCancelled:
        close_run(run)
        return
    except AuditError as exc:
        close_run(run, RunStatus.FAILED, error=str(exc))
        return
    except DATABASE_OUTAGE:
        raise
    except Exception as exc:
        logger.exception("audit run %s failed", run_id)
        close_run(run, RunStatus.FAILED, error=f"The audit stopped on an internal error: {exc!r}")
        return
    for seq, gap in enumerate(result.gaps):
        run.record_gap(seq, gap)
    close_run(run, RunStatus.SUCCEEDED, progress_current=result.completed_steps, progress_total=result.total_steps)


def close_run(run: Run, status=None, **fields):
    """List the run's files, end it (unless it was cancelled meanwhile) and fold its findings into problems."""
    run.record_output_files()
    if status is not None:
        run.finish(status, **fields)
    run.refresh_from_db()
    record_problems(run)


class DocumentObserver(ValidationObserver):
    """Stores each example's result the moment it is known, and moves the run's progress on."""

    def __init__(self, run: Run, document: ValidationDocument, attempt: int):
        self.run, self.document = run, document
        self.cancel = Lease(run, attempt)

    def sandbox_ready(self, description):
        self.run.record_environment(description)

    def example_finished(self, page, result):
        self.document.store_results([result])
        done = ExampleResult.objects.filter(document__run=self.run).count()
        self.run.report_progress(current=done, label=f"{page} #{result.example_index}")

    def should_stop(self):
        return self.cancel()


class Lease:
    """This attempt's hold on a run: a heartbeat at most once a second, and the answer to "should I stop?" —
    yes once the run was cancelled, or handed to another worker because this one was thought dead."""

    def __init__(self, run: Run, attempt: int):
        self.run, self.attempt = run, attempt
        self.beaten_at, self.lost = 0.0, False

    def __call__(self) -> bool:
        now = time.monotonic()
        if not self.lost and now - self.beaten_at > 1.0:
            self.beaten_at = now
            self.lost = not self.run.beat(self.attempt)
        return self.lost


@app.task(bind=True, acks_late=True, reject_on_worker_lost=True)
def validate_document_task(self, run_id: int, document_id: int):
    claimed = False
    try:
        Run.objects.claim(run_id)
        run = Run.objects.select_related("library").get(pk=run_id)
        document = ValidationDocument.objects.select_related("doc_page").get(pk=document_id)
        if run.status != RunStatus.RUNNING or not document.claim():
            return
        claimed = True
        _validate(run, document, self.request.hostname or "")
    except DATABASE_OUTAGE as exc:
        if claimed:
            _hand_document_back_after_outage(run_id, document_id, exc)
        else:
            _queue_again_after_outage(run_id, None, exc, lambda: validate_document_task.si(run_id, document_id))


def _validate(run: Run, document: ValidationDocument, hostname: str):
    attempt = run.attempts
    ValidationDocument.objects.filter(pk=document.pk).update(worker=hostname)
    options = run.options or {}
    overrides = {"find_links": [Path(p) for p in options["find_links"]]} if options.get("find_links") else {}
    if "offline" in options:
        overrides["offline"] = bool(options["offline"])
    analysis = document.doc_page.analysis()
    analysis.version = run.library_version or analysis.version
    try:
        options_for_run = validation_options(
            run.library.python_version,
            run.library.network,
            timeout=float(options.get("timeout", 30)),
            num_workers=1,
            **overrides,
        )
        result = validate_document(analysis, options_for_run, DocumentObserver(run, document, attempt))
        write_model(run.ensure_output_dir() / validation_file_name(document.page), result)
        ValidationDocument.objects.filter(pk=document.pk).update(
            finished=True, **ValidationDocument.outcome_fields(result)
        )
    except (LookupError, ValidationError) as exc:
        ValidationDocument.objects.filter(pk=document.pk).update(
            finished=True, install_error=f"The validation stopped: {exc}"
        )
    except DATABASE_OUTAGE:
        raise
    except Exception as exc:
        logger.exception("validation of %s in run %s failed", document.page, run.pk)
        ValidationDocument.objects.filter(pk=document.pk).update(
            finished=True, install_error=f"The validation stopped on an internal error: {exc!r}"
        )
    finish_validation_if_done(run)


def finish_validation_if_done(run: Run):
    """The last document to finish closes the run (the guarded finish makes a race harmless)."""
    if run.documents.filter(finished=False).exists():
        return
    run.refresh_from_db()
    if run.status != RunStatus.RUNNING:
        close_run(run)
        return
    documents = list(run.documents.prefetch_related("results"))
    folder = run.ensure_output_dir()
    summary = ValidationSummary(
        timestamp=timezone.now(),
        validation_duration_seconds=(timezone.now() - run.started_at).total_seconds(),
        num_workers=len({d.worker for d in documents if d.worker}) or 1,
        documents=[document.to_format() for document in documents],
    )
    write_model(folder / "validation_summary.json", summary)
    broken = [d for d in documents if d.install_error.startswith("The validation stopped")]
    if broken:
        close_run(run, RunStatus.FAILED, error="; ".join(f"{d.page}: {d.install_error}" for d in broken))
    else:
        close_run(run, RunStatus.SUCCEEDED, progress_current=summary.total_examples)


# Our database going away under a run (a restart, a failover). The run did nothing wrong: it waits for the
# database and is queued again without costing an attempt.
DATABASE_OUTAGE = (OperationalError, InterfaceError)
OUTAGE_LABEL = "Queued again: the database stopped answering during the run (not counted as an attempt)"


def wait_for_database(seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        try:
            connection.close()
            connection.ensure_connection()
            return True
        except DATABASE_OUTAGE:
            if time.monotonic() >= deadline:
                return False
            time.sleep(1)


def _database_came_back(run_id: int, exc: Exception) -> bool:
    """Wait for the database; one that stays away longer leaves the run to the periodic recovery."""
    logger.warning("the database stopped answering during run %s (%s); waiting for it", run_id, exc)
    if wait_for_database(settings.STACKBENCH_DATABASE_WAIT_SECONDS):
        return True
    logger.error("the database did not come back; run %s is left to the periodic recovery", run_id)
    return False


def _queue_again_after_outage(run_id: int, attempt: int | None, exc: Exception, signature):
    """Once the database is back, give the run back as the attempt it was and send its message again."""
    if not _database_came_back(run_id, exc):
        return
    if attempt is not None and not Run.objects.give_back(run_id, attempt, OUTAGE_LABEL):
        return
    _send_again(run_id, signature())


def _hand_document_back_after_outage(run_id: int, document_id: int, exc: Exception):
    """A page of a validation lost its database: the page starts again (its stored results are kept), the run
    goes on as the same attempt."""
    if not _database_came_back(run_id, exc):
        return
    # Beaten now, so the periodic recovery does not take the silent run for dead and count an attempt.
    if not Run.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(heartbeat_at=timezone.now()):
        return
    ValidationDocument.objects.filter(pk=document_id, finished=False).update(started_at=None)
    _send_again(run_id, validate_document_task.si(run_id, document_id))


def _send_again(run_id: int, signature):
    try:
        queue(signature, what=f"run #{run_id}")
    except QueueUnreachable as exc:
        # Queued (or running) in the database: the periodic recovery sends it once the broker is back.
        logger.warning("could not send run %s again: %s", run_id, exc)


MAX_ATTEMPTS = 2


def recover_stale_runs(stale_seconds: float | None = None) -> list[tuple[int, str]]:
    """Runs whose worker stopped reporting (killed, out of memory, machine gone) are queued again once; a run
    that dies twice is failed with the reason. What they found before is kept (gaps and example results are
    stored once each, so the new attempt does not duplicate them)."""
    stale_seconds = stale_seconds if stale_seconds is not None else settings.STACKBENCH_RUN_STALE_SECONDS
    handled = []
    for run in Run.objects.stale(stale_seconds).select_related("library"):
        silent = f"its worker stopped reporting for over {stale_seconds:.0f} s"
        if run.attempts >= MAX_ATTEMPTS:
            if run.finish(
                RunStatus.FAILED,
                error=f"The run was given up: {silent}, {run.attempts} times. What it found before is kept.",
            ):
                run.record_output_files()
                record_problems(run)
                handled.append((run.pk, "failed"))
            continue
        requeued = Run.objects.filter(pk=run.pk, status=RunStatus.RUNNING, attempts=run.attempts).update(
            status=RunStatus.QUEUED, progress_label=f"Queued again: {silent}", queued_at=timezone.now()
        )
        if not requeued:
            continue
        try:
            queue(_signature_for(run), what=f"run #{run.pk}")
        except QueueUnreachable as exc:
            # Left as it was (running and silent), so the next check tries again once the broker is back.
            Run.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(status=RunStatus.RUNNING)
            logger.warning("could not queue run %s again: %s", run.pk, exc)
            continue
        handled.append((run.pk, "requeued"))
    return handled + resend_lost_messages()


def resend_lost_messages(seconds: float | None = None) -> list[tuple[int, str]]:
    """Send again the message of every run queued for longer than it should take a worker to take it. The
    message may still be there (a long queue): a second one is harmless, tasks claim their run with a guarded
    update, and no attempt is counted for our infrastructure's loss."""
    seconds = seconds if seconds is not None else settings.STACKBENCH_QUEUED_STALE_SECONDS
    handled = []
    for run in Run.objects.stuck_in_queue(seconds):
        # One recoverer re-sends it: the guarded update on queued_at keeps a second one from doing it too.
        if not Run.objects.filter(pk=run.pk, status=RunStatus.QUEUED, queued_at=run.queued_at).update(
            queued_at=timezone.now()
        ):
            continue
        try:
            queue(_signature_for(run), what=f"run #{run.pk}")
        except QueueUnreachable as exc:
            Run.objects.filter(pk=run.pk).update(queued_at=run.queued_at)  # tried again at the next check
            logger.warning("could not send run %s again: %s", run.pk, exc)
            continue
        handled.append((run.pk, "resent"))
    return handled


def _signature_for(run: Run):
    if run.kind == RunKind.AUDIT:
        return run_audit_task.si(run.pk)
    documents = list(run.documents.filter(finished=False))
    ValidationDocument.objects.filter(pk__in=[d.pk for d in documents]).update(started_at=None)
    return group(validate_document_task.si(run.pk, d.pk) for d in documents)


def sweep_leftovers():
    """What workers killed on this machine left behind: processes, sandbox folders, control groups."""
    leftovers.sweep_leftovers(settings.STACKBENCH_SANDBOX_DIR)
    cgroups.sweep_leftovers()


@app.task
def recover_stale_runs_task():
    ServiceBeat.beat(ServiceBeat.RECOVERY)
    # Every minute too, not only when a worker starts: a dead worker's run may be retried by another worker.
    sweep_leftovers()
    return recover_stale_runs()


@worker_ready.connect
def _recover_on_start(**kwargs):
    # A worker that starts after a crash picks up what the crashed one left behind.
    try:
        sweep_leftovers()
        recover_stale_runs()
    except Exception:
        logger.exception("could not recover stale runs at start-up")
