"""The JSON API for CI systems and scripts (django-ninja): token authentication (Authorization: Bearer <token>,
acting with the token's user's permissions), an OpenAPI document at /api/v1/openapi.json, and the same
actions as the dashboard. Finding shapes reuse the file formats (Gap, ExampleResult) rather than restate them.

Just past 500 lines, on purpose: one module is one OpenAPI document, each endpoint a few lines beside its schema;
the filtering and the actions it calls live in the apps' forms, models and actions."""

from datetime import datetime
from typing import Annotated, Literal

from django import forms
from django.contrib.auth import get_user_model
from django.http import FileResponse
from django.shortcuts import get_object_or_404
from ninja import NinjaAPI, Query, Router, Schema, Status
from ninja.errors import HttpError, ValidationError
from ninja.security import HttpBearer
from pydantic import Field, StringConstraints

from audits.actions import RunNotQueued, RunNotStarted, do_run_everything, do_start_audit, do_start_validation
from audits.forms import GapApiFilterForm, ProblemApiFilterForm, RunApiFilterForm
from audits.models import ApiToken, ExampleResult, Gap, Problem, Run, RunKind
from audits.reports import gate_report
from stackbench.formats.results import DEFAULT_GATE_LEVEL, GATE_LEVELS
from stackbench.formats.results import ExampleResult as ExampleResultFormat
from stackbench.formats.walkthrough import Gap as GapFormat
from stackbench_site.celery import QueueUnreachable
from stackbench_site.configuration import claude_unavailable_reason
from stackbench_site.queries import MAX_ID, QueryForm
from walkthroughs.models import Library, Walkthrough
from walkthroughs.tasks import start_sync

MAX_PAGE = 200
MAX_OFFSET = 10_000_000
# Ids are 64-bit in every database; a larger number in a URL is simply not found, never an overflow.
Id = Annotated[int, Field(ge=1, le=MAX_ID)]
GateLevel = Literal[tuple(GATE_LEVELS)]


# PostgreSQL text cannot hold NUL: a name or a reason with one is malformed input (422), never a 500. Said in the
# schema, so clients (and schema-driven fuzzers) know it.
NO_NUL = r"^[^\x00]*$"
Text = Annotated[str, StringConstraints(pattern=NO_NUL)]


class TokenAuth(HttpBearer):
    def authenticate(self, request, token):
        user = ApiToken.authenticate(token)
        if user is not None:
            request.user = user
        return user


COMMON_RESPONSES = {
    "401": {
        "description": "No token, or not a valid one",
        "content": {
            "application/json": {
                "schema": {"type": "object", "properties": {"detail": {"type": "string"}}, "required": ["detail"]}
            }
        },
    },
    "422": {
        "description": "The request does not match this operation's parameters",
        "content": {
            "application/json": {
                "schema": {"type": "object", "properties": {"detail": {"type": "array"}}, "required": ["detail"]}
            }
        },
    },
}


class StackbenchAPI(NinjaAPI):
    def get_openapi_schema(self, *args, **kwargs):
        """Every operation can answer 401 (token) and 422 (invalid input); say so once for all of them."""
        schema = super().get_openapi_schema(*args, **kwargs)
        for operations in schema["paths"].values():
            for operation in operations.values():
                for status, response in COMMON_RESPONSES.items():
                    operation.setdefault("responses", {}).setdefault(status, response)
        return schema


api = StackbenchAPI(
    title="Stackbench API",
    version="1",
    auth=TokenAuth(),
    docs_url=None,
    urls_namespace="api",
    description="Where a library's docs fail the people who follow them: libraries, runs, gaps and "
    "problems, for CI systems.",
)


class Page(Schema):
    limit: int = Field(50, ge=1, le=MAX_PAGE)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)


class ErrorOut(Schema):
    detail: str


class LibraryOut(Schema):
    id: int
    name: str
    pypi_name: str
    default_version: str
    default_backend: str
    docs_repo: str
    docs_branch: str
    docs_folder: str


class RunOut(Schema):
    id: int
    kind: str
    status: str
    library: str
    library_version: str
    walkthrough_id: str | None
    doc_pages: list[str]
    backend: str
    progress_current: int
    progress_total: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    duration_seconds: float | None
    error: str
    docs_commit: str
    previous_run_id: int | None
    files: list[str]
    url: str

    @staticmethod
    def of(run: Run) -> "RunOut":
        return RunOut(
            id=run.pk,
            kind=run.kind,
            status=run.status,
            library=run.library.name,
            library_version=run.library_version,
            walkthrough_id=run.walkthrough.walkthrough_id if run.walkthrough_id else None,
            doc_pages=[page.page for page in run.doc_pages.all()],
            backend=run.backend,
            progress_current=run.progress_current,
            progress_total=run.progress_total,
            created_at=run.created_at,
            started_at=run.started_at,
            finished_at=run.finished_at,
            duration_seconds=run.duration_seconds,
            error=run.error,
            docs_commit=run.docs_commit,
            previous_run_id=run.previous_run_id,
            files=run.output_files,
            url=run.get_absolute_url(),
        )


class AuditRunIn(Schema):
    kind: Literal["audit"]
    walkthrough_id: Text = Field(min_length=1, max_length=200, description="The walkthrough id (its file stem)")
    version: Text | None = Field(None, max_length=100)
    backend: Literal["rules", "claude"] | None = None
    timeout: int | None = Field(None, ge=1, le=3600)


class ValidationRunIn(Schema):
    kind: Literal["validation"]
    library: Text = Field(min_length=1, max_length=200, description="The library's name")
    pages: list[Text] | None = Field(None, description="Doc pages to validate (default: all of the library's)")
    version: Text | None = Field(None, max_length=100)
    timeout: int | None = Field(None, ge=1, le=3600)


StartRunIn = Annotated[AuditRunIn | ValidationRunIn, Field(discriminator="kind")]


class GapOut(GapFormat):
    id: int
    run_id: int
    problem_id: int | None


class ExampleFailureOut(ExampleResultFormat):
    id: int
    run_id: int
    page: str
    problem_id: int | None


class ProblemOut(Schema):
    id: int
    kind: str
    library: str
    walkthrough_id: str | None
    doc_page: str | None
    step_number: int | None
    step_title: str
    example_index: int | None
    gap_type: str
    severity: str
    title: str
    first_run_id: int | None
    last_run_id: int | None
    first_seen_at: datetime
    last_seen_at: datetime
    sightings: int
    lifecycle: str
    triage_state: str
    triage_reason: str
    assignee: str | None
    url: str

    @staticmethod
    def of(problem: Problem) -> "ProblemOut":
        return ProblemOut(
            id=problem.pk,
            kind=problem.kind,
            library=problem.library.name,
            walkthrough_id=problem.walkthrough.walkthrough_id if problem.walkthrough_id else None,
            doc_page=problem.doc_page.page if problem.doc_page_id else None,
            step_number=problem.step_number,
            step_title=problem.step_title,
            example_index=problem.example_index,
            gap_type=problem.gap_type,
            severity=problem.severity,
            title=problem.title,
            first_run_id=problem.first_run_id,
            last_run_id=problem.last_run_id,
            first_seen_at=problem.first_seen_at,
            last_seen_at=problem.last_seen_at,
            sightings=problem.sightings,
            lifecycle=problem.lifecycle,
            triage_state=problem.triage_state,
            triage_reason=problem.triage_reason,
            assignee=problem.assignee.get_username() if problem.assignee else None,
            url=problem.get_absolute_url(),
        )


class QuietingPatch(Schema):
    triage_state: Literal["false_positive", "wont_fix"]
    reason: Text = Field(min_length=1, max_length=2000, pattern=r"\S", description="Why: required to quiet a problem")
    assignee: Text | None = Field(None, description="A username; an empty string unassigns")


class StatePatch(Schema):
    # "fixed" is set by the system when a later complete run no longer sees the problem, never by hand.
    triage_state: Literal["open", "confirmed"] | None = None
    reason: Text = Field("", max_length=2000)
    assignee: Text | None = Field(None, description="A username; an empty string unassigns")


ProblemPatch = QuietingPatch | StatePatch


class GateOut(Schema):
    run_id: int
    fail_on: str
    passed: bool
    status: str
    problems: list[ProblemOut]


def filters(form_class: type[QueryForm], request) -> QueryForm:
    """A list's filters, through the form its page uses; a value the form does not take is refused (422)."""
    form = form_class(request.GET)
    if not form.is_valid():
        raise ValidationError(
            [
                {"type": error.code, "loc": ["query", name], "msg": " ".join(error.messages)}
                for name, errors in form.errors.as_data().items()
                for error in errors
            ]
        )
    return form


def query_parameters(form_class: type[QueryForm]) -> dict:
    """The OpenAPI description of a filter form's parameters (the form, not ninja, reads them)."""
    parameters = []
    for name, field in form_class.base_fields.items():
        if isinstance(field, forms.ChoiceField):
            schema = {"type": "string", "enum": [value for value, _ in field.choices]}
        elif isinstance(field, forms.IntegerField):
            schema = {"type": "integer", "minimum": field.min_value, "maximum": field.max_value}
        else:
            schema = {"type": "string", "pattern": NO_NUL}
        parameters.append({"in": "query", "name": name, "required": False, "schema": schema})
    return {"parameters": parameters}


def _require(request, permission: str):
    if not request.user.has_perm(permission):
        raise HttpError(403, f"your token's user lacks the {permission} permission")


def _runs():
    return Run.objects.select_related("library", "walkthrough").prefetch_related("doc_pages")


def _problems():
    return Problem.objects.select_related("library", "walkthrough", "doc_page", "assignee")


libraries = Router(tags=["libraries"])
runs = Router(tags=["runs"])
findings = Router(tags=["gaps and problems"])


@libraries.get("", response=list[LibraryOut])
def list_libraries(request, page: Query[Page]):
    return list(Library.objects.all()[page.offset : page.offset + page.limit])


@libraries.get("/{library_id}", response={200: LibraryOut, 404: ErrorOut})
def get_library(request, library_id: Id):
    return get_object_or_404(Library, pk=library_id)


class SyncOut(Schema):
    library_id: int
    status: Literal["queued"]
    detail: str


@libraries.post(
    "/{library_id}/sync", response={202: SyncOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 503: ErrorOut}
)
def sync_library(request, library_id: Id):
    """Fetch the library's docs repository and update its pages and walkthroughs (in the background; GET the
    library for synced_at and docs_commit)."""
    _require(request, "walkthroughs.manage_library")
    library = get_object_or_404(Library, pk=library_id)
    if not library.docs_repo:
        return Status(400, {"detail": f"{library.name} has no docs repository: set docs_repo first"})
    try:
        start_sync(library)
    except QueueUnreachable as exc:
        return Status(503, {"detail": str(exc)})
    return Status(202, SyncOut(library_id=library.pk, status="queued", detail="syncing the docs"))


class RunEverythingIn(Schema):
    commit: Text | None = Field(
        None, max_length=64, description="The docs commit CI tested; refused when the synced docs are elsewhere"
    )


class BatchOut(Schema):
    id: int
    url: str
    docs_commit: str
    runs: list[RunOut]


@libraries.post(
    "/{library_id}/run-everything",
    response={201: BatchOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut, 503: ErrorOut},
)
def run_everything(request, library_id: Id, payload: RunEverythingIn):
    """Validate every doc page and audit every walkthrough of the library, as one batch."""
    _require(request, "audits.start_run")
    library = get_object_or_404(Library, pk=library_id)
    current = library.current_docs_commit()
    if payload.commit and not current.startswith(payload.commit.strip()):
        return Status(
            409, {"detail": f"the docs are at {current[:12] or 'no commit'}, not {payload.commit}: sync first"}
        )
    try:
        batch = do_run_everything(library, user=request.user, origin="api")
    except RunNotQueued as exc:
        return Status(503, {"detail": str(exc)})
    except RunNotStarted as exc:
        return Status(400, {"detail": str(exc)})
    runs = [RunOut.of(run) for run in _runs().filter(batch=batch).order_by("pk")]
    return Status(201, BatchOut(id=batch.pk, url=batch.get_absolute_url(), docs_commit=batch.docs_commit, runs=runs))


@runs.get("", response=list[RunOut], openapi_extra=query_parameters(RunApiFilterForm))
def list_runs(request, page: Query[Page]):
    found = filters(RunApiFilterForm, request).filter(_runs().newest_first())
    return [RunOut.of(run) for run in found[page.offset : page.offset + page.limit]]


@runs.post("", response={201: RunOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 503: ErrorOut})
def start_run(request, payload: StartRunIn):
    """Start an audit (walkthrough_id) or a validation (library, optionally some pages)."""
    _require(request, "audits.start_run")
    options = {"timeout": payload.timeout} if payload.timeout else {}
    try:
        if payload.kind == RunKind.AUDIT:
            walkthrough = get_object_or_404(
                Walkthrough.objects.select_related("library"), walkthrough_id=payload.walkthrough_id
            )
            reason = claude_unavailable_reason() if payload.backend == "claude" else None
            if reason:
                return Status(400, {"detail": reason})
            run = do_start_audit(
                walkthrough,
                user=request.user,
                backend=payload.backend,
                version=payload.version,
                origin="api",
                options=options,
            )
        else:
            library = get_object_or_404(Library, name__iexact=payload.library)
            pages = library.doc_pages.all()
            if payload.pages:
                pages = pages.filter(page__in=payload.pages)
            run = do_start_validation(
                library, list(pages), user=request.user, version=payload.version, origin="api", options=options
            )
    except RunNotQueued as exc:
        return Status(503, {"detail": str(exc)})
    except RunNotStarted as exc:
        return Status(400, {"detail": str(exc)})
    return Status(201, RunOut.of(_runs().get(pk=run.pk)))


@runs.get("/{run_id}", response={200: RunOut, 404: ErrorOut})
def get_run(request, run_id: Id):
    return RunOut.of(get_object_or_404(_runs(), pk=run_id))


@runs.post("/{run_id}/cancel", response={200: RunOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut})
def cancel_run(request, run_id: Id):
    _require(request, "audits.start_run")
    run = get_object_or_404(_runs(), pk=run_id)
    if not run.request_cancel():
        return Status(409, {"detail": f"run {run.pk} has already ended ({run.status})"})
    return RunOut.of(run)


@runs.get("/{run_id}/files/{path:name}", response={404: ErrorOut})
def get_run_file(request, run_id: Id, name: str):
    """A file the run wrote, in the format of the existing Stackbench tools."""
    run = get_object_or_404(Run, pk=run_id)
    path = run.output_file(name)
    if path is None:
        return Status(404, {"detail": f"run {run_id} has no file {name}"})
    return FileResponse(open(path, "rb"), filename=path.name)


@runs.get("/{run_id}/gate", response={200: GateOut, 400: ErrorOut, 404: ErrorOut})
def gate(request, run_id: Id, fail_on: GateLevel = DEFAULT_GATE_LEVEL):
    """Passed unless the run has open problems at or above the level (open-…, the default) or new or regressed
    ones (new-…); a run still going, or one that failed, does not pass."""
    run = get_object_or_404(Run.objects.select_related("library"), pk=run_id)
    report = gate_report(run, fail_on)
    problems = [ProblemOut.of(p) for p in report.problems]
    return GateOut(run_id=run.pk, fail_on=fail_on, passed=report.passed, status=run.status, problems=problems)


@findings.get("/gaps", response=list[GapOut], openapi_extra=query_parameters(GapApiFilterForm))
def list_gaps(request, page: Query[Page]):
    found = filters(GapApiFilterForm, request).filter_gaps(Gap.objects.order_by("-run_id", "step_number", "seq"))
    return [
        GapOut(**gap.to_format().model_dump(), id=gap.pk, run_id=gap.run_id, problem_id=gap.problem_id)
        for gap in found[page.offset : page.offset + page.limit]
    ]


@findings.get("/example-failures", response=list[ExampleFailureOut])
def list_example_failures(request, page: Query[Page], run_id: Id | None = None):
    found = ExampleResult.objects.failures().select_related("document").order_by("-document__run_id", "pk")
    if run_id is not None:
        found = found.filter(document__run_id=run_id)
    return [
        ExampleFailureOut(
            **r.to_format().model_dump(),
            id=r.pk,
            run_id=r.document.run_id,
            page=r.document.page,
            problem_id=r.problem_id,
        )
        for r in found[page.offset : page.offset + page.limit]
    ]


@findings.get("/problems", response=list[ProblemOut], openapi_extra=query_parameters(ProblemApiFilterForm))
def list_problems(request, page: Query[Page]):
    found = filters(ProblemApiFilterForm, request).filter(_problems().order_by("-rank", "-last_seen_at", "pk"))
    return [ProblemOut.of(problem) for problem in found[page.offset : page.offset + page.limit]]


@findings.get("/problems/{problem_id}", response={200: ProblemOut, 404: ErrorOut})
def get_problem(request, problem_id: Id):
    return ProblemOut.of(get_object_or_404(_problems(), pk=problem_id))


@findings.patch("/problems/{problem_id}", response={200: ProblemOut, 400: ErrorOut, 403: ErrorOut, 404: ErrorOut})
def change_problem(request, problem_id: Id, payload: ProblemPatch):
    """Triage a problem: its state (false_positive and wont_fix need a reason) and its assignee."""
    _require(request, "audits.triage_problem")
    problem = get_object_or_404(_problems(), pk=problem_id)
    if payload.triage_state:
        try:
            problem.set_state(request.user, payload.triage_state, payload.reason)
        except ValueError as exc:
            return Status(400, {"detail": str(exc)})
    if payload.assignee is not None:
        person = (
            get_user_model().objects.filter(username=payload.assignee, is_active=True).first()
            if payload.assignee
            else None
        )
        if payload.assignee and person is None:
            return Status(404, {"detail": f"there is no user {payload.assignee!r}"})
        problem.assign(request.user, person)
    return ProblemOut.of(_problems().get(pk=problem.pk))


api.add_router("/libraries", libraries)
api.add_router("/runs", runs)
api.add_router("/", findings)
