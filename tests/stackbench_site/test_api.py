import json

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from django.urls import reverse
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import negative_data_rejection

from audits.models import ApiToken, Problem, Run, TriageState
from tests.builders import KV_GAPS, logged_in, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def kv(kv_walkthrough_path):
    from audits.importing import import_paths

    import_paths([kv_walkthrough_path], library_name="sqlite3")


def bearer(user):
    return {"HTTP_AUTHORIZATION": f"Bearer {ApiToken.issue(user, 'test')[1]}"}


@pytest.fixture
def maintainer_api(db):
    return bearer(make_user("ci-maintainer", "audits.start_run", "audits.triage_problem"))


@pytest.fixture
def viewer_api(db):
    return bearer(make_user("ci-viewer"))


def test_the_api_needs_a_valid_token(client, kv):
    assert client.get("/api/v1/runs").status_code == 401
    assert client.get("/api/v1/runs", HTTP_AUTHORIZATION="Bearer sb_wrong").status_code == 401
    user = make_user("someone")
    token, key = ApiToken.issue(user, "x")
    assert client.get("/api/v1/runs", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 200
    token.revoked_at = token.created_at
    token.save()
    assert client.get("/api/v1/runs", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 401
    assert ApiToken.objects.get().digest != key, "only a digest of the key is stored"


def test_runs_gaps_and_problems_can_be_listed_and_read(client, viewer_api, kv, import_audit):
    run = import_audit(gaps=KV_GAPS)
    runs = client.get("/api/v1/runs", {"library": "sqlite3", "kind": "audit"}, **viewer_api).json()
    assert [r["id"] for r in runs] == [run.pk] and runs[0]["walkthrough_id"] == "wt_kv_quickstart"
    one = client.get(f"/api/v1/runs/{run.pk}", **viewer_api).json()
    assert one["status"] == "succeeded" and "wt_kv_quickstart_audit.json" in one["files"]
    audit = client.get(f"/api/v1/runs/{run.pk}/files/wt_kv_quickstart_audit.json", **viewer_api)
    assert json.loads(b"".join(audit.streaming_content))["critical_gaps"] == 1
    gaps = client.get("/api/v1/gaps", {"run_id": run.pk, "severity": "critical"}, **viewer_api).json()
    assert [(g["step_number"], g["gap_type"]) for g in gaps] == [(3, "logical_flow")] and gaps[0]["problem_id"]
    problems = client.get("/api/v1/problems", {"lifecycle": "new"}, **viewer_api).json()
    assert {p["gap_type"] for p in problems} == {"logical_flow", "clarity"}
    assert client.get("/api/v1/runs/999999", **viewer_api).status_code == 404


def test_starting_a_run_needs_permission_and_queues_it(client, viewer_api, maintainer_api, kv):
    payload = json.dumps({"kind": "audit", "walkthrough_id": "wt_kv_quickstart", "version": "3.45"})
    refused = client.post("/api/v1/runs", payload, content_type="application/json", **viewer_api)
    assert refused.status_code == 403 and "audits.start_run" in refused.json()["detail"]
    started = client.post("/api/v1/runs", payload, content_type="application/json", **maintainer_api)
    assert started.status_code == 201
    run = Run.objects.get()
    assert (started.json()["id"], run.status, run.library_version, run.origin) == (run.pk, "queued", "3.45", "api")
    cancelled = client.post(f"/api/v1/runs/{run.pk}/cancel", **maintainer_api)
    assert cancelled.json()["status"] == "cancelled"
    assert client.post(f"/api/v1/runs/{run.pk}/cancel", **maintainer_api).status_code == 409
    bad = client.post("/api/v1/runs", json.dumps({"kind": "audit"}), content_type="application/json", **maintainer_api)
    assert bad.status_code == 422 and "walkthrough_id" in json.dumps(bad.json()["detail"])
    unknown = client.post(
        "/api/v1/runs",
        json.dumps({"kind": "audit", "walkthrough_id": "wt_nope"}),
        content_type="application/json",
        **maintainer_api,
    )
    assert unknown.status_code == 404


def test_a_problem_can_be_triaged_through_the_api(client, viewer_api, maintainer_api, kv, import_audit):
    import_audit(gaps=KV_GAPS)
    problem = Problem.objects.get(gap_type="clarity")
    url = f"/api/v1/problems/{problem.pk}"
    change = json.dumps({"triage_state": "wont_fix", "reason": "intentional", "assignee": "ci-maintainer"})
    assert client.patch(url, change, content_type="application/json", **viewer_api).status_code == 403
    missing_reason = client.patch(
        url, json.dumps({"triage_state": "wont_fix"}), content_type="application/json", **maintainer_api
    )
    assert missing_reason.status_code == 422 and "reason" in json.dumps(missing_reason.json()["detail"])
    nobody = client.patch(url, json.dumps({"assignee": "ghost"}), content_type="application/json", **maintainer_api)
    assert nobody.status_code == 404 and "there is no user 'ghost'" in nobody.json()["detail"]
    changed = client.patch(url, change, content_type="application/json", **maintainer_api).json()
    assert (changed["triage_state"], changed["triage_reason"], changed["assignee"]) == (
        "wont_fix",
        "intentional",
        "ci-maintainer",
    )


def test_the_gate_fails_only_on_new_or_regressed_problems(client, viewer_api, kv, import_audit):
    first = import_audit(gaps=KV_GAPS, started="2026-11-01T10:00:00Z")
    gate = client.get(f"/api/v1/runs/{first.pk}/gate", {"fail_on": "new-critical"}, **viewer_api).json()
    assert gate["passed"] is False and [p["severity"] for p in gate["problems"]] == ["critical"]
    second = import_audit(gaps=KV_GAPS, started="2026-11-02T10:00:00Z")
    assert client.get(f"/api/v1/runs/{second.pk}/gate", {"fail_on": "new-info"}, **viewer_api).json()["passed"] is True
    assert client.get(f"/api/v1/runs/{second.pk}/gate", {"fail_on": "everything"}, **viewer_api).status_code == 422


def test_the_gate_answers_what_the_gate_report_of_the_run_says(client, viewer_api, kv, import_audit):
    from audits.reports import gate_report
    from stackbench.formats.results import GATE_LEVELS

    run = import_audit(gaps=KV_GAPS)
    for level in GATE_LEVELS:
        answer = client.get(f"/api/v1/runs/{run.pk}/gate", {"fail_on": level}, **viewer_api).json()
        report = gate_report(run, level)
        assert (answer["passed"], [p["id"] for p in answer["problems"]]) == (
            report.passed,
            [p.pk for p in report.problems],
        ), level


def test_a_nul_character_in_a_name_is_malformed_input_not_a_server_error(client, maintainer_api, viewer_api, kv):
    started = client.post(
        "/api/v1/runs",
        data=json.dumps({"kind": "validation", "library": "sq\x00lite"}),
        content_type="application/json",
        **maintainer_api,
    )
    assert started.status_code == 422 and "pattern" in started.content.decode()
    listed = client.get("/api/v1/gaps", {"library": "sq\x00lite"}, **viewer_api)
    assert listed.status_code == 422


def test_the_problem_filters_are_the_pages_so_both_answer_alike_to_every_state(client, viewer_api, kv, import_audit):
    import_audit(gaps=KV_GAPS)
    Problem.objects.get(gap_type="clarity").set_state(None, TriageState.WONT_FIX, "fixture data")
    page_client = logged_in(make_user("reader"))
    for state in TriageState.values:
        listed = client.get("/api/v1/problems", {"triage_state": state, "library": "SQLITE3"}, **viewer_api).json()
        page = page_client.get(reverse("problems"), {"state": state}).content.decode()
        assert f"<b>{len(listed)}</b><span>problems</span>" in page, state
    assert len(client.get("/api/v1/problems", {"triage_state": "wont_fix"}, **viewer_api).json()) == 1


def test_a_filter_value_the_page_ignores_is_refused_by_the_api_naming_the_parameter(client, viewer_api, kv):
    page_client = logged_in(make_user("reader"))
    for path, page, parameter in (
        ("/api/v1/problems", "problems", "kind"),
        ("/api/v1/runs", "runs", "status"),
        ("/api/v1/gaps", "gaps", "severity"),
    ):
        refused = client.get(path, {parameter: "bogus"}, **viewer_api)
        assert refused.status_code == 422 and refused.json()["detail"][0]["loc"] == ["query", parameter], path
        assert page_client.get(reverse(page), {parameter: "bogus"}).status_code == 200
    refused = client.get("/api/v1/gaps", {"run_id": "9" * 30}, **viewer_api)
    assert refused.status_code == 422 and refused.json()["detail"][0]["loc"] == ["query", "run_id"]
    assert client.get("/api/v1/problems", {"triage_state": "active"}, **viewer_api).status_code == 422


def test_the_openapi_document_describes_the_filters_from_their_forms(client):
    document = client.get("/api/v1/openapi.json").json()
    parameters = {p["name"]: p["schema"] for p in document["paths"]["/api/v1/problems"]["get"]["parameters"]}
    assert parameters["triage_state"]["enum"] == TriageState.values and {"limit", "offset", "library"} <= set(
        parameters
    )
    gaps = {p["name"]: p["schema"] for p in document["paths"]["/api/v1/gaps"]["get"]["parameters"]}
    assert gaps["run_id"] == {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}


def test_the_openapi_document_is_served_without_a_token(client):
    document = client.get("/api/v1/openapi.json").json()
    assert document["info"]["title"] == "Stackbench API"
    assert {"/api/v1/runs", "/api/v1/runs/{run_id}/gate", "/api/v1/problems/{problem_id}"} <= set(document["paths"])


schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())


@pytest.fixture
def keep_the_test_connection():
    """Requests through the WSGI app close database connections when they end (Django's test client avoids
    this the same way), which would close the test's own transaction."""
    from django.core import signals
    from django.db import close_old_connections

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def api_headers(kv, import_audit, keep_the_test_connection):
    import_audit(gaps=KV_GAPS)
    user = make_user("fuzzer", "audits.start_run", "audits.triage_problem")
    return {"Authorization": f"Bearer {ApiToken.issue(user, 'fuzz')[1]}"}


@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_endpoint_keeps_to_its_schema_and_never_errors(case, api_headers):
    # Unknown query parameters are ignored, as REST APIs usually do; every other check applies.
    case.call_and_validate(headers=api_headers, excluded_checks=[negative_data_rejection])


def test_every_api_path_answers_the_same_with_or_without_a_trailing_slash(client, viewer_api, maintainer_api):
    for path in ("/api/v1/runs", "/api/v1/libraries", "/api/v1/gaps", "/api/v1/problems"):
        plain, slashed = client.get(path, **viewer_api), client.get(path + "/", **viewer_api)
        assert (plain.status_code, slashed.status_code) == (200, 200), path
        assert plain.json() == slashed.json()
    payload = json.dumps({"kind": "audit"})
    posted = client.post("/api/v1/runs/", payload, content_type="application/json", **maintainer_api)
    assert posted.status_code == 422, "a POST with a slash is answered in place (here: refused input), never redirected"


def test_ci_can_sync_a_library_and_run_everything_for_the_commit_it_tested(client, viewer_api, kv, tmp_path):
    from audits.models import Batch
    from walkthroughs.models import Library

    lead = bearer(make_user("ci-lead", "audits.start_run", "walkthroughs.manage_library"))
    library = Library.objects.get()
    sync = f"/api/v1/libraries/{library.pk}/sync"
    assert client.post(sync, **viewer_api).status_code == 403
    assert "has no docs repository" in client.post(sync, **lead).json()["detail"]
    Library.objects.filter(pk=library.pk).update(docs_repo=str(tmp_path))
    queued = client.post(sync, **lead)
    assert queued.status_code == 202 and queued.json()["status"] == "queued"
    library.refresh_from_db()
    assert library.sync_pending

    everything = f"/api/v1/libraries/{library.pk}/run-everything"
    stale = client.post(everything, json.dumps({"commit": "abc123"}), content_type="application/json", **lead)
    assert stale.status_code == 409 and "sync first" in stale.json()["detail"]
    started = client.post(everything, "{}", content_type="application/json", **lead)
    assert started.status_code == 201
    batch = Batch.objects.get()
    assert started.json()["id"] == batch.pk and [r["walkthrough_id"] for r in started.json()["runs"]] == [
        "wt_kv_quickstart"
    ]


def test_a_503_of_the_api_says_when_to_try_again(client, maintainer_api, kv, use_broker):
    use_broker("redis://127.0.0.1:1/0")
    payload = json.dumps({"kind": "audit", "walkthrough_id": "wt_kv_quickstart"})
    answer = client.post("/api/v1/runs", payload, content_type="application/json", **maintainer_api)
    assert answer.status_code == 503 and answer["Retry-After"] == "5"
    assert "task queue is not reachable" in answer.json()["detail"]


def test_only_an_unreachable_broker_is_a_503_whatever_the_message_says(client, maintainer_api):
    from walkthroughs.models import Library

    Library.objects.create(name="not reachable")
    payload = json.dumps({"kind": "validation", "library": "not reachable"})
    nothing_to_run = client.post("/api/v1/runs", payload, content_type="application/json", **maintainer_api)
    assert nothing_to_run.status_code == 400, (
        "a library whose name says 'not reachable' has no pages: the client's fault"
    )
    assert "has no doc pages to validate" in nothing_to_run.json()["detail"]


def test_running_everything_while_the_broker_is_down_is_a_503(client, maintainer_api, kv, use_broker):
    from walkthroughs.models import Library

    library = Library.objects.get()
    use_broker("redis://127.0.0.1:1/0")
    answer = client.post(
        f"/api/v1/libraries/{library.pk}/run-everything", "{}", content_type="application/json", **maintainer_api
    )
    assert answer.status_code == 503 and "task queue is not reachable" in answer.json()["detail"]
