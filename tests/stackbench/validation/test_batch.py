"""Validation's drivers: a folder of analyses, the fixture documents against PyPI, and one document on the
worker's Pythons."""

import json

import pytest

from stackbench.validation.batch import load_analyses, validate_all, validate_document
from stackbench.validation.options import ValidationError
from stackbench_site.configuration import validation_options
from tests.stackbench.validation.example_pages import analysis

pytestmark = pytest.mark.slow


def test_the_fixture_documents_get_their_expected_outcomes(sample_dir, tmp_path):
    analyses, problems = load_analyses(sample_dir / "extraction")
    assert problems == [] and sorted(a.page for a in analyses) == ["dateutil_parsing.md", "toolz_intro.md"]
    summary = validate_all(analyses, tmp_path, validation_options(timeout=60))
    expected = json.loads((sample_dir / "extraction" / "expected.json").read_text())
    for document in summary.documents:
        wanted = expected[document.page.removesuffix(".md")]
        for result, want in zip(document.results, wanted, strict=True):
            assert result.status == want["status"], (document.page, result)
            if "severity" in want:
                assert result.severity == want["severity"]
            if "depends_on_example_indices" in want:
                assert result.depends_on_example_indices == want["depends_on_example_indices"]
            if "error_contains" in want:
                assert want["error_contains"] in result.error_message
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["dateutil_parsing_validation.json", "toolz_intro_validation.json", "validation_summary.json"]
    written = json.loads((tmp_path / "validation_summary.json").read_text())
    assert written["failed_by_severity"] == {"error": 1, "warning": 1, "info": 0} and written["total_examples"] == 8


def test_bad_analysis_files_are_named_and_skipped(tmp_path, sample_dir):
    (tmp_path / "broken_analysis.json").write_text("{")
    (tmp_path / "extraction_summary.json").write_text("{}")
    (tmp_path / "good_analysis.json").write_text((sample_dir / "extraction" / "toolz_intro_analysis.json").read_text())
    analyses, problems = load_analyses(tmp_path)
    assert [a.page for a in analyses] == ["toolz_intro.md"]
    assert len(problems) == 1 and "broken_analysis.json: not valid JSON" in problems[0]


def test_option_looking_requirements_are_never_given_to_the_installer(offline):
    bad = analysis("print(1)", dependencies=["--index-url=http://evil.example"])
    result = validate_document(bad, offline)
    assert result.results[0].status == "success"
    assert [p.requirement for p in result.setup_problems] == ["--index-url=http://evil.example"]


def test_a_library_version_no_installer_can_take_stops_the_set_before_any_page_runs(offline, tmp_path):
    with pytest.raises(ValidationError, match="not a plain package requirement"):
        validate_all([analysis("print(1)"), analysis("print(1)", version="1 --pre")], tmp_path, offline)
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_a_library_that_needs_a_python_the_worker_lacks_says_so(offline):
    result = validate_document(analysis("import sbdemo", version="3.0.0"), offline)
    assert result.results[0].status == "failure"
    assert "it does not support Python 3." in result.setup_problems[0].message


def test_a_page_whose_runner_cannot_start_is_a_setup_problem_and_the_pages_beside_it_still_run(
    offline, tmp_path, monkeypatch
):
    from stackbench.validation import document_sandbox

    # A runner that exits at once, as one the worker could not start in time gives no ready answer either.
    monkeypatch.setattr(document_sandbox, "RUNNER_SOURCE", "raise SystemExit(3)\n")
    pages = [analysis("print(1)").model_copy(update={"page": name}) for name in ("first.md", "second.md")]
    summary = validate_all(pages, tmp_path, offline)
    assert [d.page for d in summary.documents] == ["first.md", "second.md"]
    for document in summary.documents:
        assert [r.status for r in document.results] == ["skipped"]
        assert "runner did not start" in document.results[0].error_message
        assert [p.message for p in document.setup_problems][0].startswith("The examples were not run: the page runner")
