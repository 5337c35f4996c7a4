"""Validation in real virtualenvs: offline against wheels the tests build, and against PyPI for the fixture."""

import json

import pytest

from audits.engines.validator import ValidationError, load_analyses, validate_all, validate_document
from stackbench_site.configuration import sandbox_settings, validation_options
from walkthroughs.engines.formats import CodeExample, ExtractionAnalysis

pytestmark = pytest.mark.slow


def analysis(*codes, version="1.0.0", contexts=None, dependencies=()):
    examples = []
    for index, code in enumerate(codes):
        context = (contexts or {}).get(index, "sync")
        examples.append(
            CodeExample(
                library="sbdemo",
                code=code,
                line=10 * (index + 1),
                context=f"Example {index}",
                execution_context=context,
                dependencies=list(dependencies),
            )
        )
    return ExtractionAnalysis(page="demo.md", library="sbdemo", version=version, examples=examples)


@pytest.fixture
def offline(wheelhouse):
    return validation_options(timeout=10, find_links=[wheelhouse], offline=True, num_workers=1)


def outcome(result):
    return [(r.status, r.severity) for r in result.results]


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


def test_an_offline_run_against_a_local_wheel_passes(offline):
    result = validate_document(analysis("from sbdemo import greet\nprint(greet('docs'))"), offline)
    assert outcome(result) == [("success", None)]
    assert result.results[0].execution_output == "hello docs\n"


@pytest.mark.parametrize(
    "code, error",
    [
        ("print('unclosed'", "SyntaxError"),
        ("if True:\nprint(1)", "IndentationError"),
        ("print(undefined_thing)", "NameError"),
        ("import sbdemo_missing", "ModuleNotFoundError"),
        ("from sbdemo import shout", "ImportError"),
        ("import sbdemo\nsbdemo.gret('x')", "AttributeError"),
    ],
)
def test_mistakes_in_the_example_itself_are_errors(offline, code, error):
    result = validate_document(analysis(code), offline).results[0]
    assert (result.status, result.severity) == ("failure", "error")
    assert result.error_message.startswith(error)


def test_an_exception_raised_inside_the_installed_package_is_a_warning(offline):
    result = validate_document(analysis("import sbdemo\nsbdemo.explode(3)"), offline).results[0]
    assert (result.status, result.severity) == ("failure", "warning")
    assert result.error_message == "ValueError: bad value: 3"
    assert "inside the installed package (sbdemo/__init__.py, line 14, in _check)" in result.suggestions


def test_a_deprecation_warning_is_info_and_the_example_still_succeeds(offline):
    result = validate_document(analysis("import sbdemo\nprint(sbdemo.old_greet('x'))"), offline).results[0]
    assert (result.status, result.severity) == ("success", "info")
    assert "DeprecationWarning: old_greet is deprecated" in result.error_message


def test_suggestions_name_the_close_match_and_the_version(offline):
    attribute = validate_document(analysis("import sbdemo\nsbdemo.gret('x')"), offline).results[0]
    assert "did you mean `greet`?" in attribute.suggestions and "sbdemo 1.0.0" in attribute.suggestions
    imported = validate_document(analysis("from sbdemo import greeet"), offline).results[0]
    assert "did you mean `greet`?" in imported.suggestions
    later = validate_document(analysis("print(answer)", "answer = 42"), offline).results[0]
    assert "only defined later, in example 1 at line 20" in later.suggestions
    assert "line 10 of the page" in later.error_message


def test_the_pinned_version_is_the_one_installed(offline):
    code = "from sbdemo import shout\nprint(shout('v2'))"
    assert outcome(validate_document(analysis(code, version="2.0.0"), offline)) == [("success", None)]
    assert outcome(validate_document(analysis(code, version="1.0.0"), offline)) == [("failure", "error")]


def test_dependencies_are_merged_and_recorded_exactly_as_run(offline):
    result = validate_document(
        analysis("from sbdemo import greet", "name = 'first'", "name = 'second'", "print(greet(name))"), offline
    )
    last = result.results[3]
    assert last.status == "success" and last.execution_output == "hello second\n"
    assert last.depends_on_previous and last.depends_on_example_indices == [0, 2]
    assert last.actual_code_executed == "from sbdemo import greet\n\nname = 'second'\n\nprint(greet(name))\n"


def test_async_examples_and_top_level_await_in_sync_ones_are_wrapped(offline):
    result = validate_document(
        analysis(
            "from sbdemo import greet",
            "import asyncio\nawait asyncio.sleep(0)\nprint(greet('async'))",
            "import asyncio\nawait asyncio.sleep(0)\nprint('labelled sync')",
            contexts={1: "async"},
        ),
        offline,
    )
    assert outcome(result) == [("success", None)] * 3
    assert result.results[1].actual_code_executed.startswith("import asyncio\n\nasync def main():\n")
    assert result.results[1].actual_code_executed.endswith("asyncio.run(main())\n")
    assert result.results[2].execution_output == "labelled sync\n"


def test_not_executable_examples_are_skipped_with_the_reason(offline):
    result = validate_document(analysis("client = Client(<your key>)", contexts={0: "not_executable"}), offline)
    assert outcome(result) == [("skipped", None)]
    assert result.results[0].error_message == "Example marked as not executable"


def test_an_example_that_hangs_times_out(offline):
    offline.timeout = 1
    result = validate_document(analysis("import time\ntime.sleep(30)"), offline).results[0]
    assert (result.status, result.severity) == ("failure", "error")
    assert "timed out after 1 s" in result.error_message


def test_a_failed_install_is_one_clear_reason_on_every_example(offline):
    result = validate_document(
        analysis("import sbdemo", "print(1)", "x", version="9.9.9", contexts={2: "not_executable"}), offline
    )
    assert outcome(result) == [("failure", "warning"), ("failure", "warning"), ("skipped", None)]
    message = result.results[0].error_message
    assert message.startswith("Installing sbdemo==9.9.9 failed:") and "9.9.9" in message
    assert result.results[1].error_message == message


def test_output_is_capped(offline):
    offline.output_cap = 2000
    result = validate_document(analysis("print('x' * 1_000_000)"), offline).results[0]
    assert result.status == "success" and len(result.execution_output) < 2200 and "bytes cut" in result.execution_output


def test_examples_see_none_of_the_apps_secrets(offline, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "never-show-me")
    result = validate_document(analysis("import os\nprint(sorted(os.environ.items()))"), offline).results[0]
    assert "never-show-me" not in result.execution_output


def test_option_looking_requirements_are_refused(offline):
    bad = analysis("print(1)", dependencies=["--index-url=http://evil.example"])
    with pytest.raises(ValidationError, match="not a valid package requirement"):
        validate_document(bad, offline)


def test_bad_analysis_files_are_named_and_skipped(tmp_path, sample_dir):
    (tmp_path / "broken_analysis.json").write_text("{")
    (tmp_path / "extraction_summary.json").write_text("{}")
    (tmp_path / "good_analysis.json").write_text((sample_dir / "extraction" / "toolz_intro_analysis.json").read_text())
    analyses, problems = load_analyses(tmp_path)
    assert [a.page for a in analyses] == ["toolz_intro.md"]
    assert len(problems) == 1 and "broken_analysis.json: not valid JSON" in problems[0]


def test_an_example_that_forks_without_end_is_killed_and_the_next_example_still_runs(offline, pids_cgroup):
    import time

    offline.sandbox, offline.timeout = sandbox_settings(max_processes=64), 30
    bomb = "import os, time\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        time.sleep(0.01)"
    started = time.monotonic()
    first, second = validate_document(analysis(bomb, "print('after')"), offline).results
    assert (first.status, first.severity) == ("failure", "error") and "limit of 64 processes" in first.error_message
    assert second.status == "success" and second.execution_output == "after\n"
    assert time.monotonic() - started < 20


def test_processes_an_example_leaves_behind_are_killed_before_the_next_one(offline, pids_cgroup):
    offline.sandbox, offline.timeout = sandbox_settings(max_processes=64), 30
    detached_bomb = "import subprocess\nsubprocess.Popen(['bash', '-c', 'b() { b | b & }; b'], start_new_session=True)"
    first, second = validate_document(
        analysis(detached_bomb, "import subprocess\nsubprocess.run(['true'])"), offline
    ).results
    assert first.status == "success"
    assert second.status == "success", second.error_message
