"""Problems (a finding across runs) and their triage: the list, bulk changes, a problem's page, comments."""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required, permission_required
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from audits.forms import PROBLEM_SORTS, AssignmentForm, ProblemFilterForm
from audits.models import HAND_TRIAGE_STATES, ExampleResult, Gap, Lifecycle, Problem, RunKind, RunStatus, TriageState
from stackbench_site.htmx import render_page_or_partial
from walkthroughs.models import Library, Snippet

PAGE_SIZE = 50


RECENT_RUNS = 10


BULK_ACTIONS = {
    "confirmed": "Confirm",
    "false_positive": "Mark false positive",
    "wont_fix": "Mark won't fix",
    "open": "Reopen",
    "assign": "Assign",
}


def _get_problem(problem_id) -> Problem:
    return get_object_or_404(
        Problem.objects.select_related("library", "walkthrough", "doc_page", "assignee", "first_run", "last_run"),
        pk=problem_id,
    )


def _people():
    return get_user_model().objects.filter(is_active=True).order_by("username")


@login_required
@require_GET
def problems(request):
    form = ProblemFilterForm(request.GET).for_page()
    found = form.filter(Problem.objects.all(), request.user)
    sort = form.ordering()
    states = dict(found.order_by().values_list("triage_state").annotate(n=Count("id")))
    page = Paginator(
        found.select_related("library", "walkthrough", "doc_page", "assignee").order_by(*PROBLEM_SORTS[sort]), PAGE_SIZE
    ).get_page(request.GET.get("page"))
    return render_page_or_partial(
        request,
        "audits/problems.html",
        "audits/_problem_results.html",
        {
            "page": page,
            "params": form.params(),
            "sort": sort,
            "state_counts": states,
            "total": found.count(),
            "libraries": Library.objects.all(),
            "people": _people(),
            "states": TriageState.choices,
            "lifecycles": Lifecycle.choices,
            "bulk_actions": BULK_ACTIONS,
            "query": request.GET.urlencode(),
        },
    )


def _sightings(problem: Problem):
    if problem.kind == RunKind.AUDIT:
        return Gap.objects.filter(problem=problem).select_related("run").order_by("-run_id")[:PAGE_SIZE]
    return (
        ExampleResult.objects.filter(problem=problem)
        .select_related("document__run", "document__doc_page")
        .order_by("-document__run_id")[:PAGE_SIZE]
    )


def _recent_presence(problem: Problem) -> tuple[int, int, str]:
    """Seen in N of the last M finished runs over the same walkthrough or page (with the same backend as its
    latest sighting, since an agent's findings vary from run to run)."""
    runs = problem.library.runs.filter(kind=problem.kind, status=RunStatus.SUCCEEDED)
    if problem.walkthrough_id:
        runs = runs.filter(walkthrough_id=problem.walkthrough_id)
    elif problem.doc_page_id:
        runs = runs.filter(doc_pages=problem.doc_page_id)
    backend = problem.last_run.backend if problem.last_run else ""
    if backend:
        runs = runs.filter(backend=backend)
    recent = list(runs.order_by("-created_at", "-pk").values_list("pk", flat=True)[:RECENT_RUNS])
    if problem.kind == RunKind.AUDIT:
        seen = Gap.objects.filter(problem=problem, run_id__in=recent).values("run").distinct().count()
    else:
        seen = (
            ExampleResult.objects.filter(problem=problem, document__run_id__in=recent)
            .values("document__run")
            .distinct()
            .count()
        )
    return seen, len(recent), backend


def _same_snippet(problem: Problem):
    """Audit gaps and code-example failures about the same code, so the evidence sits together."""
    if problem.kind == RunKind.AUDIT and problem.walkthrough_id:
        hashes = Snippet.objects.filter(step__walkthrough_id=problem.walkthrough_id, step__position=problem.step_number)
        return Problem.objects.filter(kind=RunKind.VALIDATION, code_hash__in=hashes.values("code_hash")).select_related(
            "doc_page"
        )
    if problem.code_hash:
        steps = Snippet.objects.filter(code_hash=problem.code_hash).values("step__walkthrough_id", "step__position")
        match = Q(pk__in=[])
        for step in steps:
            match |= Q(walkthrough_id=step["step__walkthrough_id"], step_number=step["step__position"])
        return Problem.objects.filter(match, kind=RunKind.AUDIT).select_related("walkthrough")
    return Problem.objects.none()


@login_required
@require_GET
def problem(request, problem_id):
    problem = _get_problem(problem_id)
    seen, out_of, backend = _recent_presence(problem)
    events = list(problem.events.select_related("actor"))
    comments = list(problem.comments.select_related("author"))
    history = sorted(
        [("event", e.at, e) for e in events] + [("comment", c.created_at, c) for c in comments],
        key=lambda item: item[1],
    )
    return render(
        request,
        "audits/problem.html",
        {
            "problem": problem,
            "sightings": _sightings(problem),
            "seen": seen,
            "out_of": out_of,
            "backend": backend,
            "related": _same_snippet(problem),
            "history": history,
            "people": _people(),
            "states": HAND_TRIAGE_STATES,
            "undoable": _undoable(problem, request.user),
        },
    )


def _undoable(problem, user):
    """The user's own last triage change of this problem, which they may undo."""
    last = problem.last_state_change()
    return last if last is not None and last.actor_id == user.pk else None


@login_required
@permission_required("audits.triage_problem", raise_exception=True)
@require_POST
def problem_triage(request, problem_id):
    problem = _get_problem(problem_id)
    try:
        changed = problem.set_state(
            request.user, request.POST.get("state", problem.triage_state), request.POST.get("reason", "")
        )
    except ValueError as exc:
        messages.error(request, str(exc).capitalize() + ".")
        return redirect(_back_to(request, problem))
    assignment = AssignmentForm(request.POST).for_page()
    if not assignment.keeps_assignee():
        changed = problem.assign(request.user, assignment.person(_people())) or changed
    messages.success(request, "Saved." if changed else "Nothing changed.")
    return redirect(_back_to(request, problem))


def _back_to(request, problem):
    """Where the triage form was: the run page it sits on (a local URL only), else the problem's page."""
    target = request.POST.get("next", "")
    if (
        target
        and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()})
        and target.startswith("/")
    ):
        return target
    return problem.get_absolute_url()


@login_required
@permission_required("audits.triage_problem", raise_exception=True)
@require_POST
def problem_undo(request, problem_id):
    problem = _get_problem(problem_id)
    try:
        problem.undo_last_state(request.user)
    except ValueError as exc:
        messages.error(request, str(exc).capitalize() + ".")
    else:
        messages.success(request, f"Undone: the problem is {problem.get_triage_state_display().lower()} again.")
    return redirect(_back_to(request, problem))


@login_required
@permission_required("audits.triage_problem", raise_exception=True)
@require_POST
def problem_comment(request, problem_id):
    problem = _get_problem(problem_id)
    try:
        problem.add_comment(request.user, request.POST.get("text", ""))
    except ValueError:
        messages.error(request, "Write something before posting the comment.")
    return redirect(problem.get_absolute_url() + "#history")


@login_required
@permission_required("audits.triage_problem", raise_exception=True)
@require_http_methods(["POST"])
def problems_bulk(request):
    """Change many problems at once: first a confirmation saying how many rows change, then the change."""
    action = request.POST.get("action", "")
    if action not in BULK_ACTIONS:
        messages.error(request, "Choose what to do with the selected problems.")
        return redirect(f"/problems/?{request.POST.get('query', '')}")
    assignment = AssignmentForm(request.POST).for_page()
    if request.POST.get("scope") == "all":
        chosen = ProblemFilterForm(request.POST).for_page().filter(Problem.objects.all(), request.user)
    else:
        chosen = Problem.objects.filter(pk__in=assignment.cleaned_data["problem"])
    count = chosen.count()
    reason = request.POST.get("reason", "").strip()
    person = assignment.person(_people())
    if action in ("false_positive", "wont_fix") and not reason:
        messages.error(request, f"Say why they are {BULK_ACTIONS[action].split(' ', 1)[-1]}.")
        return redirect(f"/problems/?{request.POST.get('query', '')}")
    if request.POST.get("confirm") != "yes":
        return render(
            request,
            "audits/problems_bulk_confirm.html",
            {
                "count": count,
                "action": action,
                "label": BULK_ACTIONS[action],
                "reason": reason,
                "assignee": person,
                "ids": [] if request.POST.get("scope") == "all" else list(chosen.values_list("pk", flat=True)),
                "post": request.POST,
            },
        )
    changed = 0
    for item in chosen.select_related("assignee"):
        if action == "assign":
            changed += item.assign(request.user, person)
        else:
            changed += item.set_state(request.user, action, reason)
    messages.success(request, f"{changed} of {count} problem{'s' if count != 1 else ''} changed.")
    return redirect(f"/problems/?{request.POST.get('query', '')}")
