"""Validation in real virtualenvs: offline against wheels the tests build, and against PyPI for the fixture."""

import json
import resource

import pytest

from stackbench.formats.walkthrough import CodeExample, ExtractionAnalysis
from stackbench.validation.validator import ValidationError, load_analyses, validate_all, validate_document
from stackbench_site.configuration import sandbox_settings, validation_options

pytestmark = pytest.mark.slow


def analysis(*codes, version="1.0.0", contexts=None, dependencies=(), **page):
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
    return ExtractionAnalysis(page="demo.md", library="sbdemo", version=version, examples=examples, **page)


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
        ("import sbdemo.missing", "ModuleNotFoundError"),
        ("from sbdemo import shout", "ImportError"),
        ("import sbdemo\nsbdemo.gret('x')", "AttributeError"),
    ],
)
def test_mistakes_in_the_example_itself_are_errors(offline, code, error):
    result = validate_document(analysis(code), offline).results[0]
    assert (result.status, result.severity) == ("failure", "error")
    assert result.error_message.startswith(error)


def test_a_name_nothing_defines_makes_an_example_illustrative_not_an_error(offline):
    result = validate_document(analysis("import sbdemo\nprint(sbdemo.greet(row.name))"), offline).results[0]
    assert (result.status, result.severity) == ("skipped", None)
    assert result.error_message.startswith("Illustrative: uses `row`")


def test_a_missing_import_of_a_module_that_exists_is_a_warning_naming_the_import(offline):
    stdlib, own = validate_document(analysis("print(json.dumps([1]))", "print(greet('x'))"), offline).results
    assert (stdlib.status, stdlib.severity) == ("failure", "warning")
    assert stdlib.suggestions.startswith("Add `import json`")
    assert (own.status, own.severity) == ("failure", "warning")
    assert own.suggestions.startswith("Add `from sbdemo import greet`")


def test_an_illustrative_name_wins_over_a_missing_import_in_the_same_example(offline):
    result = validate_document(analysis("print(json.dumps(payload_of_the_reader))"), offline).results[0]
    assert result.status == "skipped" and "`payload_of_the_reader`" in result.error_message


def test_the_readers_own_modules_are_never_looked_up_on_an_index(offline):
    result = validate_document(analysis("from myapp.models import User"), offline).results[0]
    assert result.status == "skipped" and "`myapp`" in result.error_message


def test_an_exception_raised_inside_the_installed_package_is_a_warning(offline):
    result = validate_document(analysis("import sbdemo\nsbdemo.explode(3)"), offline).results[0]
    assert (result.status, result.severity) == ("failure", "warning")
    assert result.error_message == "ValueError: bad value: 3 (line 11 of the page)"
    assert "inside an installed package (sbdemo/__init__.py, line 14, in _check)" in result.suggestions


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
    assert (later.status, later.severity) == ("failure", "warning")
    assert "only defined later, in example 1 (line 20)" in later.suggestions
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


def test_examples_that_await_at_top_level_run_in_an_event_loop(offline):
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
    assert result.results[1].execution_output == "hello async\n"
    assert result.results[2].execution_output == "labelled sync\n"


def test_not_executable_examples_are_skipped_with_the_reason(offline):
    result = validate_document(analysis("client = Client(<your key>)", contexts={0: "not_executable"}), offline)
    assert outcome(result) == [("skipped", None)]
    assert result.results[0].error_message == "Example marked as not executable"


def test_an_example_that_keeps_running_is_stopped_and_the_next_one_still_runs(offline):
    offline.timeout = 1
    hanging, after = validate_document(analysis("import time\ntime.sleep(30)", "print('after')"), offline).results
    assert hanging.status == "skipped" and "did not finish within 1 s" in hanging.error_message
    assert after.status == "success" and after.execution_output == "after\n"


def test_a_library_that_will_not_install_is_one_setup_problem_and_fails_every_runnable_example(offline):
    result = validate_document(
        analysis("import sbdemo", "print(1)", "x", version="9.9.9", contexts={2: "not_executable"}), offline
    )
    assert outcome(result) == [("failure", "warning"), ("failure", "warning"), ("skipped", None)]
    assert [p.requirement for p in result.setup_problems] == ["sbdemo==9.9.9"]
    assert "9.9.9" in result.setup_problems[0].log
    assert result.results[0].error_message.startswith("Installing sbdemo==9.9.9 failed")


def test_a_page_package_that_will_not_install_fails_only_the_examples_that_need_it(offline):
    page = analysis(
        "import sbdemo\nprint(sbdemo.greet('a'))",
        "import sbmissing\nprint(1)",
        requirements=[{"requirement": "sbmissing==1.0", "line": 3}],
    )
    first, second = validate_document(page, offline).results
    assert first.status == "success"
    assert (second.status, second.severity) == ("failure", "warning")
    assert "could not be installed" in second.suggestions
    problems = validate_document(page, offline).setup_problems
    assert [p.requirement for p in problems] == ["sbmissing==1.0"] and "sbmissing" in problems[0].log


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
    # The bomb may reach the limit before the example's answer does (a run gets only its share of the CPUs): then
    # the example that started it is the one that failed, never the next.
    assert first.status == "success" or "limit of 64 processes" in first.error_message, first
    assert second.status == "success", second.error_message


# -- pages read the way their readers follow them -------------------------------------------------------------------
def session(code, line):
    return CodeExample(library="sbdemo", code=code, line=line, style="doctest")


def script(code, line, **fields):
    return CodeExample(library="sbdemo", code=code, line=line, style="script", **fields)


def page(*examples, **fields):
    return ExtractionAnalysis(page="guide.md", library="sbdemo", version="1.0.0", examples=list(examples), **fields)


def test_doctest_sessions_run_statement_by_statement_and_share_the_pages_names(offline):
    result = validate_document(
        page(
            session(">>> from sbdemo import greet\n>>> who = 'docs'\n>>> greet(who)\n'hello docs'\n", 10),
            session(">>> greet(who).upper()\n'HELLO DOCS'\n>>> 1/0  # doctest: +SKIP\n", 20),
        ),
        offline,
    )
    assert outcome(result) == [("success", None), ("success", None)]
    assert [(r.statements, r.statements_run) for r in result.results] == [(3, 3), (2, 1)]


def test_a_session_whose_output_differs_shows_the_expected_and_the_actual_at_the_pages_line(offline):
    result = validate_document(
        page(session(">>> from sbdemo import greet\n>>> greet('x')\n'hi x'\n>>> 2 + 2\n5\n", 30)), offline
    ).results[0]
    assert (result.status, result.severity) == ("failure", "error")
    assert "(line 31)" in result.error_message and "1 later statement(s)" in result.error_message
    assert result.expected_output == "'hi x'\n" and "'hello x'" in result.execution_output


def test_output_that_differs_only_in_run_to_run_values_is_info(offline):
    result = validate_document(
        page(
            session(">>> import datetime\n>>> print(datetime.datetime(2024, 5, 6, 7, 8, 9))\n2020-01-02 03:04:05\n", 40)
        ),
        offline,
    ).results[0]
    assert (result.status, result.severity) == ("success", "info")


def test_a_traceback_the_page_shows_is_the_expected_outcome(offline):
    result = validate_document(
        page(
            session(
                ">>> import sbdemo\n>>> sbdemo.explode(1)\nTraceback (most recent call last):\n...\n"
                "ValueError: bad value: 1\n",
                50,
            )
        ),
        offline,
    ).results[0]
    assert result.status == "success" and result.severity is None


def test_what_a_script_prints_is_compared_with_the_output_under_each_print(offline):
    good, wrong = validate_document(
        page(
            script("from sbdemo import greet\nprint(greet('a'))\n#> hello a\n", 10),
            script("from sbdemo import greet\nprint(greet('b'))\n'''\nhello c\n'''\n", 20),
        ),
        offline,
    ).results
    assert good.status == "success"
    assert (wrong.status, wrong.severity) == ("failure", "error")
    assert "the print at line 21" in wrong.error_message and wrong.expected_output == "hello c"


def test_an_output_block_after_a_script_is_compared_with_everything_it_prints(offline):
    result = validate_document(
        page(script("print('one')\nprint('two')\n", 10, expected_output="one\nthree\n", expected_output_line=14)),
        offline,
    ).results[0]
    assert (result.status, result.severity) == ("failure", "error")
    assert "the output at line 14" in result.error_message


def test_the_pages_exports_files_and_hidden_setup_are_in_place_when_the_reader_gets_there(offline):
    result = validate_document(
        page(
            script("import os\nprint(os.environ.get('SB_MODE'))\n#> None\n", 5),
            script(
                "import os\nprint(os.environ['SB_MODE'], open('settings.toml').read().strip())\n#> fast size = 3\n", 20
            ),
            session(">>> secret\n42\n", 30),
            environment=[{"name": "SB_MODE", "value": "fast", "line": 10}],
            files=[{"path": "settings.toml", "content": "size = 3\n", "line": 12}],
            setup=[{"code": "secret = 42\n", "line": 25, "source": "guide.md"}],
        ),
        offline,
    )
    assert outcome(result) == [("success", None)] * 3


def test_one_scripts_changes_to_the_process_do_not_leak_into_the_next(offline):
    result = validate_document(
        page(
            script("import os, sys\nos.environ['LEAK'] = '1'\nsys.modules['json'] = None\n", 5),
            script("import os, json\nprint(os.environ.get('LEAK'))\n#> None\n", 10),
        ),
        offline,
    )
    assert outcome(result) == [("success", None), ("success", None)]


def test_an_example_that_builds_on_a_failed_one_is_not_counted_again(offline):
    result = validate_document(
        page(script("from sbdemo import greet\nvalue = greet(1, 2)\n", 5), script("print(value)\n", 10)), offline
    )
    assert outcome(result) == [("failure", "error"), ("skipped", None)]
    assert result.results[1].error_message == "Builds on example 0 (line 5), which failed; counted there."


def test_an_optional_dependency_the_library_asks_for_is_installed_and_noted(offline):
    result = validate_document(
        page(script("import sbdemo\nprint(sbdemo.fancy_greet('x'))\n#> *hello x*\n", 5)), offline
    ).results[0]
    assert (result.status, result.severity) == ("success", "info")
    assert "`sbdemo[fancy]==1.0.0`" in result.error_message


def test_each_result_file_records_the_python_and_the_installed_distributions(offline):
    result = validate_document(page(script("import sbdemo\n", 5)), offline)
    assert result.environment.python.startswith("3.")
    assert result.environment.distributions["sbdemo"] == "1.0.0"
    assert json.loads(result.model_dump_json())["environment"]["distributions"]["sbdemo"] == "1.0.0"


def test_a_library_that_needs_a_python_the_worker_lacks_says_so(offline):
    result = validate_document(analysis("import sbdemo", version="3.0.0"), offline)
    assert result.results[0].status == "failure"
    assert "it does not support Python 3." in result.setup_problems[0].message


def test_a_file_the_page_shows_is_never_written_through_a_link_an_example_planted(offline, root_only):
    folder, secret = root_only
    result = validate_document(
        page(
            script(f"import os\nos.symlink('{folder}/made/config.toml', 'config.toml')\n", 5),
            script("print(open('config.toml').read())\n", 20),
            files=[{"path": "config.toml", "content": "planted = true\n", "line": 12}],
        ),
        offline,
    )
    assert sorted(path.name for path in folder.iterdir()) == ["secret.txt"]
    assert "planted" not in secret.read_text()
    assert result.results[0].status == "success"


def test_what_the_runner_and_its_setup_print_is_read_from_files_the_page_cannot_replace(offline, root_only):
    _, secret = root_only
    relink = (
        "import glob, os\n"
        "for path in glob.glob('/run/stackbench/*.log'):\n"
        f"    os.remove(path); os.symlink('{secret}', path)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    result = validate_document(page(script(relink, 5), script("print('next')\n#> next\n", 10)), offline)
    assert "ROOT-ONLY" not in result.model_dump_json()
    assert result.results[1].status == "success"


def test_a_flood_into_the_runners_own_pipe_costs_bounded_memory(offline):
    # Every pipe the runner's process may write to, its answers to the worker among them.
    flood = (
        "import fcntl, os\n"
        "pipes = [fd for fd in range(3, 64) if os.path.exists(f'/proc/self/fd/{fd}')\n"
        "         and os.readlink(f'/proc/self/fd/{fd}').startswith('pipe:')\n"
        "         and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY]\n"
        "chunk = b'x' * 2**20\n"
        "while True:\n"
        "    for fd in pipes:\n"
        "        os.write(fd, chunk)\n"
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = validate_document(page(script(flood, 5), script("print('after')\n#> after\n", 10)), offline)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 300_000  # kilobytes
    assert result.results[0].status == "failure" and result.results[1].status == "success"
