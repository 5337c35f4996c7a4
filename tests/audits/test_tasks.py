import json

import pytest
from django.urls import reverse
from django_celery_results.models import TaskResult

from audits.actions import do_start_audit
from audits.importing import import_paths
from audits.models import Run, RunStatus, ShareLink
from audits.tasks import run_audit_task
from tests.builders import wait_for
from walkthroughs.models import Walkthrough

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def kv_walkthrough(kv_walkthrough_path):
    import_paths([kv_walkthrough_path], library_name="sqlite3")
    return Walkthrough.objects.get(walkthrough_id="wt_kv_quickstart")


def _finished(run_id):
    run = Run.objects.get(pk=run_id)
    return run if not run.is_active else None


def test_a_real_worker_takes_the_audit_off_the_broker_and_the_results_land_in_the_database(
    kv_walkthrough, celery_worker
):
    run = do_start_audit(kv_walkthrough, origin="test")
    assert run.status == RunStatus.QUEUED and run.progress_total == 5
    run = wait_for(lambda: _finished(run.pk), message="the audit run to finish")
    assert run.status == RunStatus.SUCCEEDED, run.error
    # Every step followed; step 3 reads a file no step made, so four are completed.
    assert (run.progress_current, run.progress_total) == (4, 5)
    assert [record["status"] for record in run.step_records()].count("done") == 4
    assert list(run.gaps.values_list("step_number", "gap_type", "severity")) == [
        (3, "logical_flow", "critical"),
        (4, "clarity", "info"),  # wording alone is info: nothing failed
    ]
    assert {
        "wt_kv_quickstart_audit.json",
        "wt_kv_quickstart_session.json",
        "agent_logs/audit.log",
        "agent_logs/audit_tools.jsonl",
    } <= set(run.output_files)
    audit = json.loads(run.output_file("wt_kv_quickstart_audit.json").read_text())
    assert audit["library_name"] == "sqlite3" and len(audit["gaps"]) == 2
    assert run.duration_seconds > 0 and run.started_at and run.finished_at
    assert wait_for(
        lambda: TaskResult.objects.filter(task_id=run.celery_task_id, status="SUCCESS").exists(),
        message="the task result row",
    )


def test_a_redelivered_task_is_a_no_op(kv_walkthrough, monkeypatch):
    run = Run.objects.create(
        kind="audit", library=kv_walkthrough.library, walkthrough=kv_walkthrough, status=RunStatus.SUCCEEDED
    )
    run_audit_task(run.pk)
    assert not run.gaps.exists() and Run.objects.get(pk=run.pk).status == RunStatus.SUCCEEDED


def test_the_task_runs_inline_and_stores_gaps_as_they_are_reported(kv_walkthrough, monkeypatch):
    from audits import tasks

    seen = []
    original = tasks.RunObserver.gap_reported

    def spy(self, seq, gap):
        original(self, seq, gap)
        seen.append(self.run.gaps.count())

    monkeypatch.setattr(tasks.RunObserver, "gap_reported", spy)
    run = Run.objects.create(
        kind="audit",
        library=kv_walkthrough.library,
        walkthrough=kv_walkthrough,
        status=RunStatus.QUEUED,
        backend="rules",
    )
    run_audit_task(run.pk)
    assert seen == [1, 2]
    assert Run.objects.get(pk=run.pk).status == RunStatus.SUCCEEDED


def test_a_run_records_the_readers_machine_its_library_asks_for(kv_walkthrough):
    from stackbench.sandbox.machine import pythons

    oldest = next(iter(pythons()))
    library = kv_walkthrough.library
    library.python_version, library.network = oldest, "none"
    library.save()
    run = Run.objects.create(kind="audit", library=library, walkthrough=kv_walkthrough, status=RunStatus.QUEUED)
    run_audit_task(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.environment["confinement"] == "bubblewrap"
    assert (run.environment["python"], run.environment["network"]) == (oldest, "none")


def test_a_python_the_worker_does_not_have_fails_the_run_saying_which_it_has(kv_walkthrough):
    library = kv_walkthrough.library
    library.python_version = "2.7"
    library.save()
    run = Run.objects.create(kind="audit", library=library, walkthrough=kv_walkthrough, status=RunStatus.QUEUED)
    run_audit_task(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "Python 2.7 is not on this worker; it has 3." in run.error


def test_a_validation_run_spreads_documents_over_the_worker_and_stores_every_result(celery_worker, sample_dir):
    from audits.actions import do_start_validation
    from audits.models import ExampleResult
    from walkthroughs.models import DocPage, Library

    import_paths([sample_dir / "extraction"])
    toolz = Library.objects.get(name="toolz")
    run = do_start_validation(toolz, list(DocPage.objects.filter(library=toolz)), origin="test")
    assert run.status == RunStatus.QUEUED and run.progress_total == 4 and run.documents.count() == 1
    run = wait_for(lambda: _finished(run.pk), timeout=120, message="the validation run to finish")
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.progress_current == 4
    statuses = list(ExampleResult.objects.filter(document__run=run).values_list("example_index", "status", "severity"))
    assert statuses == [(0, "success", None), (1, "success", None), (2, "success", None), (3, "failure", "error")], (
        list(ExampleResult.objects.filter(document__run=run).values_list("error_message"))
    )
    assert set(run.output_files) == {"toolz_intro_validation.json", "validation_summary.json"}
    summary = json.loads(run.output_file("validation_summary.json").read_text())
    assert summary["total_examples"] == 4 and summary["failed_by_severity"]["error"] == 1
    assert run.documents.get().worker.startswith("stackbench-")
    assert run.environment["confinement"] == "bubblewrap" and run.environment["network"] == "registries only"


def test_a_redelivered_document_task_does_not_run_twice(sample_dir):
    from audits.models import ValidationDocument
    from audits.tasks import validate_document_task
    from walkthroughs.models import DocPage, Library

    import_paths([sample_dir / "extraction"])
    toolz = Library.objects.get(name="toolz")
    page = DocPage.objects.get(library=toolz)
    run = Run.objects.create(kind="validation", library=toolz, status=RunStatus.QUEUED, backend="venv")
    document = ValidationDocument.objects.create(
        run=run, doc_page=page, page=page.page, library_name="toolz", version="0.12.1"
    )
    ValidationDocument.objects.filter(pk=document.pk).update(started_at="2026-01-01T00:00:00Z")
    validate_document_task(run.pk, document.pk)
    assert not document.results.exists()


def test_a_queued_run_whose_message_was_lost_is_sent_again_and_runs(kv_walkthrough, celery_worker):
    from datetime import timedelta

    from django.utils import timezone

    from audits.tasks import resend_lost_messages

    lost = Run.objects.create(
        kind="audit",
        library=kv_walkthrough.library,
        walkthrough=kv_walkthrough,
        status=RunStatus.QUEUED,
        queued_at=timezone.now() - timedelta(hours=1),
    )
    fresh = Run.objects.create(kind="audit", library=kv_walkthrough.library, walkthrough=kv_walkthrough)
    assert resend_lost_messages(seconds=300) == [(lost.pk, "resent")]
    assert resend_lost_messages(seconds=300) == [], "sent once per period, not at every check"
    run = wait_for(lambda: _finished(lost.pk), message="the recovered run to finish")
    assert run.status == RunStatus.SUCCEEDED and run.attempts == 1, "our lost message costs the run no attempt"
    assert Run.objects.get(pk=fresh.pk).status == RunStatus.QUEUED


def test_the_dashboard_says_when_the_recovery_schedule_has_stopped(viewer_client):
    from datetime import timedelta

    from django.utils import timezone

    from audits.models import ServiceBeat
    from audits.tasks import recover_stale_runs_task

    assert 'id="recovery-alert"' not in viewer_client.get("/").content.decode(), "never ran: nothing to say yet"
    ServiceBeat.objects.create(name=ServiceBeat.RECOVERY, at=timezone.now() - timedelta(minutes=20))
    page = viewer_client.get("/").content.decode()
    assert 'id="recovery-alert"' in page and "stalled runs were last checked 20\xa0minutes ago" in page
    recover_stale_runs_task()
    assert 'id="recovery-alert"' not in viewer_client.get("/").content.decode()


def test_a_walkthrough_relinking_its_logs_to_a_host_file_shows_nobody_that_file(
    celery_worker, make_walkthrough, root_only, maintainer_client, client
):
    _, secret = root_only
    relink = (
        "import glob, os\n"
        "for path in glob.glob('/run/stackbench/*'):\n"
        f"    os.remove(path); os.symlink('{secret}', path)\n"
    )
    hostile = make_walkthrough(
        [
            ("Relink", f"```python\n{relink}```\n", ""),
            ("Print", "```python\nprint('hello')\n```\n\nIt prints `hello`.", ""),
            (
                "Serve",
                f"```bash\nrm -f /run/stackbench/background-0.log; ln -s {secret} /run/stackbench/background-0.log; "
                "python3 -m http.server 8000\n```\n",
                "",
            ),
        ],
        name="wt_relinks_logs",
    )
    import_paths([hostile], library_name="hostile")
    run = do_start_audit(Walkthrough.objects.get(walkthrough_id="wt_relinks_logs"), origin="test")
    run = wait_for(lambda: _finished(run.pk), timeout=120, message="the audit run to finish")
    assert run.status == RunStatus.SUCCEEDED, run.error
    maintainer_client.post(reverse("run_share", args=[run.pk]), {"days": "7"})
    share = ShareLink.objects.get(run=run)
    shown = [
        maintainer_client.get(reverse("run", args=[run.pk])),
        maintainer_client.get(reverse("run_file", args=[run.pk, "agent_logs/audit_tools.jsonl"])),
        maintainer_client.get(reverse("run_file", args=[run.pk, "agent_logs/audit.log"])),
        client.get(share.get_absolute_url()),
        client.get(reverse("shared_run_file", args=[share.token, "agent_logs/audit_tools.jsonl"])),
    ]
    for response in shown:
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert response.status_code == 200 and b"ROOT-ONLY" not in body, response
    assert "hello" in run.output_file("agent_logs/audit_tools.jsonl").read_text()
