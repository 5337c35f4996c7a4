"""Runs: how a new one is stored (queued for a worker, or read from another machine's files), its folder, and its
gaps by step."""

from datetime import UTC, datetime

import pytest

from audits.importing import import_paths
from audits.models import Problem, Run, RunBackend, RunKind, RunStatus, TriageState
from tests.builders import KV_GAPS
from walkthroughs.models import Library, Walkthrough

pytestmark = pytest.mark.django_db

STARTED = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
FINISHED = datetime(2026, 11, 1, 10, 5, tzinfo=UTC)
# What both ways of storing a run set, one way or the other.
AUDIT_FIELDS = (
    "kind",
    "library",
    "library_version",
    "walkthrough",
    "walkthrough_hash",
    "backend",
    "status",
    "started_by",
    "origin",
    "options",
    "previous_run",
    "progress_total",
    "docs_commit",
    "batch",
    "import_key",
)


@pytest.fixture
def kv(kv_walkthrough_path):
    """The sample walkthrough, stored, in a library with a default version and a synced docs commit."""
    import_paths([kv_walkthrough_path], library_name="sqlite3")
    Library.objects.update(default_version="3.45", docs_commit="c0ffee")
    return Walkthrough.objects.select_related("library").get()


def _stored(run, *fields):
    return Run.objects.filter(pk=run.pk).values(*fields).get()


def test_a_queued_audit_notes_the_walkthrough_export_and_the_docs_commit_it_will_read(kv, maintainer):
    earlier = Run.objects.queue(kv.library, walkthrough=kv, backend=RunBackend.RULES, progress_total=5)
    run = Run.objects.queue(
        kv.library,
        walkthrough=kv,
        backend=RunBackend.CLAUDE,
        user=maintainer,
        origin="api",
        options={"max_turns": 3},
        previous_run=earlier,
        progress_total=5,
    )
    assert kv.content_hash
    assert _stored(run, *AUDIT_FIELDS) == {
        "kind": RunKind.AUDIT,
        "library": kv.library.pk,
        "library_version": "3.45",
        "walkthrough": kv.pk,
        "walkthrough_hash": kv.content_hash,
        "backend": RunBackend.CLAUDE,
        "status": RunStatus.QUEUED,
        "started_by": maintainer.pk,
        "origin": "api",
        "options": {"max_turns": 3},
        "previous_run": earlier.pk,
        "progress_total": 5,
        "docs_commit": "c0ffee",
        "batch": None,
        "import_key": None,
    }
    assert _stored(earlier, "origin", "options", "started_by") == {
        "origin": "dashboard",
        "options": {},
        "started_by": None,
    }


def test_a_queued_validation_has_no_walkthrough_and_keeps_the_version_asked_for(kv):
    run = Run.objects.queue(kv.library, version="3.40", backend=RunBackend.VENV, progress_total=4)
    assert _stored(run, "kind", "walkthrough", "walkthrough_hash", "library_version", "backend", "docs_commit") == {
        "kind": RunKind.VALIDATION,
        "walkthrough": None,
        "walkthrough_hash": "",
        "library_version": "3.40",
        "backend": RunBackend.VENV,
        "docs_commit": "c0ffee",
    }


def test_an_imported_audit_counts_as_created_when_it_started_and_reads_no_docs_commit(kv, maintainer):
    run = Run.objects.record_import(
        kv.library,
        key="k" * 64,
        started_at=STARTED,
        finished_at=FINISHED,
        walkthrough=kv,
        version="3.40",
        user=maintainer,
        duration_seconds=300.0,
        progress_current=4,
        progress_total=5,
    )
    stored = _stored(run, *AUDIT_FIELDS, "created_at", "started_at", "finished_at", "duration_seconds", "error")
    assert stored == {
        "kind": RunKind.AUDIT,
        "library": kv.library.pk,
        "library_version": "3.40",
        "walkthrough": kv.pk,
        "walkthrough_hash": kv.content_hash,
        "backend": RunBackend.IMPORTED,
        "status": RunStatus.SUCCEEDED,
        "started_by": maintainer.pk,
        "origin": "imported",
        "options": {},
        "previous_run": None,
        "progress_total": 5,
        "docs_commit": "",
        "batch": None,
        "import_key": "k" * 64,
        "created_at": STARTED,
        "started_at": STARTED,
        "finished_at": FINISHED,
        "duration_seconds": 300.0,
        "error": "",
    }
    assert _stored(run, "progress_current") == {"progress_current": 4}


def test_an_imported_session_that_stopped_keeps_its_status_and_why(kv):
    run = Run.objects.record_import(
        kv.library,
        key="s" * 64,
        started_at=STARTED,
        finished_at=FINISHED,
        walkthrough=kv,
        status=RunStatus.FAILED,
        error="The session stopped after step 2 of 5.",
        progress_current=2,
        progress_total=5,
    )
    assert _stored(run, "status", "error", "library_version", "duration_seconds", "started_by") == {
        "status": RunStatus.FAILED,
        "error": "The session stopped after step 2 of 5.",
        "library_version": "",
        "duration_seconds": None,
        "started_by": None,
    }


def test_an_imported_validation_has_no_walkthrough(kv):
    run = Run.objects.record_import(
        kv.library, key="v" * 64, started_at=STARTED, finished_at=STARTED, version="3.40", progress_total=4
    )
    assert _stored(run, "kind", "walkthrough", "walkthrough_hash", "backend", "origin", "created_at") == {
        "kind": RunKind.VALIDATION,
        "walkthrough": None,
        "walkthrough_hash": "",
        "backend": RunBackend.IMPORTED,
        "origin": "imported",
        "created_at": STARTED,
    }


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
