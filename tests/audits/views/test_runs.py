import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from audits.importing import import_paths
from audits.models import Run, RunStatus, ValidationDocument
from tests.builders import KV_GAPS, seed_documents
from tests.strategies import TEXT, UPLOAD_NAMES, raw_files
from walkthroughs.models import Walkthrough

pytestmark = pytest.mark.django_db


def test_the_run_page_shows_status_gaps_by_step_files_and_logs(viewer_client, kv, import_audit):
    run = import_audit(gaps=KV_GAPS)
    page = viewer_client.get(run.get_absolute_url()).content.decode()
    assert "Succeeded" in page and "Steps completed</dt><dd>5 of 5" in page
    assert 'id="step-3"' in page and "<code>seed.csv</code> is used here" in page
    assert reverse("run_file", args=[run.pk, "wt_kv_quickstart_audit.json"]) in page
    assert "Rerun" not in page, "viewers cannot rerun"


def test_the_run_page_shows_how_far_the_audit_got_step_by_step(viewer_client, kv, import_audit):
    log = [
        {
            "step_number": 1,
            "title": "Install",
            "status": "done",
            "not_done": [],
            "fixed": ["`uv sync`: fixed by `pip`"],
        },
        {"step_number": 2, "title": "Serve", "status": "partly done", "not_done": ["`npm run dev`: failed (exit 1)"]},
    ]
    run = import_audit(completed=1, execution_log=json.dumps(log))
    page = viewer_client.get(run.get_absolute_url()).content.decode()
    assert "How far it got" in page and "Steps completed" in page and "1 of 5" in page
    assert "partly done</span> Serve" in page
    assert "<code>npm run dev</code>: failed (exit 1)" in page and "Steps 3 to 5 were not reached." in page
    assert "<code>uv sync</code>: fixed by <code>pip</code>" in page
    older = import_audit(walkthrough_id="wt_older_tool", started="2026-11-02T10:00:00Z")
    assert 'id="how-far"' not in viewer_client.get(older.get_absolute_url()).content.decode()


def test_the_run_list_filters_ignores_what_it_does_not_know_and_refuses_an_id_too_large(
    viewer_client, kv, import_audit
):
    run = import_audit(gaps=KV_GAPS)
    listed = run.get_absolute_url()
    assert listed in viewer_client.get(reverse("runs"), {"kind": "audit", "library": kv.library_id}).content.decode()
    assert listed not in viewer_client.get(reverse("runs"), {"status": "failed"}).content.decode()
    assert listed in viewer_client.get(reverse("runs"), {"kind": "review", "library": "sqlite3"}).content.decode()
    refused = viewer_client.get(reverse("runs"), {"library": "9" * 30})
    assert refused.status_code == 400 and "The library parameter is out of range" in refused.content.decode()


def test_the_live_partial_polls_while_active_and_swaps_in_the_results_when_done(viewer_client, kv):
    run = Run.objects.create(
        kind="audit",
        library=kv.library,
        walkthrough=kv,
        status=RunStatus.RUNNING,
        progress_current=2,
        progress_total=5,
        progress_label="Step 2: Create the database",
    )
    live = viewer_client.get(reverse("run_live", args=[run.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every 2s"' in live and "Step 2: Create the database" in live and 'value="40"' in live
    Run.objects.filter(pk=run.pk).update(status=RunStatus.SUCCEEDED)
    done = viewer_client.get(reverse("run_live", args=[run.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "every 2s" not in done and "Succeeded" in done
    assert '<div id="run-after" hx-swap-oob="true">' in done and 'id="run-actions" hx-swap-oob="true"' in done
    page = viewer_client.get(run.get_absolute_url()).content.decode()
    assert "every 2s" not in page and "hx-swap-oob" not in page


def test_an_active_run_page_refreshes_itself_without_javascript(viewer_client, kv):
    run = Run.objects.create(kind="audit", library=kv.library, walkthrough=kv, status=RunStatus.QUEUED)
    page = viewer_client.get(run.get_absolute_url()).content.decode()
    assert '<noscript><meta http-equiv="refresh" content="5"></noscript>' in page and "waiting for a worker" in page


def test_cancel_needs_permission_and_ends_an_active_run(viewer_client, maintainer_client, kv):
    run = Run.objects.create(kind="audit", library=kv.library, walkthrough=kv, status=RunStatus.RUNNING)
    assert viewer_client.post(reverse("run_cancel", args=[run.pk])).status_code == 403
    assert viewer_client.get(reverse("run_cancel", args=[run.pk])).status_code in (403, 405)
    response = maintainer_client.post(reverse("run_cancel", args=[run.pk]))
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and run.finished_at


def test_run_files_download_only_what_the_run_wrote(viewer_client, kv, import_audit):
    run = import_audit(gaps=KV_GAPS)
    download = viewer_client.get(reverse("run_file", args=[run.pk, "wt_kv_quickstart_audit.json"]))
    assert download.status_code == 200 and "attachment" in download["Content-Disposition"]
    assert json.loads(b"".join(download.streaming_content))["critical_gaps"] == 1
    for name in ("../../secret_key", "nope.json", "%2e%2e/secret_key"):
        assert viewer_client.get(reverse("run_file", args=[run.pk, "x"]).replace("/x", f"/{name}")).status_code == 404


def test_a_symlink_in_a_run_folder_does_not_serve_what_it_points_to(viewer_client, kv, import_audit, tmp_path):
    run = import_audit(gaps=KV_GAPS)
    (tmp_path / "secret.txt").write_text("SECRET")
    (run.output_path() / "agent_logs").mkdir(exist_ok=True)
    (run.output_path() / "agent_logs" / "audit.log").unlink(missing_ok=True)
    (run.output_path() / "agent_logs" / "audit.log").symlink_to(tmp_path / "secret.txt")
    run.record_output_files()
    assert "agent_logs/audit.log" not in run.output_files
    run.output_files.append("agent_logs/audit.log")  # listed anyway, as an older record might have it
    run.save(update_fields=["output_files"])
    assert viewer_client.get(reverse("run_file", args=[run.pk, "agent_logs/audit.log"])).status_code == 404
    assert "SECRET" not in viewer_client.get(run.get_absolute_url()).content.decode()


def test_starting_an_audit_queues_it_and_goes_to_the_run_page(maintainer_client, viewer_client, kv):
    url = reverse("new_audit", args=[kv.pk])
    assert viewer_client.get(url).status_code == 403
    form = maintainer_client.get(url).content.decode()
    assert 'name="backend"' in form and "Unavailable: No Claude credential" in form
    refused = maintainer_client.post(url, {"backend": "claude", "version": ""}).content.decode()
    assert "No Claude credential is configured" in refused and not Run.objects.exists()
    response = maintainer_client.post(url, {"backend": "rules", "version": "3.45", "timeout": "30"})
    run = Run.objects.get()
    assert response.status_code == 302 and response["Location"] == run.get_absolute_url()
    assert (run.status, run.library_version, run.options, run.started_by.username) == (
        "queued",
        "3.45",
        {"timeout": 30},
        "maintainer",
    )


def test_a_rerun_keeps_the_inputs_and_links_the_previous_run(maintainer_client, kv, import_audit):
    first = import_audit(gaps=KV_GAPS)
    form = maintainer_client.get(reverse("rerun", args=[first.pk])).content.decode()
    assert f"Rerun #{first.pk}" in form and 'value="3.40"' in form
    maintainer_client.post(reverse("rerun", args=[first.pk]), {"backend": "rules", "version": "3.46"})
    rerun = Run.objects.exclude(pk=first.pk).get()
    assert rerun.previous_run == first and rerun.walkthrough == kv and rerun.library_version == "3.46"


def test_the_run_page_compares_with_the_previous_run(viewer_client, kv, import_audit):
    previous = import_audit(gaps=KV_GAPS, started="2026-11-01T10:00:00Z")
    current = import_audit(
        gaps=[KV_GAPS[0], (5, "Read a value", "completeness", "info", "No check.")], started="2026-11-02T10:00:00Z"
    )
    Run.objects.filter(pk=current.pk).update(previous_run=previous)
    page = viewer_client.get(current.get_absolute_url()).content.decode()
    comparison = page[page.index('id="comparison"') :]
    new, gone, still = comparison.split("<h3>")[1:4]
    assert "New in this run (1)" in new and "No check." in new
    assert "Gone since" in gone and "No concrete instruction." in gone
    assert "Still present (1)" in still and "seed.csv" in still


def test_starting_a_validation_picks_pages(maintainer_client, sample_dir):
    from walkthroughs.models import Library

    import_paths([sample_dir / "extraction"])
    toolz = Library.objects.get(name="toolz")
    url = reverse("new_validation", args=[toolz.pk])
    assert "toolz_intro.md" in maintainer_client.get(url).content.decode()
    page = toolz.doc_pages.get()
    response = maintainer_client.post(url, {"pages": [page.pk], "version": "0.12.1"})
    run = Run.objects.get()
    assert response["Location"] == run.get_absolute_url()
    assert run.kind == "validation" and list(run.doc_pages.all()) == [page] and run.documents.count() == 1


def test_upload_imports_files_with_per_file_results(maintainer_client, viewer_client, kv_walkthrough_path):
    assert viewer_client.get(reverse("upload")).status_code == 403
    good = SimpleUploadedFile("wt_kv_quickstart.json", kv_walkthrough_path.read_bytes())
    bad = SimpleUploadedFile("wt_bad.json", b'{"steps": ')
    page = maintainer_client.post(reverse("upload"), {"files": [good, bad], "library": "sqlite3"}).content.decode()
    assert "wt_kv_quickstart: 5 steps" in page and "not valid JSON" in page
    assert Walkthrough.objects.get().library.name == "sqlite3"


def test_upload_limits_are_clear(maintainer_client, settings):
    settings.STACKBENCH_UPLOAD_MAX_BYTES = 10
    page = maintainer_client.post(
        reverse("upload"), {"files": [SimpleUploadedFile("big.json", b"{" * 50)]}
    ).content.decode()
    assert "Over the 10\xa0bytes limit per file: big.json" in page


def test_an_upload_with_too_many_files_is_refused_before_it_is_read(maintainer_client, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 3
    files = [SimpleUploadedFile(f"f{n}.json", b"{}") for n in range(4)]
    response = maintainer_client.post(reverse("upload"), {"files": files})
    assert response.status_code == 400
    assert "Too many files in one upload: the limit is 3." in response.content.decode()
    assert Run.objects.count() == 0


@given(files=st.lists(st.tuples(UPLOAD_NAMES, raw_files(seed_documents())), min_size=1, max_size=3), library=TEXT)
def test_the_upload_page_answers_every_hostile_upload_with_per_file_results(maintainer_client, files, library):
    response = maintainer_client.post(
        reverse("upload"), {"files": [SimpleUploadedFile(name, raw) for name, raw in files], "library": library}
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "import-outcomes" in page or 'class="errorlist"' in page


def test_the_run_page_shows_the_readers_machine_and_warns_when_the_sandbox_was_weaker(viewer_client, kv, import_audit):
    run = import_audit(gaps=KV_GAPS)
    machine = {
        "confinement": "bubblewrap",
        "python": "3.11.2",
        "node": "20.20.2",
        "network": "registries only",
        "limits": "256 processes, 2048 MB memory, 4096 MB disk",
    }
    run.record_environment(machine)
    page = viewer_client.get(reverse("run", args=[run.pk])).content.decode()
    assert "Python 3.11.2 · Node 20.20.2 · network: registries only" in page and "Weaker sandbox" not in page
    Run.objects.filter(pk=run.pk).update(environment={**machine, "confinement": "unconfined"})
    page = viewer_client.get(reverse("run", args=[run.pk])).content.decode()
    assert "Weaker sandbox" in page and "STACKBENCH_UNCONFINED=1" in page


def test_a_validation_run_page_leads_with_its_summary_and_failures_and_folds_the_rest(viewer_client, tmp_path):
    from stackbench.formats.results import ValidationSummary
    from stackbench.lib.jsonfiles import write_model
    from tests.builders import validation_doc

    clean = validation_doc("a-clean.md", ["success", "skipped"])
    clean.results[1].error_message = "Illustrative: `row` is never defined on the page"
    broken = validation_doc("b-broken.md", ["success", "failure", "failure"])
    write_model(
        tmp_path / "validation_summary.json",
        ValidationSummary(timestamp="2026-11-01T10:01:00Z", documents=[clean, broken]),
    )
    import_paths([tmp_path / "validation_summary.json"], library_name="toolz")
    page = viewer_client.get(Run.objects.get().get_absolute_url()).content.decode()
    summary = page[page.index('id="validation-summary"') :]
    assert summary.startswith(
        'id="validation-summary"><b>2</b> failed (2 errors, 0 warnings, 0 info) · <b>2</b> passed'
    )
    assert "<b>1</b> skipped" in summary
    assert summary.index("b-broken.md") < summary.index("a-clean.md"), "the page with failures comes first"
    assert "1 example passed</summary>" in page and "1 skipped, each with its reason</summary>" in page
    assert "Illustrative: `row` is never defined on the page" in page


def test_a_failure_that_repeats_an_earlier_examples_cause_links_to_that_example(viewer_client, tmp_path):
    from stackbench.lib.jsonfiles import write_model
    from tests.builders import validation_doc

    document = validation_doc("a.md", ["failure", "failure"])
    document.results[1].severity, document.results[1].repeats_example = "info", 0
    write_model(tmp_path / "a_validation.json", document)
    import_paths([tmp_path / "a_validation.json"], library_name="toolz")
    page = viewer_client.get(Run.objects.get().get_absolute_url()).content.decode()
    stored = ValidationDocument.objects.get()
    assert f'same cause as <a href="#example-{stored.pk}-0">example 0</a>, counted there' in page
    assert page.count("same cause as") == 1
