"""Read-only share links for runs: creating and revoking them, and the pages people without an account see."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from audits.forms import ShareForm
from audits.models import ShareLink
from audits.views.runs import file_response, get_run, hides_quiet, run_findings


def _get_share(token) -> ShareLink:
    share = ShareLink.from_token(token)
    if share is None:
        raise Http404("No such share link.")
    return share


@login_required
@permission_required("audits.share_run", raise_exception=True)
@require_POST
def run_share(request, run_id):
    run = get_run(run_id)
    expires = ShareForm(request.POST).for_page().expires_at()
    share = ShareLink.objects.create(run=run, created_by=request.user, expires_at=expires)
    messages.success(request, f"Share link created: {request.build_absolute_uri(share.get_absolute_url())}")
    return redirect(run.get_absolute_url() + "#sharing")


@login_required
@permission_required("audits.share_run", raise_exception=True)
@require_POST
def share_revoke(request, share_id):
    share = get_object_or_404(ShareLink.objects.select_related("run"), pk=share_id)
    share.revoke()
    messages.success(request, "The share link was revoked; it now answers 410 Gone.")
    return redirect(share.run.get_absolute_url() + "#sharing")


def _usable_share(request, token):
    share = _get_share(token)
    if not share.is_usable:
        why = "was revoked" if share.revoked_at else "has expired"
        return share, render(request, "audits/share_gone.html", {"why": why}, status=410)
    return share, None


@require_GET
def shared_run(request, token):
    """A run for people without an account: read-only, no triage, no internal comments."""
    share, gone = _usable_share(request, token)
    if gone:
        return gone
    run = get_run(share.run_id)
    # Outsiders see what the team stands behind: gaps triaged as false positive or won't fix are hidden unless
    # asked for, and marked as such when shown.
    findings = run_findings(run, hides_quiet(request, default=True))
    return render(request, "audits/shared_run.html", {"run": run, "share": share, "token": token, **findings})


@require_GET
def shared_run_file(request, token, name):
    share, gone = _usable_share(request, token)
    if gone:
        return gone
    path = share.run.output_file(name)
    if path is None:
        raise Http404("No such file in this run.")
    return file_response(path)
