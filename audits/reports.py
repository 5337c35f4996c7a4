"""Read-side summaries the pages share: the per-step gap timeline, each step's gap history, what changed
between two runs, a run's CI gate verdict, and a library's open findings and trend. Each is a fixed number of
queries, whatever the number of runs or gaps."""

from dataclasses import dataclass, field

from django.db.models import Count, F, Max, OuterRef, Q, Subquery, Window, prefetch_related_objects
from django.db.models.functions import RowNumber

from audits.models import (
    QUIET_STATES,
    ExampleResult,
    Gap,
    Problem,
    Run,
    RunKind,
    RunStatus,
    ValidationDocument,
    gate_problems,
)
from stackbench.formats.results import EXAMPLE_SEVERITY
from stackbench.formats.walkthrough import GAP_SEVERITY
from walkthroughs.models import DocPage, Walkthrough


@dataclass
class TimelineCell:
    run: Run
    step_number: int
    state: str  # critical, warning, info, passed, unreached, running
    count: int = 0

    @property
    def symbol(self):
        return {"critical": "▲", "warning": "◆", "info": "●", "passed": "✓", "unreached": "·", "running": "…"}[
            self.state
        ]

    @property
    def label(self):
        if self.state in GAP_SEVERITY:
            return f"Run #{self.run.pk}, step {self.step_number}: {self.count} gap(s), worst {self.state}"
        words = {"passed": "passed", "unreached": "not reached", "running": "not reached yet"}
        return f"Run #{self.run.pk}, step {self.step_number}: {words[self.state]}"


@dataclass
class Timeline:
    runs: list[Run]
    rows: list[tuple[object, list[TimelineCell]]] = field(default_factory=list)


def step_timeline(walkthrough: Walkthrough, steps, limit: int | None = 40) -> Timeline:
    """Steps down, the walkthrough's audit runs across (oldest first), each cell the worst severity found."""
    runs_query = walkthrough.runs.audits().exclude(status=RunStatus.QUEUED).newest_first()
    runs = list(
        (runs_query[:limit] if limit else runs_query).only(
            "pk", "walkthrough_id", "status", "progress_current", "progress_total", "created_at"
        )
    )[::-1]
    worst = {
        (row["run_id"], row["step_number"]): (row["worst"], row["n"])
        for row in Gap.objects.filter(run__in=[r.pk for r in runs])
        .values("run_id", "step_number")
        .annotate(worst=Max("rank"), n=Count("id"))
    }
    timeline = Timeline(runs=runs)
    for step in steps:
        cells = []
        for run in runs:
            rank, count = worst.get((run.pk, step.position), (0, 0))
            if rank:
                state = GAP_SEVERITY.name_of(rank)
            elif step.position <= run.progress_current:
                state = "passed"
            else:
                state = "running" if run.is_active else "unreached"
            cells.append(TimelineCell(run, step.position, state, count))
        timeline.rows.append((step, cells))
    return timeline


def step_histories(walkthrough: Walkthrough) -> dict[int, list]:
    """For each step: every distinct problem ever found there, when it first and last appeared, in how many runs."""
    histories: dict[int, list] = {}
    for problem in (
        Problem.objects.for_walkthrough(walkthrough)
        .filter(kind=RunKind.AUDIT)
        .order_by("step_number", "-rank", "first_seen_at")
    ):
        histories.setdefault(problem.step_number, []).append(problem)
    return histories


@dataclass
class Comparison:
    previous: Run
    new: list = field(default_factory=list)
    gone: list = field(default_factory=list)
    still: list = field(default_factory=list)


def compare_runs(run: Run, previous: Run | None) -> Comparison | None:
    """Findings new in this run, gone since the previous one, and still present, matched by fingerprint."""
    if previous is None:
        return None
    if run.kind == RunKind.AUDIT:

        def findings(r):
            return list(r.gaps.order_by("step_number", "seq"))
    else:

        def findings(r):
            return list(
                ExampleResult.objects.failures()
                .filter(document__run=r)
                .select_related("document")
                .order_by("document__page", "example_index")
            )

    mine, theirs = findings(run), findings(previous)
    mine_keys, their_keys = {f.fingerprint for f in mine}, {f.fingerprint for f in theirs}
    return Comparison(
        previous=previous,
        new=[f for f in mine if f.fingerprint not in their_keys],
        gone=[f for f in theirs if f.fingerprint not in mine_keys],
        still=[f for f in mine if f.fingerprint in their_keys],
    )


@dataclass
class GateReport:
    """A run judged for CI at a gate level (one of GATE_LEVELS), the same for the API and `stackbench gate`."""

    run: Run
    fail_on: str
    problems: list[Problem]  # worst first

    @property
    def passed(self) -> bool:
        # A run that is still going, failed or was cancelled has not shown the docs are fine.
        return self.run.status == RunStatus.SUCCEEDED and not self.problems


def gate_report(run: Run, fail_on: str) -> GateReport:
    """The problems come with what a listing of them shows (library, walkthrough or page, assignee)."""
    problems = gate_problems(run, fail_on)
    prefetch_related_objects(problems, "library", "walkthrough", "doc_page", "assignee")
    return GateReport(run, fail_on, problems)


def latest_finished_audits(walkthroughs):
    """Each walkthrough annotated with the id of its latest finished audit run."""
    latest = (
        Run.objects.filter(walkthrough=OuterRef("pk"), kind=RunKind.AUDIT, status=RunStatus.SUCCEEDED)
        .order_by("-created_at", "-pk")
        .values("pk")[:1]
    )
    return walkthroughs.annotate(latest_run_id=Subquery(latest))


# A validation run that failed failed on some of its pages: the others were validated all the same.
VALIDATED = (RunStatus.SUCCEEDED, RunStatus.FAILED)


def latest_documents(pages):
    """Each doc page annotated with its latest finished validation document (in a run that finished, even one
    that failed on another page) and that document's install error: why a page with no results has none."""
    latest = ValidationDocument.objects.filter(
        doc_page=OuterRef("pk"), finished=True, run__status__in=VALIDATED
    ).order_by("-run__created_at", "-pk")
    return pages.annotate(
        latest_document_id=Subquery(latest.values("pk")[:1]),
        latest_install_error=Subquery(latest.values("install_error")[:1]),
    )


def gap_counts_by_run(run_ids) -> dict[int, dict[str, int]]:
    counts: dict[int, dict[str, int]] = {}
    for row in Gap.objects.filter(run_id__in=run_ids).values("run_id", "severity").annotate(n=Count("id")):
        counts.setdefault(row["run_id"], {})[row["severity"]] = row["n"]
    return counts


def result_counts_by_document(document_ids) -> dict[int, dict[str, int]]:
    counts: dict[int, dict[str, int]] = {}
    rows = (
        ExampleResult.objects.filter(document_id__in=document_ids)
        .values("document_id")
        .annotate(
            passed=Count("id", filter=Q(status="success")),
            failed=Count("id", filter=Q(status="failure")),
            skipped=Count("id", filter=Q(status="skipped")),
            **{severity: Count("id", filter=Q(status="failure", severity=severity)) for severity in EXAMPLE_SEVERITY},
        )
    )
    for row in rows:
        counts[row.pop("document_id")] = row
    return counts


@dataclass
class LibraryOverview:
    library: object
    recent_runs: list = field(default_factory=list)
    open_gaps: dict = field(default_factory=dict)
    failing_examples: dict = field(default_factory=dict)
    gap_trend: list = field(default_factory=list)  # gaps of each of the last finished audit runs, oldest first
    failure_trend: list = field(default_factory=list)  # failing examples of each of the last validation runs

    @property
    def open_total(self):
        return sum(self.open_gaps.values()) + sum(self.failing_examples.values())

    @property
    def has_trend(self) -> bool:
        return bool(self.gap_trend or self.failure_trend)

    @property
    def gap_sparkline(self) -> str:
        return sparkline_points(self.gap_trend, top=self._top)

    @property
    def failure_sparkline(self) -> str:
        return sparkline_points(self.failure_trend, top=self._top)

    @property
    def _top(self) -> int:
        """One scale for both lines, so their heights compare."""
        return max(self.gap_trend + self.failure_trend + [1])


def library_overviews(libraries, recent=3, trend_runs=12) -> list[LibraryOverview]:
    """Latest runs, open findings (those in the latest finished run of each walkthrough and page) and the
    number of findings in each of the last runs, for every library at once."""
    overviews = {library.pk: LibraryOverview(library) for library in libraries}
    ids = list(overviews)
    ranked = Run.objects.filter(library_id__in=ids).annotate(
        rank=Window(RowNumber(), partition_by=[F("library_id")], order_by=[F("created_at").desc(), F("pk").desc()])
    )
    # Pick the runs first, then count their gaps: counting inside the ranked query would count every run's.
    recent_ids = ranked.filter(rank__lte=trend_runs + recent).values("pk")
    runs = list(
        Run.objects.filter(pk__in=recent_ids)
        .select_related("walkthrough")
        .with_gap_counts()
        .with_failure_counts()
        .order_by("library_id", "-created_at", "-pk")
    )
    by_library: dict[int, list[Run]] = {}
    for run in runs:
        by_library.setdefault(run.library_id, []).append(run)
    audit_runs = latest_finished_audits(Walkthrough.objects.filter(library_id__in=ids)).values_list(
        "library_id", "latest_run_id"
    )
    latest_audit = {run_id: library_id for library_id, run_id in audit_runs if run_id}
    quiet = Q(problem__triage_state__in=QUIET_STATES)
    for row in (
        Gap.objects.filter(run_id__in=latest_audit)
        .exclude(quiet)
        .values("run__library_id", "severity")
        .annotate(n=Count("id"))
    ):
        overviews[row["run__library_id"]].open_gaps[row["severity"]] = row["n"]
    documents = latest_documents(DocPage.objects.filter(library_id__in=ids)).values_list(
        "library_id", "latest_document_id"
    )
    latest_docs = {doc_id: library_id for library_id, doc_id in documents if doc_id}
    for row in (
        ExampleResult.objects.failures()
        .filter(document_id__in=latest_docs)
        .exclude(quiet)
        .values("document__doc_page__library_id", "severity")
        .annotate(n=Count("id"))
    ):
        overviews[row["document__doc_page__library_id"]].failing_examples[row["severity"] or "error"] = row["n"]
    for library_id, library_runs in by_library.items():
        overview = overviews[library_id]
        overview.recent_runs = library_runs[:recent]
        finished = [r for r in library_runs if not r.is_active]
        audits = [r for r in finished if r.kind == RunKind.AUDIT][:trend_runs]
        validations = [r for r in finished if r.kind == RunKind.VALIDATION][:trend_runs]
        overview.gap_trend = [r.finding_count for r in reversed(audits)]
        overview.failure_trend = [r.finding_count for r in reversed(validations)]
    return list(overviews.values())


def sparkline_points(values: list[int], width: int = 120, height: int = 28, top: int | None = None) -> str:
    if not values:
        return ""
    top = top or max(values) or 1
    step = width / max(len(values) - 1, 1)
    return " ".join(f"{i * step:.1f},{height - 2 - (v / top) * (height - 4):.1f}" for i, v in enumerate(values))
