"""Error pages in the user's terms: which limit a refused request hit, and JSON for the API even where no route
matches."""

import pytest
from django.core.exceptions import (
    BadRequest,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import Http404
from django.test import RequestFactory
from django.urls import reverse

from audits.models import ApiToken
from stackbench_site.errors import bad_request, not_found
from stackbench_site.queries import QueryRefused
from tests.builders import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer_api(db):
    return {"HTTP_AUTHORIZATION": f"Bearer {ApiToken.issue(make_user('ci-viewer'), 'test')[1]}"}


def refusal(exception) -> tuple[int, str]:
    response = bad_request(RequestFactory().get("/"), exception)
    return response.status_code, response.content.decode()


@pytest.mark.parametrize(
    ("exception", "message"),
    [
        (TooManyFilesSent(), "Too many files in one upload: the limit is 7."),
        (RequestDataTooBig(), "The form data is over the 2.0\xa0KB limit."),
        (TooManyFieldsSent(), "Too many form fields: the limit is 9."),
        (
            QueryRefused("The run parameter is out of range: too large."),
            "The run parameter is out of range: too large.",
        ),
        (BadRequest("internal detail"), "The request could not be understood."),
        (SuspiciousOperation("internal detail"), "The request could not be understood."),
    ],
)
def test_a_refused_request_says_which_limit_it_hit(settings, exception, message):
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 7
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 9
    status, page = refusal(exception)
    assert status == 400 and f'<p role="alert">{message}</p>' in page
    assert "internal detail" not in page


def test_a_form_with_too_many_fields_is_refused_by_the_sites_own_page(client, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 2
    response = client.post(reverse("login"), {"username": "a", "password": "b", "next": "/"})
    assert response.status_code == 400
    assert "Too many form fields: the limit is 2." in response.content.decode()


def test_a_page_no_route_matches_is_the_usual_html_404():
    response = not_found(RequestFactory().get("/no-such-page/"), Http404())
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")


def test_a_url_no_api_route_matches_is_a_json_404(client, viewer_api):
    response = client.get("/api/v1/runs/1/files/a%0Ab", **viewer_api)
    assert (response.status_code, response["Content-Type"], response.json()) == (
        404,
        "application/json",
        {"detail": "Not Found"},
    )
    assert client.get("/no-such-page/")["Content-Type"].startswith("text/html")
