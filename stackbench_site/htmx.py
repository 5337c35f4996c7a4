"""Helpers for pages whose parts htmx refreshes: every interaction also works as a plain page load."""

from django.shortcuts import render


def render_page_or_partial(request, page_template, partial_template, context):
    """The whole page, or only its partial when htmx asks (a filter swapping a list in place)."""
    wants_partial = request.htmx and not request.htmx.boosted and request.htmx.target
    return render(request, partial_template if wants_partial else page_template, context)
