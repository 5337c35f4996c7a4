"""Every URL of the site: anonymous people are sent to the login page (except the login page itself, share
links and the token-authenticated API), and viewers get 403 from everything that changes something."""

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from audits.models import ApiToken, Batch, Problem, ShareLink
from tests.builders import KV_GAPS
from walkthroughs.models import PresentedWalkthrough

pytestmark = pytest.mark.django_db

PUBLIC = {"login", "logout", "shared_run", "shared_run_file"}
MUTATING = {
    "run_cancel",
    "new_audit",
    "new_validation",
    "rerun",
    "upload",
    "problem_triage",
    "problem_undo",
    "problem_comment",
    "problems_bulk",
    "run_share",
    "share_revoke",
    "presented_new",
    "presented_choose",
    "presented_reply",
    "presented_action",
    "presented_clear",
    "library_new",
    "library_settings",
    "library_sync",
    "run_everything",
}
OWN_THINGS = {"token_create", "token_revoke"}  # any signed-in person manages their own tokens


def named_patterns(resolver=None, namespace=""):
    for pattern in (resolver or get_resolver()).url_patterns:
        if isinstance(pattern, URLResolver):
            if pattern.namespace in ("admin", "api"):
                continue
            yield from named_patterns(pattern, pattern.namespace or namespace)
        elif isinstance(pattern, URLPattern) and pattern.name:
            yield pattern


@pytest.fixture
def everything(kv_walkthrough_path, import_audit, settings, symposium_repo, review_walkthrough, maintainer):
    from audits.importing import import_paths

    import_paths([kv_walkthrough_path], library_name="sqlite3")
    run = import_audit(gaps=KV_GAPS)
    settings.STACKBENCH_REPO_ROOTS = [str(symposium_repo.parent)]
    presented = PresentedWalkthrough.present(review_walkthrough, str(symposium_repo))
    share = ShareLink.objects.create(run=run)
    token, _ = ApiToken.issue(maintainer, "x")
    batch = Batch.objects.create(library=run.library)
    return {
        "batch_id": batch.pk,
        "library_id": run.library_id,
        "walkthrough_id": run.walkthrough_id,
        "page_id": 1,
        "run_id": run.pk,
        "problem_id": Problem.objects.first().pk,
        "presented_id": presented.pk,
        "share_id": share.pk,
        "token_id": token.pk,
        "key": "highlights.1",
        "token": share.token,
        "name": "wt_kv_quickstart_audit.json",
        "path": "img/logo.png",
    }


def url_for(pattern, values):
    return reverse(pattern.name, kwargs={name: values[name] for name in pattern.pattern.converters})


def test_every_page_sends_anonymous_people_to_the_login_page(client, everything, sample_dir):
    from audits.importing import import_paths

    import_paths([sample_dir / "extraction"])
    checked = 0
    for pattern in named_patterns():
        if pattern.name in PUBLIC:
            continue
        url = url_for(pattern, everything)
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/"), (
            pattern.name,
            response.status_code,
        )
        checked += 1
    assert checked > 25


def test_share_links_and_the_login_page_need_no_account(client, everything):
    assert client.get(reverse("login")).status_code == 200
    assert client.get(reverse("shared_run", args=[everything["token"]])).status_code == 200


def test_the_api_answers_401_without_a_token(client):
    assert client.get("/api/v1/runs").status_code == 401
    assert client.post("/api/v1/runs", "{}", content_type="application/json").status_code == 401


def test_viewers_get_403_from_every_endpoint_that_changes_something(viewer_client, everything):
    seen_mutating = set()
    for pattern in named_patterns():
        if pattern.name in PUBLIC or pattern.name in OWN_THINGS:
            continue
        url = url_for(pattern, everything)
        response = viewer_client.post(url, {"state": "confirmed", "message": "x", "match": "src/auth.py:4"})
        if pattern.name in MUTATING:
            assert response.status_code == 403, (pattern.name, response.status_code)
            seen_mutating.add(pattern.name)
        else:
            assert response.status_code == 405, f"{pattern.name} accepts POST but is not known to change anything"
    assert seen_mutating == MUTATING


def test_mutating_endpoints_need_the_csrf_token(everything, maintainer):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(maintainer)
    response = client.post(reverse("run_cancel", args=[everything["run_id"]]))
    assert response.status_code == 403 and b"CSRF" in response.content
