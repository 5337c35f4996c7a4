"""Findings across runs: every audit gap and failing code example, filtered and sorted."""

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.views.decorators.http import require_GET

from audits.forms import GapFilterForm
from audits.models import ExampleResult, Gap, TriageState
from audits.views.runs import page_of
from stackbench.formats.walkthrough import GAP_TYPES
from stackbench_site.htmx import render_page_or_partial
from walkthroughs.models import DocPage, Library, Walkthrough

# Newest means the most recent runs (by id, which follows creation), so the index on (run, step) serves it.
GAP_SORTS = {
    "newest": ("-run_id", "step_number", "seq"),
    "oldest": ("run_id", "step_number", "seq"),
    "step": ("step_number", "-run_id", "seq"),
    "severity": ("-rank", "-run_id", "step_number", "seq"),
}


RESULT_SORTS = {
    "newest": ("-document__run__created_at", "document__page", "example_index"),
    "oldest": ("document__run__created_at", "document__page", "example_index"),
    "step": ("document__page", "example_index", "-document__run__created_at"),
}


@login_required
@require_GET
def gaps(request):
    form = GapFilterForm(request.GET).for_page()
    sort = form.ordering()
    if form.wants_examples():
        found = form.filter_examples(ExampleResult.objects.failures())
        counts = {"severity": dict(found.values_list("severity").annotate(n=Count("id")).order_by()), "type": {}}
        ordering = ("-rank",) + RESULT_SORTS["newest"] if sort == "severity" else RESULT_SORTS[sort]
        found = found.with_rank() if sort == "severity" else found
        found = found.select_related("document__run__library", "document__doc_page").order_by(*ordering)
    else:
        found = form.filter_gaps(Gap.objects.all())
        counts = {"severity": {}, "type": {}}
        # One pass over the matching gaps gives both tallies; the filtered search is a scan, so it counts.
        for severity, gap_type, n in found.values_list("severity", "gap_type").annotate(n=Count("id")).order_by():
            counts["severity"][severity] = counts["severity"].get(severity, 0) + n
            counts["type"][gap_type] = counts["type"].get(gap_type, 0) + n
        # Prefetched rather than joined: without joins the ordering is served by the gap table's own indexes.
        found = found.prefetch_related("run__library", "run__walkthrough").order_by(*GAP_SORTS[sort])
    total = sum(counts["severity"].values())
    context = {
        "page": page_of(request, found, count=total),
        "params": form.params(),
        "sort": sort,
        "counts": counts,
        "total": total,
        "libraries": Library.objects.all(),
        "gap_types": GAP_TYPES,
        "states": TriageState.choices,
        "people": get_user_model().objects.filter(is_active=True).order_by("username"),
        "walkthroughs": Walkthrough.objects.only("pk", "title").order_by("title"),
        "doc_pages": DocPage.objects.only("pk", "page").order_by("page"),
    }
    return render_page_or_partial(request, "audits/gaps.html", "audits/_gap_results.html", context)
