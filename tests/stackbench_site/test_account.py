"""A signed-in person's own API tokens."""

import pytest
from django.urls import reverse

from audits.models import ApiToken
from tests.builders import logged_in, make_user

pytestmark = pytest.mark.django_db


def test_a_new_token_is_shown_once_and_then_only_by_its_start(viewer, viewer_client):
    page = viewer_client.post(reverse("token_create"), {"name": "  docs CI  "}).content.decode()
    token = ApiToken.objects.get(user=viewer)
    key = page.split('<code id="new-token">', 1)[1].split("</code>", 1)[0]
    assert token.name == "docs CI" and key.startswith(token.prefix)
    assert ApiToken.authenticate(key) == viewer
    listing = viewer_client.get(reverse("tokens")).content.decode()
    assert f"{token.prefix}…" in listing and key not in listing and "docs CI" in listing


def test_a_token_without_a_name_is_called_token_and_a_long_name_is_cut(viewer, viewer_client):
    viewer_client.post(reverse("token_create"), {"name": ""})
    viewer_client.post(reverse("token_create"), {"name": "x" * 300})
    assert sorted(len(name) for name in ApiToken.objects.values_list("name", flat=True)) == [5, 100]
    assert ApiToken.objects.filter(name="token").exists()


def test_only_your_own_tokens_are_listed_and_revoked(viewer, viewer_client):
    other = make_user("other")
    theirs, their_key = ApiToken.issue(other, "their CI")
    assert "their CI" not in viewer_client.get(reverse("tokens")).content.decode()
    assert viewer_client.post(reverse("token_revoke", args=[theirs.pk])).status_code == 404
    assert ApiToken.authenticate(their_key) == other


def test_revoking_stops_the_token_and_says_so(viewer, viewer_client):
    token, key = ApiToken.issue(viewer, "laptop")
    response = viewer_client.post(reverse("token_revoke", args=[token.pk]), follow=True)
    assert response.redirect_chain == [(reverse("tokens"), 302)]
    page = response.content.decode()
    assert "Token “laptop” was revoked." in page and "revoked</td>" in page
    assert ApiToken.authenticate(key) is None
    revoked_at = ApiToken.objects.get(pk=token.pk).revoked_at
    viewer_client.post(reverse("token_revoke", args=[token.pk]))
    assert ApiToken.objects.get(pk=token.pk).revoked_at == revoked_at, "revoking again keeps the first time"


def test_tokens_need_a_signed_in_person_and_changes_need_a_post(client, viewer_client):
    for name, args in (("tokens", []), ("token_create", []), ("api_docs", [])):
        response = client.get(reverse(name, args=args))
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert viewer_client.get(reverse("token_create")).status_code == 405
    assert viewer_client.post(reverse("tokens")).status_code == 405


def test_the_api_docs_page_uses_the_vendored_swagger_ui(viewer_client):
    page = viewer_client.get(reverse("api_docs")).content.decode()
    assert "swagger" in page.lower() and "/api/v1/openapi.json" in page
    assert "cdn" not in page.lower() and "https://" not in page


def test_a_superuser_sees_only_their_own_tokens_too(db):
    admin = make_user("admin", superuser=True)
    ApiToken.issue(make_user("someone"), "not yours")
    assert "not yours" not in logged_in(admin).get(reverse("tokens")).content.decode()
