import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audits.importing import FileSet, fileset_from_paths, import_fileset, import_paths
from audits.models import ExampleResult, Gap, Run, RunStatus, ValidationDocument
from stackbench.formats.results import ValidationSummary
from stackbench.formats.walkthrough import Session
from stackbench.lib.jsonfiles import write_model
from tests.builders import SEED_GAPS, audit_result, seed_documents, validation_doc
from tests.strategies import UPLOAD_NAMES, raw_files
from walkthroughs.models import CodeExample, DocPage, Library, Step, Walkthrough

pytestmark = pytest.mark.django_db


def _statuses(outcomes):
    return [(o.kind, o.status) for o in outcomes]


def test_every_sample_file_imports(sample_dir):
    outcomes = import_paths([sample_dir / "walkthroughs", sample_dir / "extraction"], library_name=None)
    assert ("walkthrough", "created") in _statuses(outcomes)
    assert _statuses(outcomes).count(("extraction", "created")) == 2
    # The expected-outcome files are not Stackbench files; in a folder they are skipped, not errors.
    assert {o.status for o in outcomes} <= {"created", "skipped"}
    walkthrough = Walkthrough.objects.get(walkthrough_id="wt_kv_quickstart")
    assert walkthrough.library.name == "unassigned"
    assert list(walkthrough.steps.values_list("position", "display_order")) == [(1, 0), (2, 1), (3, 2), (4, 3), (5, 4)]
    assert walkthrough.source["walkthrough"]["title"] == walkthrough.title
    assert walkthrough.original_doc_path == "docs/kv-quickstart.md"
    toolz = DocPage.objects.get(page="toolz_intro.md")
    assert toolz.library.name == "toolz" and toolz.version == "0.12.1"
    assert list(toolz.examples.values_list("execution_context", flat=True)) == ["sync", "sync", "async", "sync"]


def test_importing_the_same_files_twice_stores_nothing_twice(sample_dir, tmp_path):
    audit_dir = tmp_path / "out"
    audit_dir.mkdir()
    write_model(audit_dir / "wt_kv_quickstart_audit.json", audit_result(gaps=SEED_GAPS))
    paths = [sample_dir / "walkthroughs" / "wt_kv_quickstart.json", sample_dir / "extraction", audit_dir]
    import_paths(paths, library_name="sqlite3")
    counts = (
        Walkthrough.objects.count(),
        Step.objects.count(),
        DocPage.objects.count(),
        CodeExample.objects.count(),
        Run.objects.count(),
        Gap.objects.count(),
    )
    second = import_paths(paths, library_name="sqlite3")
    assert {o.status for o in second} <= {"unchanged", "duplicate", "skipped"}
    assert ("audit", "duplicate") in _statuses(second)
    assert counts == (
        Walkthrough.objects.count(),
        Step.objects.count(),
        DocPage.objects.count(),
        CodeExample.objects.count(),
        Run.objects.count(),
        Gap.objects.count(),
    )


def test_a_changed_export_updates_the_steps_and_keeps_the_old_version(kv_walkthrough_path, write_json):
    import_paths([kv_walkthrough_path], library_name="sqlite3")
    data = json.loads(kv_walkthrough_path.read_text())
    data["steps"] = data["steps"][:3]
    changed = write_json("wt_kv_quickstart.json", data)
    assert _statuses(import_paths([changed])) == [("walkthrough", "updated")]
    walkthrough = Walkthrough.objects.get()
    assert walkthrough.steps.count() == 3
    assert walkthrough.revisions.get().source["steps"][4]["title"] == "Read a value"


def test_an_audit_with_its_session_and_logs_becomes_a_run_with_its_files(kv_walkthrough_path, tmp_path):
    import_paths([kv_walkthrough_path], library_name="sqlite3")
    out = tmp_path / "out"
    (out / "agent_logs").mkdir(parents=True)
    audit = audit_result(gaps=SEED_GAPS)
    write_model(out / "wt_kv_quickstart_audit.json", audit)
    write_model(
        out / "wt_kv_quickstart_session.json",
        Session(
            walkthrough_id="wt_kv_quickstart",
            walkthrough_path=str(kv_walkthrough_path),
            current_step=5,
            total_steps=5,
            completed_steps=5,
            is_complete=True,
            gaps=audit.gaps,
            session_started="2026-11-01T10:00:00Z",
        ),
    )
    (out / "agent_logs" / "audit.log").write_text("step 1 ok\n")
    (out / "agent_logs" / "audit_tools.jsonl").write_text('{"tool": "next_step"}\n')

    outcomes = import_paths([out])
    assert _statuses(outcomes) == [("audit", "created"), ("session", "skipped")]
    run = Run.objects.get()
    assert (run.kind, run.status, run.backend, run.progress_current, run.progress_total) == (
        "audit",
        "succeeded",
        "imported",
        5,
        5,
    )
    assert run.walkthrough.walkthrough_id == "wt_kv_quickstart" and run.library.name == "sqlite3"
    assert run.duration_seconds == 3.5
    assert list(run.gaps.values_list("seq", "step_number", "severity")) == [(0, 3, "critical"), (1, 4, "critical")]
    assert run.output_files == [
        "agent_logs/audit.log",
        "agent_logs/audit_tools.jsonl",
        "wt_kv_quickstart_audit.json",
        "wt_kv_quickstart_session.json",
    ]
    stored = json.loads((run.output_path() / "wt_kv_quickstart_audit.json").read_text())
    assert stored["critical_gaps"] == 2 and stored["gaps"][0]["description"] == "seed.csv is never created (0)"


def test_an_audit_for_an_unknown_walkthrough_creates_a_placeholder_the_export_fills_later(
    tmp_path, kv_walkthrough_path
):
    write_model(tmp_path / "wt_kv_quickstart_audit.json", audit_result(gaps=SEED_GAPS))
    import_paths([tmp_path / "wt_kv_quickstart_audit.json"])
    assert not Walkthrough.objects.get().has_steps
    assert _statuses(import_paths([kv_walkthrough_path])) == [("walkthrough", "created")]
    walkthrough = Walkthrough.objects.get()
    assert walkthrough.steps.count() == 5 and walkthrough.runs.count() == 1


def test_a_session_file_alone_is_an_unfinished_run(tmp_path, kv_walkthrough_path):
    import_paths([kv_walkthrough_path], library_name="sqlite3")
    path = tmp_path / "wt_kv_quickstart_session.json"
    write_model(
        path,
        Session(
            walkthrough_path=str(kv_walkthrough_path),
            current_step=2,
            total_steps=5,
            completed_steps=2,
            session_started="2026-11-01T10:00:00Z",
        ),
    )
    assert _statuses(import_paths([path])) == [("session", "created")]
    run = Run.objects.get()
    assert run.status == RunStatus.FAILED and "step 2 of 5" in run.error
    assert run.library.name == "sqlite3"


def test_a_summary_and_its_documents_in_one_folder_import_once(tmp_path):
    docs = [validation_doc("a.md", ["success", "failure"]), validation_doc("b.md", ["skipped"])]
    write_model(
        tmp_path / "validation_summary.json", ValidationSummary(timestamp="2026-11-01T10:01:00Z", documents=docs)
    )
    write_model(tmp_path / "a_validation.json", docs[0])
    write_model(tmp_path / "b_validation.json", docs[1])
    outcomes = import_paths([tmp_path])
    assert _statuses(outcomes) == [("summary", "created"), ("validation", "duplicate"), ("validation", "duplicate")]
    run = Run.objects.get()
    assert run.kind == "validation" and run.doc_pages.count() == 2
    assert ValidationDocument.objects.count() == 2 and ExampleResult.objects.count() == 3
    assert set(run.output_files) == {"validation_summary.json", "a_validation.json", "b_validation.json"}
    # Pages known only from results are rebuilt from them.
    assert list(DocPage.objects.get(page="a.md").examples.values_list("code", "line")) == [("x0", 5), ("x1", 6)]


def test_a_failure_listed_as_a_repeat_keeps_the_example_it_repeats_through_import_and_export(tmp_path):
    document = validation_doc("a.md", ["failure", "failure"])
    document.results[1].severity, document.results[1].repeats_example = "info", 0
    write_model(tmp_path / "a_validation.json", document)
    import_paths([tmp_path])
    stored = ExampleResult.objects.get(example_index=1)
    assert (stored.severity, stored.repeats_example) == ("info", 0)
    assert stored.to_format() == document.results[1]


def test_a_malformed_file_is_rejected_by_name_and_field_and_nothing_of_it_is_stored(tmp_path, kv_walkthrough_path):
    data = json.loads(kv_walkthrough_path.read_text())
    data["steps"][1]["displayOrder"] = "second"
    bad = tmp_path / "wt_bad.json"
    bad.write_text(json.dumps(data))
    (outcome,) = import_paths([bad])
    assert outcome.status == "error"
    assert "wt_bad.json" in outcome.message and "steps.1.displayOrder" in outcome.message
    assert not Walkthrough.objects.exists() and not Library.objects.exists()


def test_a_file_that_fails_halfway_leaves_nothing_behind(tmp_path, kv_walkthrough_path, monkeypatch):
    monkeypatch.setattr(Step.objects, "bulk_create", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("disk")))
    with pytest.raises(RuntimeError):
        import_paths([kv_walkthrough_path])
    assert not Walkthrough.objects.exists()


def test_invalid_json_and_unknown_files_get_clear_messages(tmp_path):
    (tmp_path / "broken.json").write_text("{")
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    outcomes = {
        o.name.rsplit("/", 1)[-1]: o
        for o in import_paths([tmp_path / "broken.json", tmp_path / "notes.json", tmp_path / "missing.json"])
    }
    assert "not valid JSON" in outcomes["broken.json"].message
    assert outcomes["notes.json"].status == "error" and "not a Stackbench file" in outcomes["notes.json"].message
    assert outcomes["missing.json"].message == "no such file or folder"


def test_uploaded_bytes_go_through_the_same_import(kv_walkthrough_path):
    fileset = FileSet()
    fileset.add_bytes("wt_kv_quickstart.json", kv_walkthrough_path.read_bytes(), explicit=True)
    assert _statuses(import_fileset(fileset, library_name="sqlite3")) == [("walkthrough", "created")]
    assert Walkthrough.objects.get().library.name == "sqlite3"


def test_the_shared_fixtures_folder_imports_whole(sample_dir, tmp_path):
    copy = tmp_path / "fixtures"
    shutil.copytree(sample_dir, copy)
    outcomes = import_paths([copy])
    assert not [o for o in outcomes if o.status == "error"]


def test_each_file_moves_the_progress_on_once_whatever_its_verdict(sample_dir, tmp_path):
    copy = tmp_path / "fixtures"
    shutil.copytree(sample_dir, copy)
    (copy / "notes.json").write_text("{}")
    fileset = fileset_from_paths([copy])
    moves = []
    outcomes = import_fileset(fileset, on_file=lambda: moves.append(1))
    assert len(moves) == len(fileset.files) == len(outcomes) > 1


def test_a_nul_in_command_output_is_stored_as_a_replacement_character(tmp_path):
    document = validation_doc("a.md", ["failure"]).model_dump(mode="json")
    document["results"][0]["execution_output"] = "before\u0000after"
    (tmp_path / "a_validation.json").write_text(json.dumps(document))
    assert _statuses(import_paths([tmp_path / "a_validation.json"])) == [("validation", "created")]
    assert ExampleResult.objects.get().execution_output == "before\ufffdafter"


@given(files=st.lists(st.tuples(UPLOAD_NAMES, raw_files(seed_documents())), min_size=1, max_size=3))
def test_hostile_files_get_a_verdict_per_file_and_never_crash_the_import(files):
    stored_before = (Walkthrough.objects.count(), Run.objects.count(), Gap.objects.count())
    fileset = FileSet()
    for name, raw in files:
        fileset.add_bytes(name, raw, explicit=True)
    outcomes = import_fileset(fileset)
    assert {o.name for o in outcomes} <= {name for name, _ in files}
    assert {o.status for o in outcomes} <= {"created", "updated", "unchanged", "duplicate", "skipped", "error"}
    assert all(o.message for o in outcomes if o.status == "error")
    if all(o.status == "error" for o in outcomes):
        assert (Walkthrough.objects.count(), Run.objects.count(), Gap.objects.count()) == stored_before


def test_out_of_range_numbers_are_refused_per_file_and_the_good_files_still_import(tmp_path, kv_walkthrough_path):
    data = json.loads(kv_walkthrough_path.read_text())
    data["steps"][1]["displayOrder"] = 2**40
    (tmp_path / "wt_huge.json").write_text(json.dumps(data))
    huge_gap = audit_result(gaps=SEED_GAPS).model_dump(mode="json")
    huge_gap["gaps"][0]["step_number"] = 2**70
    (tmp_path / "wt_kv_quickstart_audit.json").write_text(json.dumps(huge_gap))
    good = tmp_path / "good"
    good.mkdir()
    (good / "wt_kv_quickstart.json").write_text(kv_walkthrough_path.read_text())
    outcomes = {
        Path(o.name).name: o
        for o in import_paths([tmp_path / "wt_huge.json", tmp_path / "wt_kv_quickstart_audit.json", good])
    }
    assert outcomes["wt_huge.json"].status == "error" and "steps.1.displayOrder" in outcomes["wt_huge.json"].message
    assert "less than or equal to 2147483647" in outcomes["wt_huge.json"].message
    assert outcomes["wt_kv_quickstart_audit.json"].status == "error" and "gaps.0.step_number" in (
        outcomes["wt_kv_quickstart_audit.json"].message
    )
    assert [w.walkthrough_id for w in Walkthrough.objects.all()] == ["wt_kv_quickstart"]
    assert not Run.objects.exists()
