"""Starting runs: what a started run records, what is refused, and what an unreachable broker leaves behind. The
broker is the configured one (the filesystem broker by default); no worker takes the work in these tests."""

import pytest

from audits.actions import RunNotStarted, do_run_everything, do_start_audit, do_start_validation
from audits.importing import import_paths
from audits.models import Batch, Run, RunKind, RunStatus
from walkthroughs.models import DocPage, Library, Walkthrough

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def nothing_left_queued():
    """The messages these tests send are for runs no later test has: no worker may find them."""
    from stackbench_site.celery import app

    yield
    app.control.purge()


@pytest.fixture
def kv_walkthrough(kv_walkthrough_path):
    import_paths([kv_walkthrough_path], library_name="sqlite3")
    return Walkthrough.objects.get(walkthrough_id="wt_kv_quickstart")


@pytest.fixture
def toolz_pages(sample_dir):
    import_paths([sample_dir / "extraction"])
    toolz = Library.objects.get(name="toolz")
    return toolz, list(DocPage.objects.filter(library=toolz))


def test_a_started_audit_is_queued_with_what_it_will_read(kv_walkthrough, maintainer):
    library = kv_walkthrough.library
    library.default_version, library.default_backend, library.docs_commit = "3.40", "rules", "abc123"
    library.save()
    earlier = Run.objects.create(
        kind=RunKind.AUDIT, library=library, walkthrough=kv_walkthrough, status=RunStatus.SUCCEEDED
    )
    Run.objects.create(kind=RunKind.AUDIT, library=library, walkthrough=kv_walkthrough, status=RunStatus.RUNNING)
    run = do_start_audit(kv_walkthrough, user=maintainer, origin="api", options={"note": "x"})
    assert (run.status, run.kind, run.started_by, run.origin) == (RunStatus.QUEUED, RunKind.AUDIT, maintainer, "api")
    assert run.celery_task_id and run.progress_total == kv_walkthrough.steps.count() == 5
    assert (run.library_version, run.backend, run.docs_commit) == ("3.40", "rules", "abc123")
    assert run.walkthrough_hash == kv_walkthrough.content_hash and run.options == {"note": "x"}
    assert run.previous_run == earlier, "compared with the latest finished audit, not one still running"
    chosen = do_start_audit(kv_walkthrough, backend="claude", version="3.41", previous_run=run)
    assert (chosen.backend, chosen.library_version, chosen.previous_run) == ("claude", "3.41", run)


def test_a_walkthrough_without_steps_cannot_be_audited(kv_walkthrough):
    placeholder = Walkthrough.placeholder("wt_empty", kv_walkthrough.library, "Only known from results")
    with pytest.raises(RunNotStarted, match="has no steps yet"):
        do_start_audit(placeholder)
    assert not Run.objects.exists()


def test_an_unreachable_broker_leaves_no_orphan_run(kv_walkthrough, use_broker):
    use_broker("redis://127.0.0.1:1/0")
    with pytest.raises(RunNotStarted, match="task queue is not reachable"):
        do_start_audit(kv_walkthrough)
    assert not Run.objects.exists()


def test_a_validation_gets_a_document_per_page_of_its_own_library_only(toolz_pages, kv_walkthrough):
    toolz, pages = toolz_pages
    stranger = DocPage.objects.create(library=kv_walkthrough.library, page="other.md")
    run = do_start_validation(toolz, [*pages, stranger], version="0.12.0")
    assert run.status == RunStatus.QUEUED and run.celery_task_id and run.backend == "venv"
    assert list(run.doc_pages.all()) == pages
    assert [(d.page, d.library_name, d.version) for d in run.documents.all()] == [
        (page.page, "toolz", "0.12.0") for page in pages
    ]
    assert run.progress_total == sum(page.examples.count() for page in pages) == 4
    with pytest.raises(RunNotStarted, match="toolz has no doc pages to validate"):
        do_start_validation(toolz, [stranger])
    assert Run.objects.count() == 1


def test_a_validation_is_compared_with_the_last_finished_one_of_the_same_pages(toolz_pages):
    toolz, pages = toolz_pages
    other = DocPage.objects.create(library=toolz, page="other.md")
    same = Run.objects.create(kind=RunKind.VALIDATION, library=toolz, status=RunStatus.SUCCEEDED)
    same.doc_pages.set(pages)
    wider = Run.objects.create(kind=RunKind.VALIDATION, library=toolz, status=RunStatus.FAILED)
    wider.doc_pages.set([*pages, other])
    running = Run.objects.create(kind=RunKind.VALIDATION, library=toolz, status=RunStatus.RUNNING)
    running.doc_pages.set(pages)
    assert do_start_validation(toolz, pages).previous_run == same
    assert do_start_validation(toolz, [*pages, other]).previous_run == wider
    assert do_start_validation(toolz, [other]).previous_run is None


def test_running_everything_validates_every_page_and_audits_every_walkthrough_with_steps(
    toolz_pages, kv_walkthrough_path, maintainer
):
    toolz, pages = toolz_pages
    import_paths([kv_walkthrough_path], library_name="toolz")
    Walkthrough.placeholder("wt_results_only", toolz, "")
    archived = Walkthrough.objects.create(library=toolz, walkthrough_id="wt_old", title="Old", archived=True)
    archived.source = {"steps": []}
    archived.save()
    batch = do_run_everything(toolz, user=maintainer, origin="cli")
    runs = list(batch.runs.order_by("pk"))
    assert [(run.kind, run.walkthrough_id and run.walkthrough.walkthrough_id) for run in runs] == [
        (RunKind.VALIDATION, None),
        (RunKind.AUDIT, "wt_kv_quickstart"),
    ]
    assert all(run.started_by == maintainer and run.origin == "cli" for run in runs)
    assert batch.created_by == maintainer and list(runs[0].doc_pages.all()) == pages


def test_a_library_with_nothing_to_run_gets_no_batch(db):
    with pytest.raises(RunNotStarted, match="empty has neither walkthroughs nor doc pages yet"):
        do_run_everything(Library.objects.create(name="empty"))
    assert not Batch.objects.exists()


def test_run_everything_with_the_broker_down_leaves_no_empty_batch(kv_walkthrough, use_broker):
    use_broker("redis://127.0.0.1:1/0")
    with pytest.raises(RunNotStarted, match="task queue is not reachable"):
        do_run_everything(kv_walkthrough.library)
    assert not Batch.objects.exists() and not Run.objects.exists()
