from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import FileResponse, Http404, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRefresh, trigger_client_event

from audits.models import ACTIVE_STATUSES, HAND_TRIAGE_STATES, ExampleResult, Run
from audits.reports import (
    gap_counts_by_run,
    latest_documents,
    latest_finished_audits,
    library_overviews,
    result_counts_by_document,
    step_histories,
    step_timeline,
)
from stackbench.formats.symposium import ActionElement, GitDiffElement
from stackbench.lib.git import GitError
from stackbench.lib.markdown import highlight_rows
from stackbench.symposium.gitdiff import file_diff
from stackbench.symposium.presenting import find_element, present
from stackbench_site.celery import QueueUnreachable
from stackbench_site.configuration import claude_unavailable_reason
from stackbench_site.htmx import render_page_or_partial
from walkthroughs.forms import LibraryForm, LibraryItemsForm, PresentForm
from walkthroughs.models import DocPage, Feedback, Library, PresentedWalkthrough, PresentError, Walkthrough
from walkthroughs.tasks import start_sync


def _get_library(library_id) -> Library:
    return get_object_or_404(Library, pk=library_id)


def _get_walkthrough(walkthrough_id) -> Walkthrough:
    return get_object_or_404(Walkthrough.objects.select_related("library"), pk=walkthrough_id)


def _get_doc_page(page_id) -> DocPage:
    return get_object_or_404(DocPage.objects.select_related("library"), pk=page_id)


@login_required
@require_GET
def home(request):
    libraries = Library.objects.annotate(
        walkthrough_count=Count("walkthroughs", filter=Q(walkthroughs__archived=False), distinct=True),
        page_count=Count("doc_pages", distinct=True),
    )
    return render(
        request,
        "walkthroughs/home.html",
        {
            "overviews": library_overviews(libraries),
            "active_runs": Run.objects.active().select_related("library", "walkthrough").newest_first()[:10],
        },
    )


@login_required
@require_GET
def library(request, library_id):
    library = _get_library(library_id)
    shown = LibraryItemsForm(request.GET).for_page()
    text, state = shown.cleaned_data.get("q", ""), shown.cleaned_data.get("state", "")
    walkthroughs = latest_finished_audits(library.walkthroughs.active())
    pages = latest_documents(library.doc_pages.annotate(example_count=Count("examples")))
    if text:
        walkthroughs = walkthroughs.filter(Q(title__icontains=text) | Q(walkthrough_id__icontains=text))
        pages = pages.filter(page__icontains=text)
    walkthroughs, pages = list(walkthroughs), list(pages)
    gap_counts = gap_counts_by_run([w.latest_run_id for w in walkthroughs if w.latest_run_id])
    result_counts = result_counts_by_document([p.latest_document_id for p in pages if p.latest_document_id])
    for walkthrough in walkthroughs:
        walkthrough.gap_counts = gap_counts.get(walkthrough.latest_run_id, {})
    for page in pages:
        page.result_counts = result_counts.get(page.latest_document_id)
    if state == "failing":
        walkthroughs = [w for w in walkthroughs if w.gap_counts]
        pages = [p for p in pages if p.result_counts and p.result_counts["failed"]]
    elif state == "never":
        walkthroughs = [w for w in walkthroughs if not w.latest_run_id]
        pages = [p for p in pages if not p.latest_document_id]
    context = {
        "library": library,
        "walkthroughs": walkthroughs,
        "pages": pages,
        "text": text,
        "state": state,
        "runs": library.runs.select_related("walkthrough")
        .prefetch_related("doc_pages")
        .with_gap_counts()
        .with_failure_counts()
        .newest_first()[:10],
    }
    return render_page_or_partial(request, "walkthroughs/library.html", "walkthroughs/_library_items.html", context)


@login_required
@permission_required("walkthroughs.add_library", raise_exception=True)
@require_http_methods(["GET", "POST"])
def library_new(request):
    form = LibraryForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        return redirect(form.save())
    return render(request, "walkthroughs/library_settings.html", {"form": form, "library": None})


@login_required
@permission_required("walkthroughs.change_library", raise_exception=True)
@require_http_methods(["GET", "POST"])
def library_settings(request, library_id):
    library = _get_library(library_id)
    form = LibraryForm(request.POST or None, instance=library)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Saved.")
        return redirect(library)
    return render(request, "walkthroughs/library_settings.html", {"form": form, "library": library})


@login_required
@permission_required("walkthroughs.manage_library", raise_exception=True)
@require_POST
def library_sync(request, library_id):
    library = _get_library(library_id)
    if not library.docs_repo:
        messages.error(request, "Set the library's docs repository first.")
        return redirect(library)
    try:
        start_sync(library)
    except QueueUnreachable as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Syncing the docs: pages and walkthroughs update in a moment.")
    return redirect(library)


@login_required
@require_GET
def library_sync_status(request, library_id):
    """The sync line alone, polled by the library page while a sync runs; when it is done, the page reloads
    so its pages and walkthroughs are the synced ones."""
    library = _get_library(library_id)
    if request.htmx and request.GET.get("was") == "pending" and not library.sync_pending:
        return HttpResponseClientRefresh()
    return render(request, "walkthroughs/_sync_status.html", {"library": library})


DOCS_IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".svg": "image/svg+xml",
}


@login_required
@require_GET
def library_docs_file(request, library_id, path):
    """An image of the library's docs folder, so the docs' own relative images show on our pages; nothing
    outside that folder, and only images."""
    library = _get_library(library_id)
    folder = library.docs_path
    kind = DOCS_IMAGE_TYPES.get(Path(path).suffix.lower())
    if folder is None or kind is None:
        raise Http404("Only images of the library's docs are served.")
    root = folder.resolve()
    target = (root / path).resolve()
    if not target.is_relative_to(root) or not target.is_file():
        raise Http404("No such image in the docs.")
    response = FileResponse(target.open("rb"), content_type=kind)
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    return response


STEPS_PER_PAGE = 50


@login_required
@require_GET
def walkthrough(request, walkthrough_id):
    walkthrough = _get_walkthrough(walkthrough_id)
    # Long walkthroughs (generated ones reach thousands of steps) are read a page of steps at a time.
    page = Paginator(walkthrough.steps.all(), STEPS_PER_PAGE).get_page(request.GET.get("page"))
    steps = list(page.object_list)
    positions = [step.position for step in steps]
    latest = walkthrough.runs.audits().finished().newest_first().first()
    gaps_by_step = {}
    if latest:
        for gap in latest.gaps.filter(step_number__in=positions).select_related("problem"):
            gaps_by_step.setdefault(gap.step_number, []).append(gap)
    histories = step_histories(walkthrough)
    for step in steps:
        step.latest_gaps = gaps_by_step.get(step.position, [])
        step.history = histories.get(step.position, [])
    show_all = request.GET.get("runs") == "all"
    context = {
        "walkthrough": walkthrough,
        "steps": steps,
        "page": page,
        "latest": latest,
        "timeline": step_timeline(walkthrough, steps, limit=None if show_all else 40),
        "show_all": show_all,
        "run_count": walkthrough.runs.audits().count(),
        "active_run": walkthrough.runs.active().first(),
        "claude_unavailable": claude_unavailable_reason(),
        "triage_states": HAND_TRIAGE_STATES,
        "asset_base": walkthrough.library.docs_asset_base(walkthrough.original_doc_path),
    }
    return render(request, "walkthroughs/walkthrough.html", context)


@login_required
@require_GET
def doc_page(request, page_id):
    page = _get_doc_page(page_id)
    examples = list(page.examples.all())
    latest = latest_documents(DocPage.objects.filter(pk=page.pk)).values_list("latest_document_id", flat=True).first()
    results = {r.example_index: r for r in ExampleResult.objects.filter(document_id=latest)} if latest else {}
    history = _example_history(page)
    for example in examples:
        example.latest = results.get(example.index)
        example.history = history.get(example.index, [])
    return render(
        request,
        "walkthroughs/doc_page.html",
        {
            "page": page,
            "examples": examples,
            "runs": page.runs.select_related("library").with_gap_counts().with_failure_counts().newest_first()[:10],
        },
    )


def _example_history(page, runs: int = 12) -> dict[int, list]:
    """Each example's results in the page's last finished validation runs, oldest first (one query)."""
    results = (
        ExampleResult.objects.filter(document__doc_page=page)
        .exclude(document__run__status__in=ACTIVE_STATUSES)
        .select_related("document__run")
        .order_by("-document__run__created_at", "-document__run_id")[: runs * 200]
    )
    history: dict[int, list] = {}
    for result in results:
        shown = history.setdefault(result.example_index, [])
        if len(shown) < runs:
            shown.insert(0, result)
    return history


def _get_presented(presented_id) -> PresentedWalkthrough:
    return get_object_or_404(PresentedWalkthrough.objects.select_related("library", "created_by"), pk=presented_id)


def _back_to(presented, anchor=""):
    return redirect(presented.get_absolute_url() + (f"#{anchor.replace('.', '-')}" if anchor else ""))


@login_required
@require_GET
def presented_list(request):
    archived = request.GET.get("archived") == "1"
    queryset = PresentedWalkthrough.objects.select_related("library", "created_by").annotate(
        feedback_count=Count("feedback")
    )
    queryset = queryset.filter(archived_at__isnull=not archived)
    return render(request, "walkthroughs/presented_list.html", {"presentations": queryset[:200], "archived": archived})


@login_required
@permission_required("walkthroughs.add_presentedwalkthrough", raise_exception=True)
@require_http_methods(["GET", "POST"])
def presented_new(request):
    form = PresentForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            presented = PresentedWalkthrough.present(
                form.source(), form.cleaned_data["repo_path"], user=request.user, library=form.cleaned_data["library"]
            )
        except PresentError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect(presented)
    return render(request, "walkthroughs/presented_new.html", {"form": form})


@login_required
@require_GET
def presented(request, presented_id):
    presented = _get_presented(presented_id)
    shown = _shown(presented)
    opened = _opened_diff(request, presented)
    return render(
        request,
        "walkthroughs/presented.html",
        {
            "presented": presented,
            "sections": shown["sections"],
            "opened": opened,
            "feedback": presented.feedback.select_related("created_by"),
            "feedback_by_key": _feedback_by_key(presented),
            "section_titles": {
                "introduction": "Introduction",
                "highlights": "Highlights",
                "changes": "Changes",
                "actions": "What next?",
            },
        },
    )


def _opened_diff(request, presented) -> dict | None:
    """The file diff asked for in the query string (the no-JavaScript way to open one)."""
    element, node, path = (request.GET.get(key, "") for key in ("element", "node", "path"))
    if not (element and node and path):
        return None
    gitdiff = find_element(presented.walkthrough(), element)
    if not isinstance(gitdiff, GitDiffElement):
        raise Http404("No such diff in this walkthrough.")
    try:
        rows = file_diff(Path(presented.repo_path), gitdiff.gitdiff, node, path)
    except GitError as exc:
        return {"element": element, "node": node, "path": path, "error": str(exc), "rows": []}
    return {"element": element, "node": node, "path": path, "rows": highlight_rows(rows, path), "error": ""}


@login_required
@require_GET
def presented_diff(request, presented_id):
    presented = _get_presented(presented_id)
    opened = _opened_diff(request, presented)
    if opened is None:
        raise Http404("Say which element, node and file.")
    if not request.htmx:
        return redirect(f"{presented.get_absolute_url()}?{request.GET.urlencode()}#diff")
    return render(request, "walkthroughs/_file_diff.html", {"opened": opened})


def _shown(presented) -> dict:
    return present(presented.walkthrough(), Path(presented.repo_path), presented.chosen_locations)


def _comment_item(shown, key):
    """The comment's item (its resolved view and nested content) at a key, or 404."""
    for items in shown["sections"].values():
        for item in _walk_items(items):
            if item.key == key and item.kind == "comment":
                return item
    raise Http404("No such comment in this walkthrough.")


def _walk_items(items):
    for item in items:
        yield item
        yield from _walk_items(item.children)


@login_required
@permission_required("walkthroughs.add_feedback", raise_exception=True)
@require_POST
def presented_choose(request, presented_id, key):
    """Pick which of several matches an ambiguous comment means; the choice is kept and can be changed."""
    presented = _get_presented(presented_id)
    item = _comment_item(_shown(presented), key)
    label = request.POST.get("match", "")
    if label not in {m.label() for m in item.value.matches}:
        return HttpResponseBadRequest("Pick one of the comment's locations.")
    presented.choose_location(key, label)
    if request.htmx:
        return render(
            request,
            "walkthroughs/_comment_card.html",
            {"presented": presented, "item": _comment_item(_shown(presented), key)},
        )
    return _back_to(presented, f"comment-{key}")


@login_required
@permission_required("walkthroughs.add_feedback", raise_exception=True)
@require_POST
def presented_reply(request, presented_id, key):
    presented = _get_presented(presented_id)
    view = _comment_item(_shown(presented), key).value
    message = request.POST.get("message", "").strip()
    if not message:
        messages.error(request, "Write a reply before sending it.")
        return _back_to(presented, f"comment-{key}")
    presented.feedback.create(
        kind=Feedback.Kind.REPLY,
        element_key=key,
        text=view.reply_text(message),
        message=message,
        created_by=request.user,
    )
    return _feedback_response(request, presented, key, f"comment-{key}")


@login_required
@permission_required("walkthroughs.add_feedback", raise_exception=True)
@require_POST
def presented_action(request, presented_id, key):
    presented = _get_presented(presented_id)
    element = find_element(presented.walkthrough(), key)
    if not isinstance(element, ActionElement):
        raise Http404("No such action in this walkthrough.")
    presented.feedback.create(
        kind=Feedback.Kind.ACTION,
        element_key=key,
        text=element.action.message(),
        message=element.action.button,
        created_by=request.user,
    )
    return _feedback_response(request, presented, key, f"action-{key}")


def _feedback_by_key(presented) -> dict[str, list]:
    grouped: dict[str, list] = {}
    for item in presented.feedback.select_related("created_by"):
        grouped.setdefault(item.element_key, []).append(item)
    return grouped


def _feedback_response(request, presented, key, anchor):
    """With htmx: the feedback list, and the reply thread or the action's "sent" note of the element, swapped
    in place; without: back to the element on the page."""
    if request.htmx:
        response = render(
            request,
            "walkthroughs/_feedback_sent.html",
            {
                "presented": presented,
                "feedback": presented.feedback.select_related("created_by"),
                "feedback_by_key": _feedback_by_key(presented),
                "key": key,
                "oob": True,
            },
        )
        return trigger_client_event(response, "feedback-sent")
    messages.success(request, "Sent to the agent.")
    return _back_to(presented, anchor)


@login_required
@permission_required("walkthroughs.change_presentedwalkthrough", raise_exception=True)
@require_POST
def presented_clear(request, presented_id):
    presented = _get_presented(presented_id)
    presented.clear()
    messages.success(request, f"“{presented.title}” was cleared; it stays readable among the archived walkthroughs.")
    return redirect("presented_list")
