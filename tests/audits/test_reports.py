"""The read-side summaries, from runs stored the way imports store them."""

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audits.importing import import_paths
from audits.models import Problem, Run, RunKind, RunStatus, TriageState, ValidationDocument
from audits.reports import (
    TimelineCell,
    compare_runs,
    gap_counts_by_run,
    gate_report,
    latest_documents,
    latest_finished_audits,
    library_overviews,
    result_counts_by_document,
    sparkline_points,
    step_histories,
    step_timeline,
)
from stackbench.formats.results import ValidationSummary
from stackbench.lib.jsonfiles import write_model
from tests.builders import KV_GAPS, validation_doc
from walkthroughs.models import DocPage, Library, Walkthrough

pytestmark = pytest.mark.django_db

WORDING = (2, "Create the database", "clarity", "info", "Say which file to create.")


@pytest.fixture
def kv(kv_walkthrough_path):
    import_paths([kv_walkthrough_path], library_name="sqlite3")
    return Walkthrough.objects.get()


@pytest.fixture
def import_validation(tmp_path):
    """Store a validation run of toolz's page a.md with examples of the given statuses, the way an import does."""
    counter = {"n": 0}

    def store(statuses, day):
        counter["n"] += 1
        path = tmp_path / f"validation-{counter['n']}" / "validation_summary.json"
        path.parent.mkdir()
        document = validation_doc("a.md", statuses)
        document.validation_timestamp = datetime(2026, 11, day, 10, tzinfo=UTC)
        write_model(path, ValidationSummary(timestamp=f"2026-11-{day:02d}T10:01:00Z", documents=[document]))
        import_paths([path], library_name="toolz")
        return Run.objects.validations().newest_first().first()

    return store


def states(timeline):
    return [[cell.state for cell in cells] for _, cells in timeline.rows]


def test_the_timeline_shows_each_steps_worst_finding_in_every_run_oldest_first(kv, import_audit):
    first = import_audit(gaps=[WORDING], started="2026-11-01T10:00:00Z")
    second = import_audit(gaps=KV_GAPS + [WORDING], started="2026-11-02T10:00:00Z", completed=3)
    running = Run.objects.create(
        kind=RunKind.AUDIT, library=kv.library, walkthrough=kv, status=RunStatus.RUNNING, progress_current=1
    )
    Run.objects.create(kind=RunKind.AUDIT, library=kv.library, walkthrough=kv, status=RunStatus.QUEUED)
    timeline = step_timeline(kv, list(kv.steps.all()))
    assert timeline.runs == [first, second, running], "queued runs have nothing to show yet"
    assert states(timeline) == [
        ["passed", "passed", "passed"],
        ["info", "info", "running"],
        ["passed", "critical", "running"],
        ["passed", "warning", "running"],
        ["passed", "unreached", "running"],
    ]
    cell = timeline.rows[2][1][1]
    assert (cell.run, cell.step_number, cell.count) == (second, 3, 1)


def test_the_timeline_keeps_only_the_newest_runs_it_is_asked_for(kv, import_audit):
    runs = [import_audit(started=f"2026-11-0{day}T10:00:00Z") for day in range(1, 5)]
    assert step_timeline(kv, [], limit=2).runs == runs[2:]
    assert step_timeline(kv, [], limit=None).runs == runs


def test_a_timeline_cell_shows_a_symbol_and_says_what_it_means():
    run = SimpleNamespace(pk=7)
    assert (TimelineCell(run, 3, "critical", 2).symbol, TimelineCell(run, 3, "passed").symbol) == ("▲", "✓")
    assert TimelineCell(run, 3, "critical", 2).label == "Run #7, step 3: 2 gap(s), worst critical"
    assert TimelineCell(run, 4, "unreached").label == "Run #7, step 4: not reached"
    assert TimelineCell(run, 5, "running").label == "Run #7, step 5: not reached yet"


def test_each_steps_history_lists_its_problems_worst_first(kv, import_audit):
    import_audit(gaps=KV_GAPS[1:], started="2026-11-01T10:00:00Z")
    pragma = (4, "Tune the database", "logical_flow", "critical", "No pragma is given.")
    import_audit(gaps=[pragma, *KV_GAPS], started="2026-11-02T10:00:00Z")
    histories = step_histories(kv)
    assert sorted(histories) == [3, 4]
    assert [(p.severity, p.sightings) for p in histories[4]] == [("critical", 1), ("warning", 2)]


def test_a_comparison_splits_findings_into_new_gone_and_still_there(kv, import_audit):
    before = import_audit(gaps=[KV_GAPS[0], WORDING], started="2026-11-01T10:00:00Z")
    after = import_audit(gaps=[KV_GAPS[1], WORDING], started="2026-11-02T10:00:00Z")
    assert compare_runs(after, None) is None
    comparison = compare_runs(after, before)
    assert comparison.previous == before
    assert [(g.run, g.step_number) for g in comparison.new] == [(after, 4)]
    assert [(g.run, g.step_number) for g in comparison.gone] == [(before, 3)]
    assert [(g.run, g.step_number) for g in comparison.still] == [(after, 2)]


def test_a_validation_comparison_matches_failing_examples(import_validation):
    before = import_validation(["failure", "failure", "success"], 1)
    after = import_validation(["success", "failure", "failure"], 2)
    comparison = compare_runs(after, before)
    assert [r.example_index for r in comparison.new] == [2]
    assert [r.example_index for r in comparison.gone] == [0]
    assert [r.example_index for r in comparison.still] == [1]


def test_the_latest_finished_audit_of_each_walkthrough_and_its_gap_counts(kv, import_audit):
    import_audit(gaps=KV_GAPS, started="2026-11-01T10:00:00Z")
    latest = import_audit(gaps=[KV_GAPS[0], WORDING, WORDING], started="2026-11-02T10:00:00Z")
    Run.objects.create(kind=RunKind.AUDIT, library=kv.library, walkthrough=kv, status=RunStatus.RUNNING)
    never = Walkthrough.objects.create(library=kv.library, walkthrough_id="wt_new", title="New")
    annotated = {w.pk: w.latest_run_id for w in latest_finished_audits(Walkthrough.objects.all())}
    assert annotated == {kv.pk: latest.pk, never.pk: None}
    assert gap_counts_by_run([latest.pk]) == {latest.pk: {"critical": 1, "info": 2}}
    assert gap_counts_by_run([]) == {}


def test_the_latest_document_of_each_page_and_its_result_counts(import_validation):
    import_validation(["failure"], 1)
    latest = import_validation(["success", "failure", "skipped", "failure"], 2)
    (page,) = latest_documents(DocPage.objects.all())
    document = ValidationDocument.objects.get(run=latest)
    assert page.latest_document_id == document.pk
    counts = result_counts_by_document([document.pk])[document.pk]
    assert (counts["passed"], counts["failed"], counts["skipped"], counts["error"]) == (1, 2, 1, 2)


def test_a_library_overview_counts_open_findings_of_the_latest_runs_and_their_trend(
    kv, import_audit, import_validation
):
    import_audit(gaps=[KV_GAPS[0]], started="2026-11-01T10:00:00Z")
    import_audit(gaps=KV_GAPS + [WORDING], started="2026-11-02T10:00:00Z")
    Problem.objects.filter(severity="info").update(triage_state=TriageState.WONT_FIX)
    import_validation(["failure", "failure"], 1)
    import_validation(["failure", "success"], 2)
    sqlite, toolz = library_overviews(Library.objects.order_by("name"))
    assert sqlite.open_gaps == {"critical": 1, "warning": 1}, "what was judged won't fix is not open"
    assert sqlite.gap_trend == [1, 3] and sqlite.failure_trend == []
    assert toolz.failing_examples == {"error": 1} and toolz.failure_trend == [2, 1]
    assert sqlite.open_total == 2 and toolz.open_total == 1 and sqlite.has_trend
    assert [run.pk for run in sqlite.recent_runs] == list(
        Run.objects.filter(library=sqlite.library).newest_first().values_list("pk", flat=True)
    )
    assert sqlite.gap_sparkline == "0.0,18.0 120.0,2.0"
    assert sqlite.failure_sparkline == ""


def test_a_library_without_runs_has_an_empty_overview(db):
    (overview,) = library_overviews([Library.objects.create(name="quiet")])
    assert (overview.open_total, overview.has_trend, overview.recent_runs) == (0, False, [])


def test_the_overviews_take_the_same_number_of_queries_whatever_the_runs(kv, import_audit):
    import_audit(gaps=KV_GAPS, started="2026-10-01T10:00:00Z")

    def queries():
        with CaptureQueriesContext(connection) as captured:
            library_overviews(list(Library.objects.all()))
        return len(captured)

    few = queries()
    for day in range(2, 20):
        import_audit(gaps=KV_GAPS, started=f"2026-10-{day:02d}T10:00:00Z")
    Library.objects.create(name="another")
    assert queries() == few


def test_the_overview_keeps_only_the_last_runs_of_the_trend(kv, import_audit):
    for day in range(1, 6):
        import_audit(gaps=KV_GAPS[: day % 3], started=f"2026-11-{day:02d}T10:00:00Z")
    (overview,) = library_overviews(Library.objects.all(), recent=1, trend_runs=3)
    assert overview.gap_trend == [0, 1, 2] and len(overview.recent_runs) == 1


@pytest.mark.parametrize(
    "values, top, points",
    [
        ([], None, ""),
        ([5], None, "0.0,2.0"),
        ([0, 0], None, "0.0,26.0 120.0,26.0"),
        ([0, 2, 4], None, "0.0,26.0 60.0,14.0 120.0,2.0"),
        ([2], 4, "0.0,14.0"),
    ],
)
def test_a_sparkline_spreads_its_points_over_the_width_and_scales_to_the_top(values, top, points):
    assert sparkline_points(values, top=top) == points


def test_the_gate_lists_a_runs_problems_at_or_above_the_level_worst_first(kv, import_audit):
    run = import_audit(gaps=KV_GAPS)
    report = gate_report(run, "open-warning")
    assert [p.severity for p in report.problems] == ["critical", "warning"] and not report.passed
    assert [p.severity for p in gate_report(run, "open-critical").problems] == ["critical"]


def test_a_run_passes_the_gate_only_when_it_succeeded_and_nothing_offends(kv, import_audit):
    import_audit(gaps=KV_GAPS, started="2026-11-01T10:00:00Z")
    again = import_audit(gaps=KV_GAPS, started="2026-11-02T10:00:00Z")
    assert gate_report(again, "new-info").passed, "nothing is new in the second run"
    Run.objects.filter(pk=again.pk).update(status=RunStatus.FAILED)
    again.refresh_from_db()
    report = gate_report(again, "new-info")
    assert report.problems == [] and not report.passed, "a failed run has not shown the docs are fine"
