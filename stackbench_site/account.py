"""The signed-in person's own things: API tokens for scripts and CI."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from audits.models import ApiToken


@login_required
@require_GET
def tokens(request):
    return render(request, "account/tokens.html", {"tokens": request.user.api_tokens.all()})


@login_required
@require_POST
def token_create(request):
    token, key = ApiToken.issue(request.user, request.POST.get("name", "").strip()[:100])
    return render(
        request, "account/tokens.html", {"tokens": request.user.api_tokens.all(), "new_key": key, "new_token": token}
    )


@login_required
@require_POST
def token_revoke(request, token_id):
    token = get_object_or_404(ApiToken, pk=token_id, user=request.user)
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    messages.success(request, f"Token “{token.name}” was revoked.")
    return redirect("tokens")


@login_required
@require_GET
def api_docs(request):
    """The API's interactive docs, drawn from its OpenAPI document with the vendored Swagger UI (no CDN)."""
    return render(request, "account/api_docs.html")
