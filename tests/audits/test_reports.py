import pytest

from audits.models import Run, RunStatus
from audits.reports import gate_report
from tests.builders import KV_GAPS

pytestmark = pytest.mark.django_db


@pytest.fixture
def kv(kv_walkthrough_path):
    from audits.importing import import_paths

    import_paths([kv_walkthrough_path], library_name="sqlite3")


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
