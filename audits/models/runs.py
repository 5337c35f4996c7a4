"""Runs and what they found: a run audits a walkthrough or validates doc pages, and stores its gaps or its
example results; a batch groups the runs started together.

Past 500 lines, on purpose: a run and its findings are one noun here (a run counts its gaps and failing examples,
a gap or result records itself on its run); split, the two modules would import each other."""

import json
import secrets
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import models, transaction
from django.db.models import Case, Count, F, OuterRef, Q, Subquery, Value, When
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone

from stackbench.formats.results import EXAMPLE_SEVERITY
from stackbench.formats.results import AuditResult as AuditResultFormat
from stackbench.formats.results import ExampleResult as ExampleResultFormat
from stackbench.formats.results import ValidationResult as ValidationResultFormat
from stackbench.formats.walkthrough import GAP_SEVERITY
from stackbench.formats.walkthrough import Gap as GapFormat
from stackbench.lib.fingerprints import example_fingerprint, gap_fingerprint
from stackbench.lib.snippets import code_hash
from walkthroughs.models import Backend, DocPage, Library, Walkthrough


class RunKind(models.TextChoices):
    AUDIT = "audit", "Walkthrough audit"
    VALIDATION = "validation", "Code validation"


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


ACTIVE_STATUSES = (RunStatus.QUEUED, RunStatus.RUNNING)
# Each kind of run reports findings on its own severity scale; ranks line up, so both sort together.
SEVERITY_SCALES = {RunKind.AUDIT: GAP_SEVERITY, RunKind.VALIDATION: EXAMPLE_SEVERITY}


def rank_of(scale, field="severity", missing=None) -> Case:
    """A severity column as its rank on a scale (most severe highest), for ordering in the database. A row
    without a severity counts as `missing`."""
    whens = [When(**{field: name}, then=Value(scale.rank(name))) for name in scale]
    if missing is not None:
        whens.append(When(**{f"{field}__isnull": True}, then=Value(scale.rank(missing))))
    return Case(*whens, default=Value(0), output_field=models.PositiveSmallIntegerField())


class RunBackend(models.TextChoices):
    RULES = Backend.RULES.value, Backend.RULES.label
    CLAUDE = Backend.CLAUDE.value, Backend.CLAUDE.label
    VENV = "venv", "Fresh virtualenvs"
    IMPORTED = "imported", "Imported file"


class Batch(models.Model):
    """Everything of a library run at once: its doc pages validated and each walkthrough audited."""

    library = models.ForeignKey(Library, on_delete=models.CASCADE, related_name="batches")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now)
    docs_commit = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"Batch #{self.pk} of {self.library}"

    def get_absolute_url(self):
        return reverse("batch", args=[self.pk])


class RunQuerySet(models.QuerySet):
    def audits(self):
        return self.filter(kind=RunKind.AUDIT)

    def validations(self):
        return self.filter(kind=RunKind.VALIDATION)

    def active(self):
        return self.filter(status__in=ACTIVE_STATUSES)

    def finished(self):
        return self.exclude(status__in=ACTIVE_STATUSES)

    def for_library(self, library):
        return self.filter(library=library)

    def newest_first(self):
        return self.order_by("-created_at", "-pk")

    def with_gap_counts(self):
        """Gap counts by severity, as correlated subqueries so only the rows shown are counted."""

        def count(severity):
            gaps = Gap.objects.filter(run=OuterRef("pk"), severity=severity).order_by().values("run")
            return Coalesce(Subquery(gaps.annotate(n=Count("pk")).values("n")), 0)

        return self.annotate(critical_count=count("critical"), warning_count=count("warning"), info_count=count("info"))

    def with_failure_counts(self):
        failures = (
            ExampleResult.objects.filter(document__run=OuterRef("pk"), status="failure")
            .order_by()
            .values("document__run")
        )
        return self.annotate(failure_count=Coalesce(Subquery(failures.annotate(n=Count("pk")).values("n")), 0))

    def queue(
        self,
        library,
        *,
        walkthrough=None,
        version=None,
        backend,
        user=None,
        origin="dashboard",
        options=None,
        previous_run=None,
        progress_total=0,
        batch=None,
    ) -> "Run":
        """A new run for a worker (the caller sends its message): an audit of the walkthrough given, else a
        validation (the caller sets its pages). It notes the docs commit it will read."""
        return self._new(
            library,
            walkthrough,
            library_version=version or library.default_version,
            backend=backend,
            status=RunStatus.QUEUED,
            started_by=user,
            origin=origin,
            options=options or {},
            previous_run=previous_run,
            progress_total=progress_total,
            docs_commit=library.current_docs_commit(),
            batch=batch,
        )

    def record_import(
        self,
        library,
        *,
        key,
        started_at,
        finished_at,
        walkthrough=None,
        version="",
        user=None,
        status=RunStatus.SUCCEEDED,
        error="",
        duration_seconds=None,
        progress_current=0,
        progress_total=0,
    ) -> "Run":
        """A run done elsewhere, read from its files (an audit of the walkthrough given, else a validation); it
        counts as created when it started, and the key keeps the same files from being imported twice."""
        return self._new(
            library,
            walkthrough,
            library_version=version,
            backend=RunBackend.IMPORTED,
            status=status,
            error=error,
            origin="imported",
            created_at=started_at,
            started_at=started_at,
            finished_at=finished_at,
            duration_seconds=duration_seconds,
            progress_current=progress_current,
            progress_total=progress_total,
            import_key=key,
            started_by=user,
        )

    def _new(self, library, walkthrough, **fields) -> "Run":
        """An audit when there is a walkthrough (noting, by its hash, which export of it was audited), else a
        validation."""
        return self.create(
            kind=RunKind.AUDIT if walkthrough is not None else RunKind.VALIDATION,
            library=library,
            walkthrough=walkthrough,
            walkthrough_hash=walkthrough.content_hash if walkthrough is not None else "",
            **fields,
        )

    def claim(self, pk) -> int | None:
        """Move a queued run to running and return its attempt number; None when another worker (or a
        redelivered message) already has it."""
        now = timezone.now()
        claimed = self.filter(pk=pk, status=RunStatus.QUEUED).update(
            status=RunStatus.RUNNING,
            started_at=Coalesce(F("started_at"), now),
            heartbeat_at=now,
            attempts=F("attempts") + 1,
        )
        return self.filter(pk=pk).values_list("attempts", flat=True).first() if claimed else None

    def give_back(self, pk, attempt: int, reason: str) -> bool:
        """Queue a running run again as the same attempt (its failure was our infrastructure's, not its own).
        False when it is no longer this attempt's (cancelled, or taken again meanwhile)."""
        return (
            self.filter(pk=pk, status=RunStatus.RUNNING, attempts=attempt).update(
                status=RunStatus.QUEUED, attempts=attempt - 1, queued_at=timezone.now(), progress_label=reason
            )
            == 1
        )

    def stale(self, seconds: float):
        """Running runs whose worker has not reported for a while: it died (SIGKILL, OOM, a lost machine)."""
        return self.filter(status=RunStatus.RUNNING, heartbeat_at__lt=timezone.now() - timedelta(seconds=seconds))

    def stuck_in_queue(self, seconds: float):
        """Queued runs no worker took for a while: their message may be gone (a broker that keeps nothing on disk
        restarted, or handed it to a worker that died)."""
        return self.filter(status=RunStatus.QUEUED, queued_at__lt=timezone.now() - timedelta(seconds=seconds))


class Run(models.Model):
    kind = models.CharField(max_length=20, choices=RunKind.choices)
    library = models.ForeignKey(Library, on_delete=models.CASCADE, related_name="runs")
    library_version = models.CharField(max_length=100, blank=True)
    walkthrough = models.ForeignKey(Walkthrough, null=True, blank=True, on_delete=models.CASCADE, related_name="runs")
    walkthrough_hash = models.CharField(max_length=64, blank=True, help_text="Content hash of the export audited.")
    doc_pages = models.ManyToManyField(DocPage, blank=True, related_name="runs")
    backend = models.CharField(max_length=20, choices=RunBackend.choices, default=RunBackend.RULES)
    status = models.CharField(max_length=20, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True)
    queued_at = models.DateTimeField(default=timezone.now, help_text="When its message was last sent to a worker.")
    progress_current = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    progress_label = models.CharField(max_length=500, blank=True, help_text="Current step or example.")
    last_command = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    duration_seconds = models.FloatField(null=True, blank=True)
    started_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    origin = models.CharField(max_length=20, default="dashboard")
    docs_commit = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)
    output_dir = models.CharField(max_length=500, blank=True)
    output_files = models.JSONField(default=list, blank=True)
    previous_run = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reruns")
    options = models.JSONField(default=dict, blank=True)
    usage = models.JSONField(null=True, blank=True, help_text="Token usage reported by the agent.")
    environment = models.JSONField(
        default=dict, blank=True, help_text="The machine the run's commands ran on: sandbox, Python, Node, network."
    )
    cost_usd = models.FloatField(null=True, blank=True)
    import_key = models.CharField(max_length=64, null=True, blank=True, unique=True)
    celery_task_id = models.CharField(max_length=100, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="How many times a worker took it.")
    batch = models.ForeignKey("Batch", null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["walkthrough", "-created_at"]), models.Index(fields=["library", "-created_at"])]
        permissions = [("start_run", "Can start, rerun and cancel runs"), ("share_run", "Can create share links")]

    def __str__(self):
        return f"Run #{self.pk} ({self.get_kind_display()})"

    def get_absolute_url(self):
        return reverse("run", args=[self.pk])

    @property
    def is_active(self):
        return self.status in ACTIVE_STATUSES

    @property
    def subject(self):
        if self.kind == RunKind.AUDIT:
            return self.walkthrough.title if self.walkthrough else "(walkthrough removed)"
        return ", ".join(page.page for page in self.doc_pages.all()) or "(no pages)"

    @property
    def severity_counts(self) -> dict:
        """Gap counts by severity, from with_gap_counts()."""
        return {"critical": self.critical_count, "warning": self.warning_count, "info": self.info_count}

    @property
    def finding_count(self):
        """Gaps or failing examples, from with_gap_counts() and with_failure_counts()."""
        return self.critical_count + self.warning_count + self.info_count + self.failure_count

    @property
    def progress_percent(self):
        if not self.progress_total:
            return 100 if not self.is_active else 0
        return min(100, round(100 * self.progress_current / self.progress_total))

    def elapsed(self) -> timedelta | None:
        if self.duration_seconds is not None:
            return timedelta(seconds=self.duration_seconds)
        if self.started_at:
            return (self.finished_at or timezone.now()) - self.started_at
        return None

    def output_path(self) -> Path:
        return Path(self.output_dir)

    def ensure_output_dir(self) -> Path:
        """The run's folder for its files. The random suffix keeps a rolled-back run's leftovers from ever
        being mistaken for a later run's files."""
        if not self.output_dir:
            # Page tasks of one validation run start at once: the first to set the folder wins (a guarded
            # update), and every task then uses the folder stored, never one of its own.
            candidate = str(settings.RUNS_DIR / f"{self.pk}-{secrets.token_hex(4)}")
            Run.objects.filter(pk=self.pk, output_dir="").update(output_dir=candidate)
            self.output_dir = Run.objects.values_list("output_dir", flat=True).get(pk=self.pk)
        path = self.output_path()
        path.mkdir(parents=True, exist_ok=True)
        return path

    def output_file(self, name: str) -> Path | None:
        """A file this run wrote, by its listed name; never anything outside the run's folder."""
        if not self.output_dir or name not in self.output_files:
            return None
        folder = self.output_path().resolve()
        path = (folder / name).resolve()
        return path if path.is_relative_to(folder) and path.is_file() else None

    def record_output_files(self):
        folder = self.output_path()
        if not self.output_dir or not folder.is_dir():
            return
        self.output_files = sorted(
            str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and not p.is_symlink()
        )
        Run.objects.filter(pk=self.pk).update(output_files=self.output_files)

    def report_progress(self, current=None, total=None, label=None, command=None):
        """Live progress; a plain update so a concurrent cancel is never overwritten."""
        fields = {"heartbeat_at": timezone.now()}
        for name, value in (
            ("progress_current", current),
            ("progress_total", total),
            ("progress_label", label),
            ("last_command", command),
        ):
            if value is not None:
                fields[name] = value[:500] if name == "progress_label" else value
                setattr(self, name, fields[name])
        Run.objects.filter(pk=self.pk).update(**fields)

    def record_environment(self, description: dict):
        """The machine the run's commands ran on (the first sandbox's description, for a validation's pages)."""
        if not self.environment:
            self.environment = description
            Run.objects.filter(pk=self.pk, environment={}).update(environment=description)

    def record_gap(self, seq: int, gap: GapFormat):
        """Store a reported gap once: a retried task reporting it again finds it already there."""
        stored, _ = Gap.objects.get_or_create(run=self, seq=seq, defaults=Gap.fields_for(self, gap))
        return stored

    def beat(self, attempt: int) -> bool:
        """The worker of this attempt is alive. False when the run is no longer this attempt's to run
        (cancelled, finished, or handed to another worker after this one was thought dead)."""
        return (
            Run.objects.filter(pk=self.pk, status=RunStatus.RUNNING, attempts=attempt).update(
                heartbeat_at=timezone.now()
            )
            == 1
        )

    def finish(self, status, error="", **fields) -> bool:
        """End a running run. Guarded, so a run already cancelled or finished stays as it is."""
        now = timezone.now()
        started = self.started_at or now
        updated = Run.objects.filter(pk=self.pk, status=RunStatus.RUNNING).update(
            status=status,
            error=error,
            finished_at=now,
            heartbeat_at=now,
            duration_seconds=(now - started).total_seconds(),
            **fields,
        )
        self.refresh_from_db()
        return updated == 1

    def request_cancel(self) -> bool:
        now = timezone.now()
        updated = Run.objects.filter(pk=self.pk, status__in=ACTIVE_STATUSES).update(
            status=RunStatus.CANCELLED, finished_at=now, error="Cancelled by a user."
        )
        self.refresh_from_db()
        return updated == 1

    def step_records(self) -> list[dict]:
        """How far the audit really got, step by step, from its audit file's execution log: each step's number,
        title, status ("done", "partly done"), what it left undone and what the auditor fixed to go on. Empty when the auditor kept no such
        record (the Claude agent, an imported file from older tools) or the file is unreadable."""
        if self.kind != RunKind.AUDIT or self.walkthrough is None:
            return []
        path = self.output_file(f"{self.walkthrough.walkthrough_id}_audit.json")
        try:
            log = json.loads(AuditResultFormat.model_validate_json(path.read_bytes()).execution_log) if path else []
        except (OSError, ValueError):
            return []
        return [
            {
                "number": record.get("step_number"),
                "title": record.get("title", ""),
                "status": record["status"],
                "not_done": record.get("not_done", []),
                "fixed": record.get("fixed", []),
            }
            for record in log
            if isinstance(record, dict) and record.get("status") in ("done", "partly done")
        ]

    def gaps_by_step(self, hide_quiet: bool = False):
        """Gaps grouped by step, each with its problem (for its triage state); without the quieted ones (false
        positive, won't fix) when hide_quiet."""
        grouped = {}
        for gap in self.gaps.select_related("problem"):
            if hide_quiet and gap.problem is not None and gap.problem.is_quiet:
                continue
            grouped.setdefault((gap.step_number, gap.step_title), []).append(gap)
        return sorted(grouped.items())


class GapQuerySet(models.QuerySet):
    def of_type(self, gap_type):
        return self.filter(gap_type=gap_type)

    def of_severity(self, severity):
        return self.filter(severity=severity)

    def for_library(self, library_id):
        return self.filter(run__library_id=library_id)

    def for_walkthrough(self, walkthrough_id):
        return self.filter(run__walkthrough_id=walkthrough_id)

    def search(self, text):
        return self.filter(
            Q(description__icontains=text)
            | Q(suggested_fix__icontains=text)
            | Q(context__icontains=text)
            | Q(step_title__icontains=text)
        )


class Gap(models.Model):
    """A gap an auditor reported on one step of one run (all Gap fields of formats.md)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="gaps")
    seq = models.PositiveIntegerField(help_text="Order in which the auditor reported it.")
    step_number = models.PositiveIntegerField()
    step_title = models.CharField(max_length=500, blank=True)
    gap_type = models.CharField(max_length=30, db_index=True)
    severity = models.CharField(max_length=20, db_index=True)
    description = models.TextField()
    suggested_fix = models.TextField(null=True, blank=True)
    context = models.TextField(null=True, blank=True)
    timestamp = models.DateTimeField()
    fingerprint = models.CharField(max_length=32, db_index=True, help_text="Same problem, same fingerprint.")
    rank = models.PositiveSmallIntegerField(default=0, help_text="3 critical, 2 warning, 1 info: sorts by severity.")
    problem = models.ForeignKey("Problem", null=True, blank=True, on_delete=models.SET_NULL, related_name="gaps")

    objects = GapQuerySet.as_manager()

    class Meta:
        ordering = ["run", "step_number", "seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="unique_gap_seq")]
        indexes = [models.Index(fields=["run", "step_number", "rank"]), models.Index(fields=["-rank", "-run"])]

    def __str__(self):
        return f"{self.severity} {self.gap_type} at step {self.step_number}"

    @staticmethod
    def fields_for(run: Run, gap: GapFormat) -> dict:
        walkthrough_id = run.walkthrough.walkthrough_id if run.walkthrough_id else ""
        return {
            **gap.model_dump(),
            "rank": GAP_SEVERITY.rank(gap.severity),
            "fingerprint": gap_fingerprint(
                run.library.name, walkthrough_id, gap.step_title, gap.gap_type, gap.description
            ),
        }

    def to_format(self) -> GapFormat:
        return GapFormat.model_validate({field: getattr(self, field) for field in GapFormat.model_fields})


class ValidationDocument(models.Model):
    """One document of a validation run: a page validated at one library version."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="documents")
    doc_page = models.ForeignKey(DocPage, null=True, blank=True, on_delete=models.SET_NULL, related_name="validations")
    page = models.CharField(max_length=500)
    library_name = models.CharField(max_length=200)
    version = models.CharField(max_length=100, blank=True)
    language = models.CharField(max_length=50, default="python")
    validation_timestamp = models.DateTimeField(null=True, blank=True)
    install_error = models.TextField(blank=True, help_text="Why the page could not be (fully) set up or validated.")
    setup_problems = models.JSONField(default=list, blank=True, help_text="What could not be set up, with logs.")
    environment = models.JSONField(default=dict, blank=True, help_text="The Python and distributions it ran on.")
    started_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True, help_text="The worker that validated it.")
    finished = models.BooleanField(default=False)
    import_key = models.CharField(max_length=64, null=True, blank=True, unique=True)

    class Meta:
        ordering = ["run", "page"]
        constraints = [models.UniqueConstraint(fields=["run", "page"], name="unique_document_page")]

    def __str__(self):
        return f"{self.page} in run #{self.run_id}"

    def claim(self) -> bool:
        """Start this document once; a redelivered task finds it already started."""
        return (
            ValidationDocument.objects.filter(pk=self.pk, started_at__isnull=True).update(started_at=timezone.now())
            == 1
        )

    def to_format(self) -> ValidationResultFormat:
        return ValidationResultFormat(
            page=self.page,
            library=self.library_name,
            version=self.version,
            language=self.language,
            validation_timestamp=self.validation_timestamp or timezone.now(),
            results=[result.to_format() for result in self.results.all()],
            environment=self.environment or None,
            setup_problems=self.setup_problems,
        )

    @staticmethod
    def outcome_fields(result: ValidationResultFormat) -> dict:
        """What a finished validation of the page stores besides its example results."""
        return {
            "validation_timestamp": result.validation_timestamp,
            "environment": result.environment.model_dump() if result.environment else {},
            "setup_problems": [problem.model_dump() for problem in result.setup_problems],
            "install_error": "; ".join(problem.message for problem in result.setup_problems),
        }

    @property
    def distributions(self) -> list[tuple[str, str]]:
        return sorted((self.environment or {}).get("distributions", {}).items(), key=lambda item: item[0].lower())

    def store_results(self, results) -> None:
        """Store example results once each; rerunning after a crash finds them already stored."""
        with transaction.atomic():
            for result in results:
                ExampleResult.objects.update_or_create(
                    document=self,
                    example_index=result.example_index,
                    defaults=ExampleResult.fields_for(self, result),
                )


class ExampleResultQuerySet(models.QuerySet):
    def failures(self):
        return self.filter(status="failure")

    def with_rank(self):
        """rank: the severity's rank (a failure without a severity counts as an error)."""
        return self.annotate(rank=rank_of(EXAMPLE_SEVERITY, missing="error"))

    def search(self, text):
        return self.filter(
            Q(error_message__icontains=text)
            | Q(code__icontains=text)
            | Q(context__icontains=text)
            | Q(suggestions__icontains=text)
        )


class ExampleResult(models.Model):
    """The outcome of one code example (all ExampleResult fields of formats.md)."""

    document = models.ForeignKey(ValidationDocument, on_delete=models.CASCADE, related_name="results")
    example_index = models.PositiveIntegerField()
    line = models.PositiveIntegerField(default=0)
    context = models.TextField(blank=True)
    code = models.TextField(blank=True)
    status = models.CharField(max_length=20, db_index=True)
    severity = models.CharField(max_length=20, null=True, blank=True)
    error_message = models.TextField(null=True, blank=True)
    suggestions = models.TextField(null=True, blank=True)
    execution_output = models.TextField(null=True, blank=True)
    depends_on_previous = models.BooleanField(default=False)
    depends_on_example_indices = models.JSONField(default=list, blank=True)
    actual_code_executed = models.TextField(blank=True)
    expected_output = models.TextField(null=True, blank=True, help_text="What the page shows, where it differs.")
    statements = models.PositiveIntegerField(null=True, blank=True, help_text="A doctest session's statements.")
    statements_run = models.PositiveIntegerField(null=True, blank=True)
    repeats_example = models.PositiveIntegerField(
        null=True, blank=True, help_text="The earlier example that failed on the same cause, counted there."
    )
    code_hash = models.CharField(max_length=16, blank=True, db_index=True)
    fingerprint = models.CharField(max_length=32, blank=True, db_index=True, help_text="Set on failures.")
    problem = models.ForeignKey(
        "Problem", null=True, blank=True, on_delete=models.SET_NULL, related_name="example_results"
    )

    objects = ExampleResultQuerySet.as_manager()

    class Meta:
        ordering = ["document", "example_index"]
        constraints = [models.UniqueConstraint(fields=["document", "example_index"], name="unique_example_result")]

    def __str__(self):
        return f"{self.document.page} #{self.example_index}: {self.status}"

    @staticmethod
    def fields_for(document: "ValidationDocument", result: ExampleResultFormat) -> dict:
        failed = result.status == "failure"
        return {
            **result.model_dump(exclude={"example_index"}),
            "code_hash": code_hash(result.code),
            "fingerprint": example_fingerprint(document.library_name, document.page, result.code, result.error_message)
            if failed
            else "",
        }

    def to_format(self) -> ExampleResultFormat:
        return ExampleResultFormat.model_validate(
            {field: getattr(self, field) for field in ExampleResultFormat.model_fields}
        )
