"""Runs: their folder, and their gaps by step."""

import pytest

from audits.importing import import_paths
from audits.models import Problem, Run, TriageState
from tests.builders import KV_GAPS
from walkthroughs.models import Library, Walkthrough

pytestmark = pytest.mark.django_db


@pytest.fixture
def kv(kv_walkthrough_path):
    """The sample walkthrough, stored, in a library with a default version and a synced docs commit."""
    import_paths([kv_walkthrough_path], library_name="sqlite3")
    Library.objects.update(default_version="3.45", docs_commit="c0ffee")
    return Walkthrough.objects.select_related("library").get()


def _stored(run, *fields):
    return Run.objects.filter(pk=run.pk).values(*fields).get()


def test_gaps_by_step_can_leave_out_the_quieted_ones(kv, import_audit, maintainer):
    seed, tune = KV_GAPS
    run = import_audit(gaps=[seed, tune])
    Problem.objects.get(severity="critical").set_state(maintainer, TriageState.FALSE_POSITIVE, "it is shown")

    def severities(hide_quiet):
        return [(step, [gap.severity for gap in gaps]) for (step, _), gaps in run.gaps_by_step(hide_quiet)]

    assert severities(hide_quiet=False) == [(seed[0], ["critical"]), (tune[0], ["warning"])]
    assert severities(hide_quiet=True) == [(tune[0], ["warning"])]


def test_page_tasks_of_one_run_holding_stale_copies_share_its_one_folder(kv, settings, tmp_path):
    settings.RUNS_DIR = tmp_path / "runs"
    stored = Run.objects.create(kind="validation", library=Library.objects.get(), status="running")
    first, second = Run.objects.get(pk=stored.pk), Run.objects.get(pk=stored.pk)  # each task loaded the run
    assert first.ensure_output_dir() == second.ensure_output_dir()
    assert [path.name for path in (tmp_path / "runs").iterdir()] == [first.output_path().name]
