import json

import pytest

from stackbench.formats.results import (
    AuditResult,
    ExampleResult,
    SetupProblem,
    ValidationResult,
    ValidationSummary,
    audit_outcome,
)
from stackbench.formats.walkthrough import CodeExample, ExtractionAnalysis, Gap
from stackbench.lib.jsonfiles import FormatError, load_model, parse_model, write_model


def _gap(gap_type, severity, step=1):
    return Gap(step_number=step, step_title="S", gap_type=gap_type, severity=severity, description="d")


def test_audit_counts_are_derived_from_the_gaps_whatever_the_file_says(tmp_path):
    data = {
        "walkthrough_id": "wt_a",
        "started_at": "2026-01-01T00:00:00Z",
        "total_steps": 3,
        "completed_steps": 3,
        "gaps": [
            _gap("clarity", "warning").model_dump(mode="json"),
            _gap("logical_flow", "critical").model_dump(mode="json"),
        ],
        "clarity_gaps": 9,
        "critical_gaps": 7,
    }
    audit = parse_model(AuditResult, data, "a.json")
    dumped = json.loads(audit.model_dump_json())
    assert (dumped["clarity_gaps"], dumped["logical_flow_gaps"], dumped["critical_gaps"], dumped["warning_gaps"]) == (
        1,
        1,
        1,
        1,
    )
    write_model(tmp_path / "a.json", audit)
    again = json.loads((tmp_path / "a.json").read_text())
    assert {k: v for k, v in again.items() if k.endswith("_gaps")} == {
        k: v for k, v in dumped.items() if k.endswith("_gaps")
    }
    assert load_model(AuditResult, tmp_path / "a.json") == audit


def test_failed_steps_are_the_steps_never_reached_and_success_needs_no_critical_gap():
    assert audit_outcome(5, 5, [_gap("clarity", "warning")]) == (0, True)
    assert audit_outcome(5, 5, [_gap("logical_flow", "critical")]) == (0, False)
    assert audit_outcome(5, 3, []) == (2, False)


def test_old_examples_marked_not_executable_keep_that_meaning():
    example = CodeExample.model_validate({"code": "x", "is_executable": False})
    assert example.execution_context == "not_executable"
    assert CodeExample.model_validate({"code": "x"}).execution_context == "sync"


def test_the_sample_analyses_load_and_count_their_examples(sample_dir):
    analysis = load_model(ExtractionAnalysis, sample_dir / "extraction" / "toolz_intro_analysis.json")
    assert analysis.library == "toolz" and analysis.version == "0.12.1"
    assert analysis.total_examples == 4
    assert [e.execution_context for e in analysis.examples] == ["sync", "sync", "async", "sync"]


def test_validation_totals_and_the_summary_breakdown_are_derived():
    results = [
        {"example_index": 0, "status": "success"},
        {"example_index": 1, "status": "failure", "severity": "error"},
        {"example_index": 2, "status": "failure", "severity": "warning"},
        {"example_index": 3, "status": "skipped"},
    ]
    doc = ValidationResult.model_validate(
        {
            "page": "p.md",
            "library": "l",
            "validation_timestamp": "2026-01-01T00:00:00Z",
            "results": results,
            "total_examples": 99,
        }
    )
    assert (doc.total_examples, doc.successful, doc.failed, doc.skipped) == (4, 1, 2, 1)
    summary = ValidationSummary.model_validate({"timestamp": "2026-01-01T00:00:00Z", "documents": [doc.model_dump()]})
    assert summary.failed_by_severity == {"error": 1, "warning": 1, "info": 0}
    assert summary.total_documents == 1


def test_an_unknown_example_status_is_named():
    with pytest.raises(FormatError, match=r"results\.0\.status"):
        parse_model(
            ValidationResult,
            {
                "page": "p",
                "library": "l",
                "validation_timestamp": "2026-01-01T00:00:00Z",
                "results": [{"example_index": 0, "status": "meh"}],
            },
            "v.json",
        )


def test_terminal_codes_are_dropped_from_what_a_result_file_stores(tmp_path):
    result = ExampleResult(
        example_index=0,
        status="failure",
        severity="error",
        error_message="\x1b[31mValueError\x1b[0m: bad",
        execution_output="[1mhello[0m [36mworld[0m",
        expected_output="\x1b[1mhello\x1b[0m",
    )
    assert (result.error_message, result.execution_output, result.expected_output) == (
        "ValueError: bad",
        "hello world",
        "hello",
    )
    problem = SetupProblem(requirement="x", message="\x1b[1;31mERROR\x1b[0m: no x", log="[33mWARNING[0m")
    assert (problem.message, problem.log) == ("ERROR: no x", "WARNING")
    # A file written by an older version is cleaned as it is read back.
    (tmp_path / "old.json").write_text(
        json.dumps({"example_index": 0, "status": "success", "execution_output": "[1mok"})
    )
    assert load_model(ExampleResult, tmp_path / "old.json").execution_output == "ok"
