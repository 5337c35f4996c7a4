import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url", ["/", "/login/", "/api/v1/openapi.json", "/runs/", "/nowhere/"])
def test_every_response_allows_only_our_own_scripts_and_no_framing(viewer_client, url):
    response = viewer_client.get(url)
    policy = dict(part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";"))
    assert policy["script-src"] == "'self'" and policy["default-src"] == "'self'"
    assert policy["object-src"] == "'none'" and policy["frame-ancestors"] == "'none'"
    assert response["X-Frame-Options"] == "DENY" and response["X-Content-Type-Options"] == "nosniff"
