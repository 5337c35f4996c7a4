"""Problems: one per finding across runs, with a lifecycle computed when each run completes, and triage."""

import pytest

from audits.models import Lifecycle, Problem, Run, TriageState, gate_problems, record_problems
from tests.builders import KV_GAPS

pytestmark = pytest.mark.django_db

SEED, TUNE = KV_GAPS


@pytest.fixture(autouse=True)
def kv(kv_walkthrough_path):
    from audits.importing import import_paths

    import_paths([kv_walkthrough_path], library_name="sqlite3")


def test_a_first_sighting_is_new_then_ongoing(import_audit):
    first = import_audit(gaps=[SEED], started="2026-11-01T10:00:00Z")
    problem = Problem.objects.get()
    assert (problem.lifecycle, problem.sightings, problem.first_run, problem.severity) == (
        Lifecycle.NEW,
        1,
        first,
        "critical",
    )
    second = import_audit(gaps=[SEED], started="2026-11-02T10:00:00Z")
    problem.refresh_from_db()
    assert (problem.lifecycle, problem.sightings, problem.last_run, problem.first_run) == (
        Lifecycle.ONGOING,
        2,
        second,
        first,
    )
    assert list(second.gaps.values_list("problem", flat=True)) == [problem.pk]


def test_absent_from_a_later_complete_run_it_is_fixed_and_verified(import_audit):
    import_audit(gaps=[SEED], started="2026-11-01T10:00:00Z")
    fixer = import_audit(gaps=[], started="2026-11-02T10:00:00Z")
    problem = Problem.objects.get()
    assert (problem.lifecycle, problem.lifecycle_run, problem.triage_state) == (
        Lifecycle.FIXED,
        fixer,
        TriageState.FIXED,
    )
    assert [e.kind for e in problem.events.all()] == ["lifecycle", "state"]


def test_a_partial_or_failed_run_never_fixes_anything(import_audit):
    import_audit(gaps=[SEED], started="2026-11-01T10:00:00Z")
    import_audit(gaps=[], started="2026-11-02T10:00:00Z", completed=2)
    assert Problem.objects.get().lifecycle == Lifecycle.NEW
    first = Run.objects.earliest("pk")
    failed = Run.objects.create(
        kind="audit",
        library=first.library,
        walkthrough=first.walkthrough,
        status="failed",
        progress_current=5,
        progress_total=5,
        started_at="2026-11-03T10:00:00Z",
    )
    record_problems(failed)
    assert Problem.objects.get().lifecycle == Lifecycle.NEW


def test_seen_again_after_it_was_fixed_it_has_regressed_and_reopens(import_audit):
    import_audit(gaps=[SEED], started="2026-11-01T10:00:00Z")
    import_audit(gaps=[], started="2026-11-02T10:00:00Z")
    back = import_audit(gaps=[SEED], started="2026-11-03T10:00:00Z")
    problem = Problem.objects.get()
    assert (problem.lifecycle, problem.lifecycle_run, problem.triage_state) == (
        Lifecycle.REGRESSED,
        back,
        TriageState.OPEN,
    )
    assert "Seen again in run" in problem.reopened_reason


def test_quieted_problems_stay_quiet_unless_their_severity_rises(import_audit, maintainer):
    warning = (4, "Tune the database", "clarity", "warning", "No concrete instruction.")
    import_audit(gaps=[warning], started="2026-11-01T10:00:00Z")
    problem = Problem.objects.get()
    with pytest.raises(ValueError, match="say why"):
        problem.set_state(maintainer, TriageState.WONT_FIX)
    problem.set_state(maintainer, TriageState.WONT_FIX, "tuning is out of scope")
    import_audit(gaps=[warning], started="2026-11-02T10:00:00Z")
    problem.refresh_from_db()
    assert problem.triage_state == TriageState.WONT_FIX
    import_audit(
        gaps=[(4, "Tune the database", "clarity", "critical", "No concrete instruction.")],
        started="2026-11-03T10:00:00Z",
    )
    problem.refresh_from_db()
    assert problem.triage_state == TriageState.OPEN
    assert problem.reopened_reason.startswith("Its severity rose from warning to critical in run #")


def test_recording_a_run_twice_changes_nothing(import_audit):
    run = import_audit(gaps=[SEED], started="2026-11-01T10:00:00Z")
    record_problems(run)
    problem = Problem.objects.get()
    assert problem.sightings == 1 and problem.lifecycle == Lifecycle.NEW


def test_assignment_and_comments_are_in_the_history(import_audit, maintainer, viewer):
    import_audit(gaps=[SEED])
    problem = Problem.objects.get()
    problem.assign(maintainer, viewer)
    problem.add_comment(maintainer, "Looking at it **now**.")
    assert [(e.kind, e.after) for e in problem.events.all()] == [("assignee", "viewer"), ("comment", "")]
    assert problem.comments.get().text == "Looking at it **now**."


def test_a_rerun_cannot_turn_the_default_gate_green_while_problems_stay_open(import_audit, maintainer):
    import_audit(gaps=[SEED, TUNE], started="2026-11-01T10:00:00Z")
    rerun = import_audit(gaps=[SEED, TUNE], started="2026-11-02T10:00:00Z")
    assert gate_problems(rerun, "new-critical") == []
    assert [p.severity for p in gate_problems(rerun, "open-critical")] == ["critical"]
    assert len(gate_problems(rerun, "open-warning")) == 2
    Problem.objects.get(severity="critical").set_state(maintainer, TriageState.WONT_FIX, "known, tracked elsewhere")
    assert gate_problems(rerun, "open-critical") == []


def test_the_gate_counts_only_new_or_regressed_problems_at_or_above_the_severity(import_audit, maintainer):
    first = import_audit(gaps=[SEED, TUNE], started="2026-11-01T10:00:00Z")
    assert {p.severity for p in gate_problems(first, "new-critical")} == {"critical"}
    assert len(gate_problems(first, "new-warning")) == 2
    second = import_audit(gaps=[SEED, TUNE], started="2026-11-02T10:00:00Z")
    assert gate_problems(second, "new-info") == [], "nothing new in the second run"
    third = import_audit(
        gaps=[SEED, TUNE, (5, "Read a value", "completeness", "info", "No check.")], started="2026-11-03T10:00:00Z"
    )
    assert [p.gap_type for p in gate_problems(third, "new-info")] == ["completeness"]
    assert gate_problems(third, "new-warning") == []
    new = Problem.objects.get(gap_type="completeness")
    new.set_state(maintainer, TriageState.FALSE_POSITIVE, "the output is shown")
    assert gate_problems(third, "new-info") == []
    with pytest.raises(ValueError, match="unknown threshold"):
        gate_problems(third, "everything")
