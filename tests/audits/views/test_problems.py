import pytest
from django.urls import reverse

from audits.models import Problem, TriageState
from tests.builders import KV_GAPS, logged_in, make_user

pytestmark = pytest.mark.django_db


def test_the_problem_list_filters_by_state_lifecycle_and_assignee(viewer_client, kv, import_audit, viewer):
    import_audit(gaps=KV_GAPS)
    seed = Problem.objects.get(gap_type="logical_flow")
    seed.assign(None, viewer)
    page = viewer_client.get(reverse("problems")).content.decode()
    assert "<b>2</b><span>problems</span>" in page
    mine = viewer_client.get(reverse("problems"), {"assignee": "me"}).content.decode()
    assert "<b>1</b><span>problems</span>" in mine and "seed.csv" in mine
    new = viewer_client.get(reverse("problems"), {"lifecycle": "new_or_regressed"}).content.decode()
    assert "<b>2</b>" in new
    seed.set_state(None, TriageState.WONT_FIX, "fixture data")
    assert "<b>1</b><span>problems</span>" in viewer_client.get(reverse("problems")).content.decode()
    assert "seed.csv" in viewer_client.get(reverse("problems"), {"state": "wont_fix"}).content.decode()


def test_the_problem_page_shows_sightings_presence_and_history(viewer_client, kv, import_audit):
    import_audit(gaps=KV_GAPS, started="2026-11-01T10:00:00Z")
    import_audit(gaps=KV_GAPS[1:], started="2026-11-02T10:00:00Z")
    seed = Problem.objects.get(gap_type="logical_flow")
    page = viewer_client.get(seed.get_absolute_url()).content.decode()
    assert "Seen in <strong>1 of the last 2</strong>" in page and "Fixed" in page
    assert "marked it <strong>fixed</strong>" in page and 'id="triage"' not in page, "viewers cannot triage"


def test_triage_needs_permission_and_a_reason_to_quiet(triager_client, viewer_client, kv, import_audit, viewer):
    import_audit(gaps=KV_GAPS[:1])
    problem = Problem.objects.get()
    url = reverse("problem_triage", args=[problem.pk])
    assert viewer_client.post(url, {"state": "confirmed"}).status_code == 403
    refused = triager_client.post(url, {"state": "false_positive", "reason": "", "assignee": "keep"}, follow=True)
    assert "Say why it is false positive." in refused.content.decode()
    by_hand = triager_client.post(
        url, {"state": "fixed", "reason": "", "assignee": "keep"}, follow=True
    ).content.decode()
    assert "Fixed is set by the system" in by_hand and '<option value="fixed"' not in by_hand
    triager_client.post(
        url, {"state": "false_positive", "reason": "the file ships with the package", "assignee": str(viewer.pk)}
    )
    problem.refresh_from_db()
    assert (problem.triage_state, problem.triage_reason, problem.assignee) == (
        "false_positive",
        "the file ships with the package",
        viewer,
    )
    triager_client.post(reverse("problem_comment", args=[problem.pk]), {"text": "See `MANIFEST.in`."})
    page = triager_client.get(problem.get_absolute_url()).content.decode()
    assert (
        "<code>MANIFEST.in</code>" in page and "changed the state from open to <strong>false_positive</strong>" in page
    )


def test_bulk_changes_are_confirmed_with_their_count_first(triager_client, kv, import_audit):
    import_audit(gaps=KV_GAPS)
    ids = [str(p.pk) for p in Problem.objects.all()]
    confirm = triager_client.post(
        reverse("problems_bulk"),
        {"problem": ids, "action": "confirmed", "scope": "selected", "query": "", "state": "active"},
    ).content.decode()
    assert "Confirm: 2 problems" in confirm and "Change 2 problems" in confirm
    assert set(Problem.objects.values_list("triage_state", flat=True)) == {"open"}
    triager_client.post(
        reverse("problems_bulk"),
        {"problem": ids, "action": "confirmed", "scope": "selected", "confirm": "yes", "query": "", "state": "active"},
    )
    assert set(Problem.objects.values_list("triage_state", flat=True)) == {"confirmed"}
    everything = triager_client.post(
        reverse("problems_bulk"),
        {"action": "wont_fix", "scope": "all", "reason": "old docs", "severity": "warning", "state": "", "query": ""},
    ).content.decode()
    assert "Mark won&#x27;t fix: 1 problem</h1>" in everything and "Change 1 problem<" in everything


def test_bulk_changes_leave_out_what_is_not_a_problem_id_and_refuse_one_too_large(triager_client, kv, import_audit):
    import_audit(gaps=KV_GAPS)
    ids = [str(p.pk) for p in Problem.objects.all()]
    form = {"action": "confirmed", "scope": "selected", "confirm": "yes", "query": "", "state": "active"}
    triager_client.post(reverse("problems_bulk"), {**form, "problem": [*ids, "x", "²"]})
    assert set(Problem.objects.values_list("triage_state", flat=True)) == {"confirmed"}
    refused = triager_client.post(reverse("problems_bulk"), {**form, "problem": [ids[0], "9" * 30]})
    assert refused.status_code == 400 and "The problem parameter is out of range" in refused.content.decode()


def test_the_problem_list_ignores_a_filter_it_does_not_know_and_refuses_an_id_too_large(
    viewer_client, kv, import_audit
):
    import_audit(gaps=KV_GAPS)
    for ignored in ({"library": "abc"}, {"kind": "both"}, {"state": "whatever"}, {"assignee": "²"}, {"sort": "up"}):
        page = viewer_client.get(reverse("problems"), ignored)
        assert page.status_code == 200 and "<b>2</b><span>problems</span>" in page.content.decode(), ignored
    assert "No problems match." in viewer_client.get(reverse("problems"), {"severity": "dire"}).content.decode()
    refused = viewer_client.get(reverse("problems"), {"library": "9" * 30})
    assert refused.status_code == 400 and "The library parameter is out of range" in refused.content.decode()


def test_audit_gaps_and_example_failures_on_the_same_snippet_are_linked(viewer_client, make_walkthrough, tmp_path):
    from audits.importing import import_paths
    from stackbench.formats.results import ValidationResult
    from stackbench.lib.jsonfiles import write_model
    from tests.builders import audit_result

    code = "from toolz import pipee\nprint(pipee)"
    path = make_walkthrough([("Pipes", f"Try:\n\n```python\n{code}\n```\n", "")], name="wt_pipes")
    import_paths([path], library_name="toolz")
    audit = audit_result(
        walkthrough_id="wt_pipes",
        library="toolz",
        total=1,
        completed=1,
        gaps=[(1, "Pipes", "execution_error", "critical", "ImportError: pipee")],
    )
    write_model(tmp_path / "wt_pipes_audit.json", audit)
    write_model(
        tmp_path / "intro_validation.json",
        ValidationResult(
            page="intro.md",
            library="toolz",
            validation_timestamp="2026-11-01T10:00:00Z",
            results=[
                {
                    "example_index": 0,
                    "status": "failure",
                    "severity": "error",
                    "code": code,
                    "error_message": "ImportError: cannot import name 'pipee'",
                }
            ],
        ),
    )
    import_paths([tmp_path / "wt_pipes_audit.json", tmp_path / "intro_validation.json"])
    gap_problem = Problem.objects.get(kind="audit")
    example_problem = Problem.objects.get(kind="validation")
    gap_page = viewer_client.get(gap_problem.get_absolute_url()).content.decode()
    assert "The same code elsewhere" in gap_page and example_problem.get_absolute_url() in gap_page
    example_page = viewer_client.get(example_problem.get_absolute_url()).content.decode()
    assert gap_problem.get_absolute_url() in example_page


def test_gaps_are_triaged_on_the_run_page_where_people_read_them(triager_client, viewer_client, kv, import_audit):
    run = import_audit(gaps=KV_GAPS)
    page = triager_client.get(run.get_absolute_url()).content.decode()
    assert page.count('class="inline-triage small"') == 2 and '<option value="fixed"' not in page
    assert 'class="inline-triage' not in viewer_client.get(run.get_absolute_url()).content.decode()
    beside_steps = triager_client.get(kv.get_absolute_url()).content.decode()
    assert beside_steps.count('class="inline-triage small"') == 2
    problem = Problem.objects.get(severity="critical")
    back = f"{run.get_absolute_url()}#gap-{run.gaps.get(problem=problem).pk}"
    refused = triager_client.post(reverse("problem_triage", args=[problem.pk]), {"state": "wont_fix", "next": back})
    assert refused["Location"] == back
    saved = triager_client.post(
        reverse("problem_triage", args=[problem.pk]),
        {"state": "wont_fix", "reason": "tracked upstream", "next": back},
        follow=True,
    ).content.decode()
    assert "Won&#x27;t fix</span>" in saved and "Triaged: tracked upstream" in saved
    hidden = triager_client.get(run.get_absolute_url(), {"quiet": "hide"}).content.decode()
    assert "seed.csv" not in hidden.split('id="findings"')[1].split("</section>")[0] and "Show it" in hidden
    evil = triager_client.post(
        reverse("problem_triage", args=[problem.pk]), {"state": "open", "next": "//evil.example/"}
    )
    assert evil["Location"] == problem.get_absolute_url()


def test_the_last_triage_change_can_be_undone_by_the_person_who_made_it(triager_client, kv, import_audit):
    import_audit(gaps=KV_GAPS[:1])
    problem = Problem.objects.get()
    triage = reverse("problem_triage", args=[problem.pk])
    triager_client.post(triage, {"state": "confirmed", "assignee": "keep"})
    triager_client.post(triage, {"state": "false_positive", "reason": "shipped in the sdist", "assignee": "keep"})
    page = triager_client.get(problem.get_absolute_url()).content.decode()
    assert "Your last change: confirmed → false_positive." in page
    undone = triager_client.post(reverse("problem_undo", args=[problem.pk]), follow=True).content.decode()
    problem.refresh_from_db()
    assert (problem.triage_state, problem.triage_reason, problem.quiet_rank) == ("confirmed", "", 0)
    assert "Undone: the problem is confirmed again." in undone

    other = logged_in(make_user("other-triager", "audits.triage_problem"))
    refused = other.post(reverse("problem_undo", args=[problem.pk]), follow=True).content.decode()
    assert "There is no triage change of yours to undo here." in refused
