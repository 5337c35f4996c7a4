import json

import pytest
from django.urls import reverse

from audits.importing import import_paths
from stackbench.formats.results import ValidationResult
from stackbench.lib.jsonfiles import write_model
from tests.builders import KV_GAPS, count_queries

pytestmark = pytest.mark.django_db


def test_the_gap_list_filters_sorts_and_counts(viewer_client, kv, import_audit):
    import_audit(gaps=KV_GAPS, started="2026-11-01T10:00:00Z")
    import_audit(gaps=KV_GAPS[:1], started="2026-11-02T10:00:00Z")
    url = reverse("gaps")
    everything = viewer_client.get(url).content.decode()
    assert "<b>3</b><span>gaps</span>" in everything
    critical = viewer_client.get(url, {"severity": "critical"}).content.decode()
    assert "<b>2</b><span>gaps</span>" in critical and "No concrete instruction." not in critical
    found = viewer_client.get(
        url, {"q": "concrete"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="gap-results"
    ).content.decode()
    assert found.lstrip().startswith('<div id="gap-results">') and "<b>1</b><span>gaps</span>" in found
    by_severity = viewer_client.get(url, {"sort": "severity"}).content.decode()
    assert by_severity.index("seed.csv") < by_severity.index("No concrete instruction.")
    assert "Nothing matches." in viewer_client.get(url, {"q": "no such words"}).content.decode()


def test_the_gap_list_ignores_an_id_that_is_none_matches_nothing_for_an_unknown_type_and_refuses_huge_ids(
    viewer_client, kv, import_audit
):
    import_audit(gaps=KV_GAPS)
    url = reverse("gaps")
    assert "<b>2</b><span>gaps</span>" in viewer_client.get(url, {"library": "abc", "run": "-1"}).content.decode()
    assert "Nothing matches." in viewer_client.get(url, {"type": "typo"}).content.decode()
    examples = viewer_client.get(url, {"kind": "validation", "type": "typo"})
    assert examples.status_code == 200 and "Nothing matches." in examples.content.decode()
    refused = viewer_client.get(url, {"run": "9" * 30})
    assert refused.status_code == 400 and "The run parameter is out of range" in refused.content.decode()


def test_the_gap_list_pages_and_failing_examples_tab(viewer_client, kv, import_audit, tmp_path):

    many = [(1, "Create a workspace", "clarity", "info", f"Wording {i}.") for i in range(60)]
    import_audit(gaps=many)
    first = viewer_client.get(reverse("gaps")).content.decode()
    assert "Page 1 of 2" in first and "Next" in first
    assert "Page 2 of 2" in viewer_client.get(reverse("gaps"), {"page": 2}).content.decode()
    write_model(
        tmp_path / "p_validation.json",
        ValidationResult(
            page="p.md",
            library="toolz",
            validation_timestamp="2026-11-01T10:00:00Z",
            results=[{"example_index": 0, "status": "failure", "severity": "error", "error_message": "NameError: x"}],
        ),
    )
    import_paths([tmp_path / "p_validation.json"])
    examples = viewer_client.get(reverse("gaps"), {"kind": "validation"}).content.decode()
    assert "NameError: x" in examples and "<b>1</b><span>failing examples</span>" in examples


def test_list_pages_take_the_same_number_of_queries_whatever_the_rows(viewer_client, kv, import_audit):
    urls = [reverse("runs"), reverse("gaps"), reverse("gaps") + "?kind=validation&sort=severity"]

    def add_runs(days):
        for day in days:
            import_audit(gaps=KV_GAPS, started=f"2026-10-{day:02d}T10:00:00Z")

    add_runs(range(1, 3))
    few = [count_queries(viewer_client, url) for url in urls]
    add_runs(range(3, 20))
    assert [count_queries(viewer_client, url) for url in urls] == few


def _order_on_page(page, markers):
    return sorted(markers, key=page.index)


def test_sorting_by_severity_puts_the_most_severe_first_for_gaps(viewer_client, kv, import_audit):
    import_audit(
        gaps=[
            (1, "Create a workspace", "completeness", "info", "Marker info gap."),
            (2, "Create the database", "execution_error", "critical", "Marker critical gap."),
            (3, "Load the seed data", "clarity", "warning", "Marker warning gap."),
        ]
    )
    page = viewer_client.get(reverse("gaps"), {"kind": "audit", "sort": "severity"}).content.decode()
    markers = ["Marker critical gap.", "Marker warning gap.", "Marker info gap."]
    assert _order_on_page(page, markers) == markers


def test_sorting_by_severity_puts_errors_first_for_failing_examples(viewer_client, tmp_path):
    failures = [("info", "MarkerInfo: deprecated"), ("error", "MarkerError: wrong"), ("warning", "MarkerWarning: env")]
    write_model(
        tmp_path / "p_validation.json",
        ValidationResult(
            page="p.md",
            library="toolz",
            validation_timestamp="2026-11-01T10:00:00Z",
            results=[
                {"example_index": i, "status": "failure", "severity": severity, "error_message": message}
                for i, (severity, message) in enumerate(failures)
            ],
        ),
    )
    import_paths([tmp_path / "p_validation.json"])
    page = viewer_client.get(reverse("gaps"), {"kind": "validation", "sort": "severity"}).content.decode()
    markers = ["MarkerError: wrong", "MarkerWarning: env", "MarkerInfo: deprecated"]
    assert _order_on_page(page, markers) == markers


def test_terminal_codes_are_stored_as_text_so_no_page_and_no_api_answer_shows_them(viewer_client, client, tmp_path):
    from audits.models import ApiToken, ExampleResult, Run
    from tests.builders import make_user

    (tmp_path / "p_validation.json").write_text(
        json.dumps(
            {
                "page": "p.md",
                "library": "toolz",
                "validation_timestamp": "2026-11-01T10:00:00Z",
                "results": [
                    {
                        "example_index": 0,
                        "status": "failure",
                        "severity": "error",
                        "error_message": "The output differs: \x1b[1mMarkerShown\x1b[0m",
                        "execution_output": "[36mMarkerPrinted[0m",
                        "expected_output": "[1mMarkerExpected",
                    }
                ],
            }
        )
    )
    import_paths([tmp_path / "p_validation.json"])
    stored = ExampleResult.objects.get()
    assert (stored.error_message, stored.execution_output, stored.expected_output) == (
        "The output differs: MarkerShown",
        "MarkerPrinted",
        "MarkerExpected",
    )
    run_page = viewer_client.get(Run.objects.get().get_absolute_url()).content.decode()
    failing = viewer_client.get(reverse("gaps"), {"kind": "validation"}).content.decode()
    token = ApiToken.issue(make_user("ci-viewer"), "test")[1]
    api = client.get("/api/v1/example-failures", HTTP_AUTHORIZATION=f"Bearer {token}").content.decode()
    for shown in (run_page, failing, api):
        assert "MarkerShown" in shown and "[1m" not in shown and "[36m" not in shown and "\x1b" not in shown
