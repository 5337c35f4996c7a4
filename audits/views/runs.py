"""Runs: the list, a run's page and its live progress, starting, cancelling and rerunning audits and validations,
batches, a run's files, and uploads of result files."""

import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.paginator import Paginator
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from audits.actions import RunNotStarted, do_run_everything, do_start_audit, do_start_validation
from audits.forms import AuditRunForm, PagesAskedForm, RunFilterForm, UploadForm, ValidationRunForm
from audits.importing import FileSet, import_fileset
from audits.models import HAND_TRIAGE_STATES, QUIET_STATES, Batch, Run, RunKind, RunStatus
from audits.reports import compare_runs
from stackbench.formats.results import EXAMPLE_SEVERITY
from stackbench.formats.symposium import GitDiffBody
from stackbench.lib.git import GitError
from stackbench.lib.markdown import highlight_rows
from stackbench.symposium.gitdiff import diff_tree, file_diff
from stackbench.symposium.presenting import GitDiffView
from stackbench_site.configuration import claude_unavailable_reason
from stackbench_site.htmx import render_page_or_partial
from walkthroughs.models import Library, Walkthrough

PAGE_SIZE = 50


LOG_PREVIEW_BYTES = 200_000


TRACE_PREVIEW_LINES = 400


def get_run(run_id) -> Run:
    return get_object_or_404(
        Run.objects.select_related("library", "walkthrough", "started_by", "previous_run"), pk=run_id
    )


def page_of(request, queryset, count=None):
    paginator = Paginator(queryset, PAGE_SIZE)
    if count is not None:
        paginator.count = count  # known already (from the counts by severity): spare counting the rows again
    return paginator.get_page(request.GET.get("page"))


def run_findings(run: Run, hide_quiet: bool = False) -> dict:
    """What a run found so far: gaps by step for audits, documents and their examples for validations. Gaps
    triaged as false positive or won't fix are left out when hide_quiet (and counted)."""
    if run.kind == RunKind.AUDIT:
        quiet = run.gaps.filter(problem__triage_state__in=QUIET_STATES).count()
        return {"gaps_by_step": run.gaps_by_step(hide_quiet), "quiet_count": quiet, "hide_quiet": hide_quiet}
    documents = list(run.documents.select_related("doc_page").prefetch_related("results"))
    summary = {"success": 0, "failure": 0, "skipped": 0, "error": 0, "warning": 0, "info": 0}
    for document in documents:
        results = list(document.results.all())
        document.failures = sorted(
            (r for r in results if r.status == "failure"),
            key=lambda r: (-EXAMPLE_SEVERITY.rank(r.severity or "error"), r.line),
        )
        document.passes = [r for r in results if r.status == "success"]
        document.skips = [r for r in results if r.status == "skipped"]
        for result in results:
            summary[result.status] = summary.get(result.status, 0) + 1
            if result.status == "failure":
                summary[result.severity or "error"] = summary.get(result.severity or "error", 0) + 1
    # What needs reading comes first: pages that failed or could not be set up, most failures first.
    documents.sort(key=lambda d: (not (d.failures or d.setup_problems or d.install_error), -len(d.failures), d.page))
    return {"documents": documents, "summary": summary}


def _read_logs(run: Run) -> dict:
    log = run.output_file("agent_logs/audit.log")
    trace = run.output_file("agent_logs/audit_tools.jsonl")
    text = log.read_bytes()[-LOG_PREVIEW_BYTES:].decode("utf-8", "replace") if log else ""
    calls = []
    if trace:
        for line in trace.read_text(errors="replace").splitlines()[-TRACE_PREVIEW_LINES:]:
            try:
                calls.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return {"audit_log": text, "tool_calls": calls}


@login_required
@require_GET
def runs(request):
    form = RunFilterForm(request.GET).for_page()
    queryset = Run.objects.select_related("library", "walkthrough", "started_by").prefetch_related("doc_pages")
    page = page_of(request, form.filter(queryset).with_gap_counts().with_failure_counts().newest_first())
    return render_page_or_partial(
        request,
        "audits/runs.html",
        "audits/_runs_list.html",
        {
            "page": page,
            "filters": form.params(),
            "libraries": Library.objects.all(),
            "kinds": RunKind.choices,
            "statuses": RunStatus.choices,
        },
    )


def hides_quiet(request, default: bool) -> bool:
    """?quiet=hide or ?quiet=show, else the page's default."""
    return {"hide": True, "show": False}.get(request.GET.get("quiet", ""), default)


def _run_page_context(run: Run, hide_quiet: bool = False) -> dict:
    return {
        "run": run,
        **run_findings(run, hide_quiet),
        "triage_states": HAND_TRIAGE_STATES,
        **_read_logs(run),
        "step_records": [] if run.is_active else run.step_records(),
        "comparison": None if run.is_active else compare_runs(run, run.previous_run),
        "docs_diff": None if run.is_active else docs_diff(run),
    }


def _docs_diff_range(run: Run) -> GitDiffBody | None:
    """The docs changes between the previous run and this one, when both know their docs commit."""
    previous = run.previous_run
    if not (
        run.library.docs_repo
        and previous
        and previous.docs_commit
        and run.docs_commit
        and previous.docs_commit != run.docs_commit
    ):
        return None
    return GitDiffBody.model_validate(
        {"range": f"{previous.docs_commit}..{run.docs_commit}", "exclude": {"staged": True, "unstaged": True}}
    )


def docs_diff(run: Run) -> GitDiffView | None:
    spec = _docs_diff_range(run)
    if spec is None:
        return None
    view = GitDiffView("docs", spec.range)
    try:
        view.nodes = diff_tree(run.library.checkout_path, spec)
    except GitError as exc:
        view.error = str(exc)
    return view


@login_required
@require_GET
def run(request, run_id):
    run = get_run(run_id)
    shares = run.share_links.select_related("created_by") if request.user.has_perm("audits.share_run") else []
    context = _run_page_context(run, hides_quiet(request, default=False))
    return render(request, "audits/run.html", {**context, "shares": shares})


@login_required
@require_GET
def run_live(request, run_id):
    """The live part of the run page, polled by htmx while the run is active. The answer that sees the run
    end also swaps in the files, logs and comparison (out of band), so the page never reloads."""
    run = get_run(run_id)
    if run.is_active:
        return render(request, "audits/_run_live.html", {"run": run, **run_findings(run)})
    return render(request, "audits/_run_final.html", {**_run_page_context(run), "oob": True})


@login_required
@permission_required("audits.start_run", raise_exception=True)
@require_POST
def run_cancel(request, run_id):
    run = get_run(run_id)
    if run.request_cancel():
        messages.success(request, f"Run #{run.pk} was cancelled; its commands are being stopped.")
    else:
        messages.error(request, f"Run #{run.pk} had already ended.")
    return redirect(run)


@login_required
@require_GET
def run_docs_diff(request, run_id):
    """One file of the docs diff between the previous run and this one (an htmx partial)."""
    run = get_run(run_id)
    spec = _docs_diff_range(run)
    node, path = request.GET.get("node", ""), request.GET.get("path", "")
    if spec is None or not node or not path:
        raise Http404("This run has no docs diff.")
    try:
        opened = {
            "element": "docs",
            "node": node,
            "path": path,
            "error": "",
            "rows": highlight_rows(file_diff(run.library.checkout_path, spec, node, path), path),
        }
    except GitError as exc:
        opened = {"element": "docs", "node": node, "path": path, "error": str(exc), "rows": []}
    if not request.htmx:
        return redirect(f"{run.get_absolute_url()}?{request.GET.urlencode()}#diff")
    return render(request, "walkthroughs/_file_diff.html", {"opened": opened})


@login_required
@permission_required("audits.start_run", raise_exception=True)
@require_POST
def run_everything(request, library_id):
    library = get_object_or_404(Library, pk=library_id)
    try:
        batch = do_run_everything(library, user=request.user)
    except RunNotStarted as exc:
        messages.error(request, str(exc))
        return redirect(library)
    return redirect(batch)


def _batch_context(batch: Batch) -> dict:
    runs = list(
        batch.runs.select_related("walkthrough")
        .prefetch_related("doc_pages")
        .with_gap_counts()
        .with_failure_counts()
        .order_by("pk")
    )
    return {
        "batch": batch,
        "runs": runs,
        "active": any(run.is_active for run in runs),
        "done": sum(1 for run in runs if not run.is_active),
        "gaps": sum(run.critical_count + run.warning_count + run.info_count for run in runs),
        "failures": sum(run.failure_count for run in runs),
    }


@login_required
@require_GET
def batch(request, batch_id):
    batch = get_object_or_404(Batch.objects.select_related("library", "created_by"), pk=batch_id)
    return render_page_or_partial(request, "audits/batch.html", "audits/_batch_runs.html", _batch_context(batch))


@login_required
@require_GET
def run_file(request, run_id, name):
    run = get_run(run_id)
    path = run.output_file(name)
    if path is None:
        raise Http404("No such file in this run.")
    return file_response(path, inline=request.GET.get("inline") == "1")


def file_response(path, inline=False):
    """A run's output file, never as HTML: it holds text from documents and commands."""
    content_type = {".json": "application/json", ".jsonl": "application/x-ndjson"}.get(
        path.suffix, "text/plain; charset=utf-8"
    )
    return FileResponse(open(path, "rb"), as_attachment=not inline, filename=path.name, content_type=content_type)


@login_required
@permission_required("audits.start_run", raise_exception=True)
@require_http_methods(["GET", "POST"])
def new_audit(request, walkthrough_id, rerun_of=None):
    walkthrough = get_object_or_404(Walkthrough.objects.select_related("library"), pk=walkthrough_id)
    previous = get_object_or_404(Run, pk=rerun_of, walkthrough=walkthrough) if rerun_of else None
    initial = {
        "version": (previous.library_version if previous else walkthrough.library.default_version),
        "backend": previous.backend
        if previous and previous.backend in ("rules", "claude")
        else walkthrough.library.default_backend,
    }
    form = AuditRunForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            run = do_start_audit(
                walkthrough,
                user=request.user,
                backend=form.cleaned_data["backend"],
                version=form.cleaned_data["version"],
                previous_run=previous,
                options=form.options(),
            )
        except RunNotStarted as exc:
            messages.error(request, str(exc))
        else:
            return redirect(run)
    return render(
        request,
        "audits/new_run.html",
        {
            "form": form,
            "walkthrough": walkthrough,
            "library": walkthrough.library,
            "previous": previous,
            "kind": "audit",
            "claude_unavailable": claude_unavailable_reason(),
        },
    )


@login_required
@permission_required("audits.start_run", raise_exception=True)
@require_http_methods(["GET", "POST"])
def new_validation(request, library_id, rerun_of=None):
    library = get_object_or_404(Library, pk=library_id)
    previous = get_object_or_404(Run, pk=rerun_of, library=library) if rerun_of else None
    chosen = list(previous.doc_pages.all()) if previous else list(library.doc_pages.all())
    requested = PagesAskedForm(request.GET).for_page().cleaned_data["page"]
    if requested:
        chosen = [p for p in library.doc_pages.all() if p.pk in requested]
    form = ValidationRunForm(
        request.POST or None,
        library=library,
        initial={"version": previous.library_version if previous else library.default_version, "pages": chosen},
    )
    if request.method == "POST" and form.is_valid():
        try:
            run = do_start_validation(
                library,
                list(form.cleaned_data["pages"]),
                user=request.user,
                version=form.cleaned_data["version"],
                previous_run=previous,
                options=form.options(),
            )
        except RunNotStarted as exc:
            messages.error(request, str(exc))
        else:
            return redirect(run)
    return render(
        request, "audits/new_run.html", {"form": form, "library": library, "previous": previous, "kind": "validation"}
    )


@login_required
@permission_required("audits.start_run", raise_exception=True)
@require_http_methods(["GET", "POST"])
def rerun(request, run_id):
    """Same inputs as an earlier run, optionally another version or backend; linked to it for comparison."""
    run = get_run(run_id)
    if run.kind == RunKind.AUDIT and run.walkthrough_id:
        return new_audit(request, run.walkthrough_id, rerun_of=run.pk)
    return new_validation(request, run.library_id, rerun_of=run.pk)


@login_required
@permission_required("walkthroughs.manage_library", raise_exception=True)
@require_http_methods(["GET", "POST"])
def upload(request):
    form, outcomes = UploadForm(request.POST or None, request.FILES or None), []
    if request.method == "POST" and form.is_valid():
        fileset = FileSet()
        for upload in form.cleaned_data["files"]:
            fileset.add_bytes(upload.name, upload.read(), explicit=True)
        outcomes = import_fileset(fileset, library_name=form.cleaned_data["library"] or None, user=request.user)
    return render(
        request,
        "audits/upload.html",
        {
            "form": form,
            "outcomes": outcomes,
            "max_files": settings.DATA_UPLOAD_MAX_NUMBER_FILES,
            "max_size": settings.STACKBENCH_UPLOAD_MAX_BYTES,
        },
    )
