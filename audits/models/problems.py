"""Problems: one per finding across runs, with a lifecycle computed when each run completes, and triage."""

from django.conf import settings
from django.db import models, transaction
from django.db.models import Count, Q
from django.urls import reverse
from django.utils import timezone

from audits.models.runs import SEVERITY_SCALES, ExampleResult, Gap, Run, RunKind, RunStatus
from stackbench.formats.results import EXAMPLE_SEVERITY, GATE_LEVELS
from walkthroughs.models import DocPage, Library, Walkthrough


class Lifecycle(models.TextChoices):
    NEW = "new", "New"
    ONGOING = "ongoing", "Ongoing"
    FIXED = "fixed", "Fixed"
    REGRESSED = "regressed", "Regressed"


class TriageState(models.TextChoices):
    OPEN = "open", "Open"
    CONFIRMED = "confirmed", "Confirmed"
    FALSE_POSITIVE = "false_positive", "False positive"
    WONT_FIX = "wont_fix", "Won't fix"
    FIXED = "fixed", "Fixed (verified by a later run)"


QUIET_STATES = (TriageState.FALSE_POSITIVE, TriageState.WONT_FIX)
# What people may choose; fixed is set by the system when a later complete run no longer sees the problem.
HAND_TRIAGE_STATES = [(value, label) for value, label in TriageState.choices if value != TriageState.FIXED]
ACTIVE_LIFECYCLES = (Lifecycle.NEW, Lifecycle.ONGOING, Lifecycle.REGRESSED)


class ProblemQuerySet(models.QuerySet):
    def open(self):
        return self.filter(triage_state__in=(TriageState.OPEN, TriageState.CONFIRMED))

    def for_library(self, library):
        return self.filter(library=library)

    def for_walkthrough(self, walkthrough):
        return self.filter(walkthrough=walkthrough)

    def new_or_regressed(self):
        return self.filter(lifecycle__in=(Lifecycle.NEW, Lifecycle.REGRESSED))

    def assigned_to(self, user):
        return self.filter(assignee=user)


class Problem(models.Model):
    """One problem, seen in one or more runs: its gaps or failing examples are its sightings."""

    fingerprint = models.CharField(max_length=32, unique=True)
    kind = models.CharField(max_length=20, choices=RunKind.choices)
    library = models.ForeignKey(Library, on_delete=models.CASCADE, related_name="problems")
    walkthrough = models.ForeignKey(
        Walkthrough, null=True, blank=True, on_delete=models.CASCADE, related_name="problems"
    )
    doc_page = models.ForeignKey(DocPage, null=True, blank=True, on_delete=models.CASCADE, related_name="problems")
    step_number = models.PositiveIntegerField(null=True, blank=True)
    step_title = models.CharField(max_length=500, blank=True)
    example_index = models.PositiveIntegerField(null=True, blank=True)
    code_hash = models.CharField(max_length=16, blank=True, db_index=True)
    gap_type = models.CharField(max_length=30, blank=True)
    severity = models.CharField(max_length=20)
    rank = models.PositiveSmallIntegerField(default=0)
    title = models.TextField(help_text="The latest sighting's description or error.")
    first_run = models.ForeignKey(Run, null=True, on_delete=models.SET_NULL, related_name="+")
    last_run = models.ForeignKey(Run, null=True, on_delete=models.SET_NULL, related_name="+")
    first_seen_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    sightings = models.PositiveIntegerField(default=1, help_text="Runs that saw it.")
    lifecycle = models.CharField(max_length=20, choices=Lifecycle.choices, default=Lifecycle.NEW, db_index=True)
    lifecycle_run = models.ForeignKey(
        Run,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The run that fixed it or saw it come back.",
    )
    triage_state = models.CharField(max_length=20, choices=TriageState.choices, default=TriageState.OPEN, db_index=True)
    triage_reason = models.TextField(blank=True)
    quiet_rank = models.PositiveSmallIntegerField(default=0, help_text="Severity when it was quieted.")
    reopened_reason = models.TextField(blank=True)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="assigned_problems"
    )
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProblemQuerySet.as_manager()

    class Meta:
        ordering = ["-rank", "-last_seen_at"]
        indexes = [
            models.Index(fields=["walkthrough", "step_number"]),
            models.Index(fields=["library", "triage_state"]),
        ]
        permissions = [("triage_problem", "Can triage and comment on problems")]

    def __str__(self):
        return self.title[:80]

    def get_absolute_url(self):
        return reverse("problem", args=[self.pk])

    @property
    def is_quiet(self):
        return self.triage_state in QUIET_STATES

    @property
    def severity_scale(self):
        return SEVERITY_SCALES[self.kind]

    def note_sighting(self, run: Run, seen_at, fields: dict):
        """A later run saw this problem again."""
        was_fixed = self.lifecycle == Lifecycle.FIXED
        rose = self.is_quiet and fields["rank"] > self.quiet_rank
        for name, value in fields.items():
            setattr(self, name, value)
        self.last_run, self.last_seen_at = run, seen_at
        self.lifecycle = Lifecycle.REGRESSED if was_fixed else Lifecycle.ONGOING
        if was_fixed:
            self.lifecycle_run = run
            self.log_event(None, "lifecycle", "fixed", "regressed", f"Seen again in run #{run.pk}.")
        if was_fixed and self.triage_state == TriageState.FIXED:
            self.reopen(f"Seen again in run #{run.pk} after it was fixed.")
        elif rose:
            before = self.severity_scale.name_of(self.quiet_rank) or "unknown"
            self.reopen(f"Its severity rose from {before} to {self.severity} in run #{run.pk}.")
        self.save()

    def set_state(self, actor, state: str, reason: str = ""):
        """Triage. False positive and won't fix need a reason; they keep the problem quiet in later runs unless
        its severity rises above what it was when it was quieted."""
        if state not in TriageState.values:
            raise ValueError(f"unknown state {state!r}; use one of: {', '.join(TriageState.values)}")
        if state == TriageState.FIXED and self.triage_state != TriageState.FIXED:
            raise ValueError("fixed is set by the system, when a later complete run no longer sees the problem")
        reason = reason.strip()
        if state in QUIET_STATES and not reason:
            raise ValueError(f"say why it is {TriageState(state).label.lower()}")
        if state == self.triage_state and reason == self.triage_reason:
            return False
        self.log_event(actor, "state", self.triage_state, state, reason)
        self.triage_state, self.triage_reason = state, reason
        self.quiet_rank = self.rank if state in QUIET_STATES else 0
        self.save(update_fields=["triage_state", "triage_reason", "quiet_rank", "updated_at"])
        return True

    def last_state_change(self) -> "ProblemEvent | None":
        return self.events.filter(kind="state").order_by("at", "pk").last()

    def undo_last_state(self, actor):
        """Put back the state (and its reason) the problem had before the actor's last triage change."""
        last = self.last_state_change()
        if last is None or last.actor_id != getattr(actor, "pk", None):
            raise ValueError("there is no triage change of yours to undo here")
        earlier = self.events.filter(kind="state", pk__lt=last.pk).order_by("at", "pk").last()
        reason = earlier.text if earlier and earlier.after == last.before else ""
        self.log_event(actor, "state", self.triage_state, last.before, f"Undid the change to {last.after}.")
        self.triage_state, self.triage_reason = last.before, reason
        self.quiet_rank = self.rank if last.before in QUIET_STATES else 0
        self.save(update_fields=["triage_state", "triage_reason", "quiet_rank", "updated_at"])

    def assign(self, actor, assignee):
        if assignee == self.assignee:
            return False
        before = self.assignee.get_username() if self.assignee else ""
        self.log_event(actor, "assignee", before, assignee.get_username() if assignee else "")
        self.assignee = assignee
        self.save(update_fields=["assignee", "updated_at"])
        return True

    def add_comment(self, author, text: str) -> "ProblemComment":
        text = text.strip()
        if not text:
            raise ValueError("the comment is empty")
        comment = self.comments.create(author=author, text=text)
        self.log_event(author, "comment", "", "", text[:200])
        return comment

    def reopen(self, reason: str):
        self.log_event(None, "state", self.triage_state, TriageState.OPEN, reason)
        self.triage_state, self.reopened_reason, self.quiet_rank = TriageState.OPEN, reason, 0

    def log_event(self, actor, kind: str, before: str, after: str, text: str = ""):
        ProblemEvent.objects.create(
            problem=self, actor=actor, kind=kind, before=before or "", after=after or "", text=text
        )


class ProblemComment(models.Model):
    """Internal discussion of a problem (markdown); never shown on shared pages."""

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    text = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]


class ProblemEvent(models.Model):
    """The history of a problem: who changed what and when (actor is empty for changes a run made)."""

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(default=timezone.now)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    kind = models.CharField(max_length=30)  # state, assignee, lifecycle, comment
    before = models.CharField(max_length=200, blank=True)
    after = models.CharField(max_length=200, blank=True)
    text = models.TextField(blank=True)

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self):
        return f"{self.kind}: {self.before} -> {self.after}"


def _rank(finding) -> int:
    if isinstance(finding, Gap):
        return finding.rank
    return EXAMPLE_SEVERITY.rank(finding.severity or "error")


def _finding_fields(run: Run, finding) -> dict:
    """What a problem takes from its latest sighting."""
    if isinstance(finding, Gap):
        return {
            "step_number": finding.step_number,
            "step_title": finding.step_title,
            "gap_type": finding.gap_type,
            "severity": finding.severity,
            "rank": finding.rank,
            "title": finding.description,
        }
    return {
        "example_index": finding.example_index,
        "code_hash": finding.code_hash,
        "doc_page_id": finding.document.doc_page_id,
        "severity": finding.severity or "error",
        "rank": _rank(finding),
        "title": finding.error_message or "",
    }


@transaction.atomic
def record_problems(run: Run):
    """Fold a finished run's findings into problems: new, ongoing, regressed, and, when the run was complete,
    fixed for those it no longer saw. Safe to call twice for the same run."""
    if run.kind == RunKind.AUDIT:
        findings = list(run.gaps.all())
    else:
        findings = list(ExampleResult.objects.failures().filter(document__run=run).select_related("document"))
    worst: dict[str, object] = {}
    for finding in findings:
        if finding.fingerprint and (
            finding.fingerprint not in worst or _rank(finding) > _rank(worst[finding.fingerprint])
        ):
            worst[finding.fingerprint] = finding
    seen_at = run.started_at or run.created_at
    existing = {p.fingerprint: p for p in Problem.objects.select_for_update().filter(fingerprint__in=worst)}
    touched = []
    for fingerprint, finding in worst.items():
        problem = existing.get(fingerprint)
        fields = _finding_fields(run, finding)
        if problem is None:
            problem = Problem.objects.create(
                fingerprint=fingerprint,
                kind=run.kind,
                library=run.library,
                walkthrough=run.walkthrough,
                first_run=run,
                last_run=run,
                first_seen_at=seen_at,
                last_seen_at=seen_at,
                **fields,
            )
        elif problem.last_run_id != run.pk and seen_at >= problem.last_seen_at:
            problem.note_sighting(run, seen_at, fields)
        elif seen_at < problem.first_seen_at:
            problem.first_run, problem.first_seen_at = run, seen_at
            problem.save(update_fields=["first_run", "first_seen_at"])
        touched.append(problem)
        finding.__class__.objects.filter(**_findings_of(run), fingerprint=fingerprint).update(problem=problem)
    _recount_sightings(run.kind, touched)
    if run_is_complete(run):
        _mark_fixed(run, set(worst), seen_at)


def _findings_of(run: Run) -> dict:
    return {"run": run} if run.kind == RunKind.AUDIT else {"document__run": run}


def _recount_sightings(kind, problems):
    if not problems:
        return
    if kind == RunKind.AUDIT:
        counts = dict(
            Gap.objects.filter(problem__in=problems)
            .values("problem")
            .annotate(n=Count("run", distinct=True))
            .values_list("problem", "n")
        )
    else:
        counts = dict(
            ExampleResult.objects.filter(problem__in=problems)
            .values("problem")
            .annotate(n=Count("document__run", distinct=True))
            .values_list("problem", "n")
        )
    for problem in problems:
        Problem.objects.filter(pk=problem.pk).update(sightings=counts.get(problem.pk, 1))


def gate_problems(run: Run, fail_on: str) -> list[Problem]:
    """Problems this run saw at or above a severity that are not triaged away (false positive, won't fix): all
    of them for an "open-…" level, only those it saw first or saw come back for a "new-…" one."""
    if fail_on not in GATE_LEVELS:
        raise ValueError(f"unknown threshold {fail_on!r}; use one of: {', '.join(GATE_LEVELS)}")
    threshold = GATE_LEVELS[fail_on]
    if run.kind == RunKind.AUDIT:
        seen = Gap.objects.filter(run=run, rank__gte=threshold).values("problem")
    else:
        severities = [name for name in EXAMPLE_SEVERITY if EXAMPLE_SEVERITY.rank(name) >= threshold]
        seen = (
            ExampleResult.objects.failures()
            .filter(document__run=run)
            .filter(Q(severity__in=severities) | Q(severity__isnull=True))
            .values("problem")
        )
    problems = Problem.objects.filter(pk__in=seen).exclude(triage_state__in=QUIET_STATES)
    if fail_on.startswith("new-"):
        problems = problems.filter(Q(first_run=run) | Q(lifecycle=Lifecycle.REGRESSED, lifecycle_run=run))
    return list(problems.order_by("-rank", "pk"))


def run_is_complete(run: Run) -> bool:
    """Only a complete run can show a problem is fixed: a partial, failed or cancelled run never does."""
    if run.status != RunStatus.SUCCEEDED:
        return False
    if run.kind == RunKind.AUDIT:
        return run.progress_total > 0 and run.progress_current >= run.progress_total
    return True


def _mark_fixed(run: Run, seen: set[str], seen_at):
    if run.kind == RunKind.AUDIT:
        candidates = Problem.objects.filter(kind=RunKind.AUDIT, walkthrough=run.walkthrough)
    else:
        clean_pages = run.documents.filter(finished=True, install_error="").values("doc_page_id")
        candidates = Problem.objects.filter(kind=RunKind.VALIDATION, doc_page_id__in=clean_pages)
    fixed = list(
        candidates.filter(lifecycle__in=ACTIVE_LIFECYCLES, last_seen_at__lte=seen_at).exclude(fingerprint__in=seen)
    )
    for problem in fixed:
        problem.log_event(None, "lifecycle", problem.lifecycle, Lifecycle.FIXED, f"Not seen in run #{run.pk}.")
        if problem.triage_state in (TriageState.OPEN, TriageState.CONFIRMED):
            problem.log_event(None, "state", problem.triage_state, TriageState.FIXED, f"Verified by run #{run.pk}.")
            problem.triage_state = TriageState.FIXED
        problem.lifecycle, problem.lifecycle_run = Lifecycle.FIXED, run
        problem.save(update_fields=["lifecycle", "lifecycle_run", "triage_state", "updated_at"])
