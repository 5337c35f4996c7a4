"""Pages followed in order the way their readers follow them, in real virtualenvs, offline against wheels the tests
build."""

import json
import sys

import pytest

from stackbench.docs import python_code
from stackbench.formats.walkthrough import CodeExample, ExtractionAnalysis, FileCommand, PageFile
from stackbench.validation.batch import validate_document
from stackbench_site.configuration import validation_options
from tests.builders import build_wheel
from tests.stackbench.validation.example_pages import analysis, outcome, page, script, session

pytestmark = pytest.mark.slow


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


def test_a_name_nothing_defines_makes_a_script_illustrative_not_an_error(offline):
    result = validate_document(analysis("import sbdemo\nprint(sbdemo.greet(row.name))"), offline).results[0]
    assert (result.status, result.severity) == ("skipped", None)
    assert result.error_message.startswith("Illustrative: uses `row`")


def test_a_missing_import_of_a_module_that_exists_is_a_warning_naming_the_import(offline):
    stdlib, own = validate_document(analysis("print(json.dumps([1]))", "print(greet('x'))"), offline).results
    assert (stdlib.status, stdlib.severity) == ("failure", "warning")
    assert stdlib.suggestions.startswith("Add `import json`")
    assert (own.status, own.severity) == ("failure", "warning")
    assert own.suggestions.startswith("Add `from sbdemo import greet`")


def scripts_on_a_built_library(folder, library, *codes):
    """The results of scripts (at lines 5, 10, ...) on a guide page of a library 1.0.0 whose wheel is in folder,
    validated offline."""
    options = validation_options(timeout=10, find_links=[folder], offline=True, num_workers=1)
    examples = [
        CodeExample(library=library, code=code, line=5 * number, style="script") for number, code in enumerate(codes, 1)
    ]
    return validate_document(
        ExtractionAnalysis(page="guide.md", library=library, version="1.0.0", examples=examples), options
    ).results


def test_a_library_class_two_modules_deep_is_an_import_away_and_a_function_that_deep_stays_the_readers(tmp_path):
    build_wheel(
        tmp_path,
        "sbsnap",
        "1.0.0",
        "",
        submodules={
            "extensions/__init__": "",
            "extensions/image/__init__": "from .svg import SVGExtension\n",
            "extensions/image/svg": "class SVGExtension:\n    pass\n\ndef render():\n    return 'svg'\n",
        },
    )
    deep_class, deep_function = scripts_on_a_built_library(
        tmp_path, "sbsnap", "import sbsnap\nprint(SVGExtension())\n", "import sbsnap\nprint(render())\n"
    )
    assert (deep_class.status, deep_class.severity) == ("failure", "warning")
    assert deep_class.suggestions.startswith("Add `from sbsnap.extensions.image import SVGExtension`")
    assert deep_function.status == "skipped", "a function's name that deep is as likely the reader's own"


def test_an_everyday_standard_library_name_is_an_import_away_and_a_plain_word_stays_the_readers(offline):
    dataclass_code = "@dataclass\nclass Point:\n    x: int\n\nprint(Point(1))"
    named, plain = validate_document(analysis(dataclass_code, "print(merge([1], [2]))"), offline).results
    assert (named.status, named.severity) == ("failure", "warning")
    assert named.suggestions.startswith("Add `from dataclasses import dataclass`")
    assert plain.status == "skipped" and plain.error_message.startswith("Illustrative: uses `merge`")


def test_an_illustrative_name_wins_over_a_missing_import_in_the_same_example(offline):
    result = validate_document(analysis("print(json.dumps(payload_of_the_reader))"), offline).results[0]
    assert result.status == "skipped" and "`payload_of_the_reader`" in result.error_message


def test_a_program_whose_argument_parser_stops_it_for_want_of_arguments_is_skipped_as_a_command_line(offline):
    program = "import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('name')\nparser.parse_args()"
    parsed, stopped = validate_document(analysis(program, "import sys\nsys.exit(2)"), offline).results
    assert parsed.status == "skipped" and parsed.error_message.startswith("A command-line program")
    assert (stopped.status, stopped.severity) == ("failure", "error"), "the example's own exit is its own"


def test_an_exit_the_example_spells_out_is_what_it_shows_and_a_computed_one_is_how_it_fared(offline):
    shown = "raise SystemExit('Stopping here')\n"
    computed = "def main():\n    return 4\n\nraise SystemExit(main())\n"
    spelled, fared = validate_document(analysis(shown, computed), offline).results
    assert (spelled.status, spelled.severity) == ("success", None)
    assert (fared.status, fared.severity) == ("failure", "error") and "status 4" in fared.error_message


def test_an_output_that_differs_because_an_earlier_example_could_not_make_its_object_anew_is_counted_there(offline):
    result = validate_document(
        page(
            script("from sbdemo import greet\nwords = greet('a')\n", 5),
            script("raise ConnectionError('no server here')\nwords = greet('b')\n", 10),
            session(">>> print(words)\nhello b\n", 15),
        ),
        offline,
    )
    assert outcome(result) == [("success", None), ("skipped", None), ("skipped", None)]
    assert result.results[2].error_message.startswith("Builds on example 1 (line 10), which is not run: Needs the")


def test_an_exception_from_an_object_an_earlier_example_could_not_make_anew_is_counted_there(offline):
    result = validate_document(
        page(
            script("def area(side):\n    return side * side\n", 5),
            script("from my_package import area\n", 10),
            session(">>> area('a')\n'aa'\n", 15),
            session(">>> len(3)\n1\n", 20),
            session(">>> area = len\n>>> area(3)\n1\n", 25),
        ),
        offline,
    )
    assert outcome(result) == [
        ("success", None),
        ("skipped", None),
        ("skipped", None),
        ("failure", "error"),
        ("failure", "error"),
    ], "a name the session makes anew itself is its own"
    assert result.results[2].error_message.startswith("Builds on example 1 (line 10), which is not run")


def test_an_abstract_base_refusing_a_class_the_example_leaves_empty_is_a_shape_to_fill_and_a_full_one_an_error(
    offline,
):
    base = "import abc\nclass Shape(abc.ABC):\n    @abc.abstractmethod\n    def area(self): ...\n"
    result = validate_document(
        page(
            script(base + "class Tile(Shape):\n    ...\n\nTile()\n", 10),
            script(base + "class Tile(Shape):\n    def side(self):\n        return 1\n\nTile()\n", 20),
        ),
        offline,
    )
    assert outcome(result) == [("skipped", None), ("failure", "error")]
    assert result.results[0].error_message.startswith("Illustrative: `Tile` has an empty body")


def test_a_file_written_into_a_folder_the_page_never_creates_is_an_error_and_one_read_is_the_readers(offline):
    written, read = validate_document(
        analysis("open('reports/week.txt', 'w').write('ok')", "print(open('inbox/mail.txt').read())"), offline
    ).results
    assert (written.status, written.severity) == ("failure", "error")
    assert written.suggestions.startswith("The example writes into the folder `reports`, which the page never creates")
    assert (read.status, read.severity) == ("skipped", None), "a file read is the reader's own"


def test_a_failure_naming_a_file_the_page_links_that_could_not_be_downloaded_is_no_finding_and_others_still_are(
    offline,
):
    linked = PageFile(path="cities.csv", content="", url="https://example.org/data/cities.csv", line=5)
    result = validate_document(
        analysis(
            "import os\nif not os.path.exists('cities.csv'):\n    raise ValueError('cannot load cities.csv')",
            "name = 'cities.csv'\nprint(len(name) / 0)",
            files=[linked],
        ),
        offline,
    )
    assert outcome(result) == [("skipped", None), ("failure", "error")], "a failure of its own is still one"
    [problem] = result.setup_problems
    assert (
        problem.requirement == "cities.csv" and "could not be downloaded (validation runs offline)" in problem.message
    )


def test_a_file_of_the_projects_own_tests_the_page_reads_is_an_error_and_another_file_the_readers(offline):
    fixture, through_pathlib, own = validate_document(
        analysis(
            "print(open('tests/fixtures/books.json').read())",
            "import pathlib\nprint(pathlib.Path('tests/fixtures/a.xml').read_text())",
            "print(open('data/books.json').read())",
        ),
        offline,
    ).results
    assert (
        (fixture.status, fixture.severity) == (through_pathlib.status, through_pathlib.severity) == ("failure", "error")
    )
    assert fixture.suggestions.startswith("`tests/fixtures/books.json` is a file of the project's own tests")
    assert (own.status, own.severity) == ("skipped", None)


def test_a_name_the_docs_import_a_module_under_elsewhere_is_a_missing_import_of_that_module(offline):
    result = validate_document(
        analysis("print(sb.greet('docs'))", "print(sbx.greet('docs'))", docs_aliases={"sb": "sbdemo"}), offline
    )
    assert outcome(result) == [("failure", "warning"), ("skipped", None)], "a name the docs never import is a sketch"
    assert result.results[0].suggestions.startswith("Add `import sbdemo as sb` to the example")


def test_an_exception_raised_inside_the_installed_package_is_a_warning(offline):
    result = validate_document(analysis("import sbdemo\nsbdemo.explode(3)"), offline).results[0]
    assert (result.status, result.severity) == ("failure", "warning")
    assert result.error_message == "ValueError: bad value: 3 (line 11 of the page)"
    assert "inside an installed package (sbdemo/__init__.py, line 14, in _check)" in result.suggestions


def test_a_runner_that_cannot_start_again_midway_stops_the_rest_of_its_page_with_a_setup_problem(offline, monkeypatch):
    from stackbench.validation.options import ValidationError
    from stackbench.validation.page_process import PageProcess

    request = PageProcess.request

    def fails_on_the_second_script(self, message, timeout, remember=False):
        if message.get("op") == "script" and message.get("name", "").startswith("example_1_"):
            raise ValidationError("the page runner did not start: no output")
        return request(self, message, timeout, remember)

    monkeypatch.setattr(PageProcess, "request", fails_on_the_second_script)
    result = validate_document(analysis("print(1)", "print(2)", "print(3)"), offline)
    assert outcome(result) == [("success", None), ("skipped", None), ("skipped", None)]
    [problem] = result.setup_problems
    assert problem.message == "The examples from line 20 on were not run: the page runner did not start: no output"


def test_a_cause_outside_the_blocks_that_recurs_is_reported_once_and_its_repeats_point_to_that_example(offline):
    result = validate_document(
        analysis(
            "print(json.dumps([1]))",
            "import sbdemo\nsbdemo.explode(3)",
            "print(json.dumps([2]))",
            "import sbdemo\nsbdemo.explode(4)",
            "print(json.loads('[3]'))",
            "print(os.sep)",
        ),
        offline,
    )
    first, raised, again, raised_again, third, other = result.results
    assert outcome(result) == [
        ("failure", "warning"),
        ("failure", "warning"),
        ("failure", "info"),
        ("failure", "info"),
        ("failure", "info"),
        ("failure", "warning"),
    ]
    assert first.repeats_example is None and other.repeats_example is None
    assert (again.repeats_example, raised_again.repeats_example, third.repeats_example) == (0, 1, 0)
    assert again.suggestions == (
        "Fails as example 0 (line 10) does, and is counted there: Add `import json` to the example: `json` is never "
        "imported."
    )
    assert raised_again.error_message == "ValueError: bad value: 4 (line 41 of the page)", "its own evidence stays"


def test_mistakes_in_each_blocks_own_code_are_each_reported_however_alike(offline):
    result = validate_document(
        analysis(
            "print('unclosed'", "print('unclosed'", "import sbdemo\nsbdemo.gret('x')", "import sbdemo\nsbdemo.gret('y')"
        ),
        offline,
    )
    assert outcome(result) == [("failure", "error")] * 4
    assert all(r.repeats_example is None for r in result.results)


def test_a_deprecation_warning_is_info_and_the_example_still_succeeds(offline):
    result = validate_document(analysis("import sbdemo\nprint(sbdemo.old_greet('x'))"), offline).results[0]
    assert (result.status, result.severity) == ("success", "info")
    assert "DeprecationWarning: old_greet is deprecated" in result.error_message


def test_a_main_a_script_defines_and_never_calls_is_run_as_its_reader_runs_it(offline):
    async_main, sync_main, with_argument, called = validate_document(
        page(
            script("async def main():\n    raise ValueError('bad url')\n", 10),
            script("def main():\n    raise ValueError('bad url')\n", 20),
            script("def main(argv):\n    raise ValueError('bad url')\n", 30),
            script("def main():\n    return 1\n\nmain()\n", 40),
        ),
        offline,
    ).results
    for result in (async_main, sync_main):
        assert (result.status, result.severity) == ("failure", "error"), result.error_message
        assert "ValueError: bad url" in result.error_message
    assert (with_argument.status, called.status) == ("success", "success"), "an argument only its caller has"


def test_a_coroutine_called_without_await_is_a_warning_and_one_awaited_succeeds(offline):
    defined = "import asyncio\n\nasync def rollback():\n    print('rolled back')\n\n"
    forgotten, awaited = validate_document(
        page(script(defined + "rollback()\n", 10), script(defined + "asyncio.run(rollback())\n", 20)), offline
    ).results
    assert (forgotten.status, forgotten.severity) == ("failure", "warning")
    assert "coroutine 'rollback' was never awaited" in forgotten.error_message
    assert "`rollback` is a coroutine function" in forgotten.suggestions
    assert (awaited.status, awaited.severity) == ("success", None)


def test_suggestions_name_the_close_match_and_the_version(offline):
    attribute = validate_document(analysis("import sbdemo\nsbdemo.gret('x')"), offline).results[0]
    assert "did you mean `greet`?" in attribute.suggestions and "sbdemo 1.0.0" in attribute.suggestions
    imported = validate_document(analysis("from sbdemo import greeet"), offline).results[0]
    assert "did you mean `greet`?" in imported.suggestions
    later = validate_document(analysis("print(answer)", "answer = 42"), offline).results[0]
    assert (later.status, later.severity) == ("failure", "warning")
    assert "only defined later, in example 1 (line 20)" in later.suggestions
    assert "line 10 of the page" in later.error_message


def test_a_name_the_page_next_defines_under_another_heading_is_that_sections_object_not_a_slip(offline):
    elsewhere, here = (
        validate_document(
            page(
                script("print(answer)\n", 10, section_hierarchy=["Guide", "Asking"]),
                script("answer = 42\n", 20, section_hierarchy=["Guide", later_section]),
            ),
            offline,
        ).results[0]
        for later_section in ("Answering", "Asking")
    )
    assert elsewhere.status == "skipped" and elsewhere.error_message.startswith("Illustrative: uses `answer`")
    assert (here.status, here.severity) == ("failure", "warning"), "the same section forgot to define it first"


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


def test_a_none_shown_as_the_value_of_an_expression_is_what_the_reader_is_told_not_a_difference(offline):
    result = validate_document(
        page(
            session(
                ">>> def lookup(key, table):\n...     return table.get(key)\n>>> lookup('a', {})\nNone\n"
                ">>> print('done') or lookup('b', {})\ndone\nNone\n",
                40,
            )
        ),
        offline,
    ).results[0]
    assert (result.status, result.severity) == ("success", "info")
    assert "prints nothing for None" in result.error_message


def test_a_none_shown_for_an_expression_whose_value_is_something_else_is_still_a_difference(offline):
    result = validate_document(
        page(session(">>> items = []\n>>> items.append(1)\nNone\n>>> items\nNone\n", 40)), offline
    )
    assert outcome(result) == [("failure", "error")]
    assert "The page shows `None`; it printed `[1]`" in result.results[0].error_message


def test_calling_a_function_the_page_gives_only_as_overload_signatures_is_a_sketch_not_an_error(offline):
    result = validate_document(
        page(
            script(
                "from typing import overload\n\n@overload\ndef scale(x: int) -> int: ...\n"
                "@overload\ndef scale(x: float) -> float: ...\n",
                10,
            ),
            script("scale(2)\n", 20),
        ),
        offline,
    )
    assert outcome(result) == [("success", None), ("skipped", None)]
    assert "`@overload` signatures" in result.results[1].error_message


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


def test_the_examples_after_one_that_only_lacks_an_import_are_judged_on_their_own(offline):
    result = validate_document(
        page(
            script("message = greet('docs')\n", 10),
            script("print(message.upper())\n#> HELLO PAGE\n", 20),
            script("print(greet('again'))\n", 30),
        ),
        offline,
    )
    lacking, after, lacking_too = result.results
    assert (lacking.status, lacking.severity) == ("failure", "warning")
    assert lacking.suggestions.startswith("Add `from sbdemo import greet`")
    assert (after.status, after.severity) == ("failure", "error"), "its own wrong output, not example 0's cascade"
    assert "HELLO DOCS" in after.error_message
    assert lacking_too.status == "failure", "the import added above is not its"
    assert (lacking_too.severity, lacking_too.repeats_example) == ("info", 0), "the same import, counted at example 0"


CHAINED_LOOKUP = (
    ">>> def lookup(key):\n"
    "...     try:\n"
    "...         return {}[key]\n"
    "...     except KeyError as error:\n"
    "...         raise LookupError(f'no {key}') from error\n"
    "...\n"
    ">>> lookup('k')\n"
    "Traceback (most recent call last):\n"
    '  File "/home/author/lookups.py", line 3, in lookup\n'
    "KeyError: 'k'\n"
    "\n"
    "The above exception was the direct cause of the following exception:\n"
    "\n"
    "Traceback (most recent call last):\n"
    '  File "<stdin>", line 1, in <module>\n'
    "LAST\n"
)


def test_a_chained_traceback_the_page_shows_runs_to_its_last_exception(offline):
    shown, wrong = validate_document(
        page(
            session(CHAINED_LOOKUP.replace("LAST", "LookupError: no k"), 60),
            session(CHAINED_LOOKUP.replace("LAST", "RuntimeError: no k"), 80),
        ),
        offline,
    ).results
    assert shown.status == "success" and shown.severity in (None, "info")
    assert (wrong.status, wrong.severity) == ("failure", "error")


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


def test_lines_printed_in_another_order_by_code_going_through_a_set_are_what_its_reader_may_see(offline):
    # Small ints hash to themselves, so a set of them is gone through in the same order on every run here.
    result = validate_document(
        page(
            session(">>> sizes = {3, 1, 2}\n>>> for size in sorted(sizes, reverse=True): print(size)\n3\n2\n1\n", 10),
            session(">>> sizes = {3, 1, 2}\n>>> for size in sizes: print(size)\n3\n1\n2\n", 20),
            session(">>> for size in [3, 1, 2]: print(size)\n1\n2\n3\n", 30),
            session(">>> for size in {3, 1, 2}: print(size)\n3\n1\n4\n", 40),
            script("for size in frozenset([3, 1, 2]):\n    print(size)\n", 50, expected_output="2\n3\n1\n"),
        ),
        offline,
    )
    assert outcome(result) == [
        ("success", None),
        ("success", "info"),
        ("failure", "error"),
        ("failure", "error"),
        ("success", "info"),
    ]
    assert "another order" in result.results[1].error_message


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


def test_a_variable_an_example_reads_and_the_page_never_sets_is_set_as_the_reader_sets_their_own(offline):
    runs, still_broken, rejected = validate_document(
        page(
            script("import os\nfrom sbdemo import greet\nprint(greet(os.environ['SB_TOKEN']))\n", 5),
            script("import os\ntoken = os.environ['SB_TOKEN']\nprint(json.dumps(token))\n", 10),
            script("import os, sbdemo\nsbdemo.explode(os.environ['SB_LEVEL'])\n", 15),
        ),
        offline,
    ).results
    assert (runs.status, runs.severity) == ("success", "info") and "SB_TOKEN" in runs.error_message
    assert (still_broken.status, still_broken.severity) == ("failure", "warning"), "what fails once it is set counts"
    assert still_broken.suggestions.startswith("Add `import json`")
    assert (rejected.status, rejected.severity) == ("skipped", None), "the package may refuse the stand-in value"
    assert "SB_LEVEL" in rejected.error_message


def test_an_error_raised_inside_a_module_the_page_shows_as_a_file_is_counted_at_that_files_block(offline):
    module = "class Square:\n    def __init__(self, side: SideOfTheReader) -> None:\n        self.side = side\n"
    shown, importing = validate_document(
        page(
            script(module, 5),
            script("from shapes.model import Square\nprint(Square)\n", 20),
            files=[{"path": "shapes/model.py", "content": module, "line": 5}],
        ),
        offline,
    ).results
    assert (shown.status, importing.status) == ("skipped", "skipped")
    assert importing.error_message.startswith("Builds on example 0 (line 5, shapes/model.py), which is not run")


def test_a_module_the_page_shows_as_a_file_has_only_the_names_it_imports_not_those_of_the_pages_other_files(offline):
    side = "class Side:\n    length = 3\n"
    square = "class Square:\n    def __init__(self, side: Side) -> None:\n        self.side = side\n"
    more_of_side = "def double(side: Side) -> int:\n    return side.length * 2\n"
    result = validate_document(
        page(
            script(side, 5),
            script(square, 20),
            script(more_of_side, 30),
            files=[
                {"path": "shapes/side.py", "content": side, "line": 5},
                {"path": "shapes/square.py", "content": square, "line": 20},
                {"path": "shapes/side.py", "content": more_of_side, "line": 30},
            ],
        ),
        offline,
    )
    assert outcome(result) == [("success", None), ("failure", "error"), ("success", None)]
    unimported = result.results[1]
    assert unimported.error_message == "NameError: name 'Side' is not defined (line 21 of the page)"
    assert "shapes/square.py never imports it" in unimported.suggestions


def test_a_package_the_page_lays_out_under_src_imports_by_its_name_as_the_installed_project_of_the_reader(offline):
    module = "SIDES = 4\n"
    package = "from tiling.square import SIDES\n\n__all__ = ['SIDES']\n"
    result = validate_document(
        page(
            script(module, 5),
            script(package, 20),
            script("import tiling\nprint(tiling.SIDES)\n", 30),
            files=[
                {"path": "./src/tiling/square.py", "content": module, "line": 5},
                {"path": "./src/tiling/__init__.py", "content": package, "line": 20},
            ],
        ),
        offline,
    )
    assert outcome(result) == [("success", None)] * 3


def test_a_function_that_uses_an_unimported_module_or_a_misspelt_import_is_flagged_though_its_run_never_calls_it(
    offline,
):
    result = validate_document(
        page(
            script("def listing():\n    return os.listdir()\n", 5),
            script("import sbdemo\n\ndef hello():\n    return sbdem.greet('x')\n", 10),
            script("def report(row):\n    return row_of_the_reader.total\n", 20),
        ),
        offline,
    )
    assert outcome(result) == [("failure", "warning"), ("failure", "warning"), ("success", None)]
    unimported, misspelt, _ = result.results
    assert unimported.suggestions.startswith("Add `import os`")
    assert "did you mean it" in misspelt.suggestions and "`sbdemo`" in misspelt.suggestions


def test_an_unimported_module_in_a_class_that_also_uses_a_name_nothing_provides_is_a_sketch_not_a_slip(offline):
    sketch = "class Store:\n    def __init__(self, home):\n        self.path = os.path.join(home, 'db')\n\n"
    sketch += "    def open(self):\n        return open_the_store(self.path)\n"
    slip = "class Store:\n    def __init__(self, home):\n        self.path = os.path.join(home, 'db')\n\n\n"
    slip += "def opened():\n    return open_the_store('db')\n"
    result = validate_document(page(script(sketch, 5), script(slip, 20)), offline)
    assert outcome(result) == [("success", None), ("failure", "warning")], "only the class's own stand-in excuses it"
    assert result.results[1].suggestions.startswith("Add `import os`")


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


BROKEN_HALFWAY = "from sbdemo import greet\nfirst = greet('a')\nvalue = greet(1, 2)\nlast = 3\n"


def test_scripts_after_a_failed_one_run_with_what_it_defined_and_report_their_own_defects(offline):
    result = validate_document(
        page(
            script(BROKEN_HALFWAY, 5),
            script("print(first)\n#> hello b\n", 10),
            script("print(greet('c'))\n#> hello c\n", 15),
            script("copy = value\n", 20),
            script("print(copy, last)\n", 25),
        ),
        offline,
    )
    assert outcome(result) == [("failure", "error"), ("failure", "error"), ("success", None)] + [("skipped", None)] * 2
    assert "The page shows `hello b`; it printed `hello a`" in result.results[1].error_message
    assert {r.error_message for r in result.results[3:]} == {
        "Builds on example 0 (line 5), which failed; counted there."
    }


def test_sessions_after_a_failed_example_see_what_it_defined_before_it_broke(offline):
    result = validate_document(
        page(
            session(">>> " + BROKEN_HALFWAY.strip().replace("\n", "\n>>> ") + "\n", 5),
            session(">>> first\n'hello b'\n", 10),
            script(BROKEN_HALFWAY.replace("last", "final"), 15),
            session(">>> first\n'hello a'\n", 20),
            session(">>> final\n3\n", 25),
        ),
        offline,
    )
    assert outcome(result) == [("failure", "error"), ("failure", "error"), ("failure", "error"), ("success", None)] + [
        ("skipped", None)
    ]
    assert result.results[4].error_message == "Builds on example 2 (line 15), which failed; counted there."


def test_the_imports_a_reader_types_into_a_session_that_lacked_them_stay_for_the_sessions_after_it(offline):
    lacking, later, again = validate_document(
        page(
            session(
                ">>> import sbdemo\n>>> sbdemo.runs = getattr(sbdemo, 'runs', 0) + 1\n"
                '>>> print(json.dumps([greet("a"), sbdemo.runs]))\n["hello a", 1]\n',
                5,
            ),
            session('>>> print(json.dumps(greet("c")))\n"hello c"\n', 15),
            session(">>> sbdemo.runs\n1\n", 20),
        ),
        offline,
    ).results
    assert (lacking.status, lacking.severity) == ("failure", "warning"), "the session that lacked them is reported"
    assert lacking.error_message.startswith("NameError: name 'json' is not defined")
    assert (later.status, later.severity) == ("success", None), later.error_message
    # The session ran once with the imports typed first: what it did, it did once.
    assert (again.status, again.severity) == ("success", None), again.error_message


def test_a_session_importing_from_the_projects_test_suite_is_an_error_its_reader_meets(offline):
    typed, saved = validate_document(
        page(
            session(">>> from tests.shapes import Square\n>>> Square(2).area\n4\n", 5),
            script("from tests.shapes import Square\n\nprint(Square(2).area)\n", 15),
        ),
        offline,
    ).results
    assert (typed.status, typed.severity) == ("failure", "error")
    assert typed.error_message.startswith("ModuleNotFoundError: No module named 'tests'")
    assert "the project's own test suite" in typed.suggestions
    # A program the reader saves may well sit beside their own tests: theirs, as any module the page never shows.
    assert saved.status == "skipped", saved.error_message


def test_a_name_an_earlier_example_defined_before_a_failed_one_redefines_it_is_there(offline):
    result = validate_document(
        page(
            script("name = 'ok'\n", 5),
            script("from sbdemo import greet\nname = greet(1, 2)\n", 10),
            script("from sbdemo import greet\nprint(greet(name))\n#> hello ok\n", 15),
        ),
        offline,
    )
    assert outcome(result) == [("success", None), ("failure", "error"), ("success", None)]
    assert result.results[2].depends_on_example_indices == [0, 1]


def test_a_name_a_session_types_that_nothing_defines_is_an_error_unless_the_page_makes_it_the_readers(offline):
    typo, prefixed, named = validate_document(
        page(
            session(">>> from sbdemo import greet\n>>> greet(Greeting)\n", 5),
            session(">>> greet(my_name)\n", 10),
            session(">>> greet(who)\n", 15, readers_names=["who"]),
        ),
        offline,
    ).results
    assert (typo.status, typo.severity) == ("failure", "error")
    assert typo.error_message.startswith("NameError: name 'Greeting' is not defined")
    assert prefixed.error_message.startswith("Illustrative: uses `my_name`")
    assert named.error_message.startswith("Illustrative: uses `who`")


def test_an_optional_dependency_the_library_asks_for_is_installed_and_noted_when_the_page_names_it(offline):
    fancy = script("import sbdemo\nprint(sbdemo.fancy_greet('x'))\n#> *hello x*\n", 5)
    named, unnamed = (
        validate_document(page(fancy, prose_names=names), offline).results[0] for names in (["sbfancy"], [])
    )
    assert (named.status, named.severity) == ("success", "info")
    assert "`sbdemo[fancy]==1.0.0`" in named.error_message
    assert (unnamed.status, unnamed.severity) == ("failure", "warning"), "a reader never told of it does not have it"
    assert unnamed.error_message.startswith("ModuleNotFoundError: No module named 'sbfancy'")
    assert unnamed.suggestions.endswith('add `pip install "sbdemo[fancy]"` to the page.')


def test_an_optional_dependency_the_docs_installation_page_installs_is_there_without_a_note(offline):
    fancy = script("import sbdemo\nprint(sbdemo.fancy_greet('x'))\n#> *hello x*\n", 5)
    [result] = validate_document(page(fancy, docs_requirements=["sbdemo[fancy]"]), offline).results
    assert (result.status, result.severity) == ("success", None), "the reader followed the installation page first"


def test_a_package_imported_beside_the_librarys_module_named_after_it_is_the_readers_and_is_installed(tmp_path):
    build_wheel(tmp_path, "sbadapt", "1.0.0", "", submodules={"sbplain": "def wrap(v):\n    return f'[{v}]'\n"})
    build_wheel(tmp_path, "sbplain", "1.0.0", "VALUE = 'plain'\n")
    options = validation_options(timeout=10, find_links=[tmp_path], offline=True, num_workers=1)
    adapted = "from sbplain import VALUE\nfrom sbadapt.sbplain import wrap\nprint(wrap(VALUE))\n#> [plain]\n"
    alone = "from sbplain import VALUE\nimport sbadapt\nprint(VALUE)\n"
    [with_adapter], [without] = (
        validate_document(
            ExtractionAnalysis(
                page="guide.md",
                library="sbadapt",
                version="1.0.0",
                examples=[CodeExample(library="sbadapt", code=code, line=5, style="script")],
            ),
            options,
        ).results
        for code in (adapted, alone)
    )
    assert (with_adapter.status, with_adapter.severity) == ("success", "info"), with_adapter.error_message
    assert "`sbplain`" in with_adapter.error_message
    assert (without.status, without.severity) == ("failure", "warning"), "no adapter says the reader has it"


def test_a_failure_after_a_lone_ellipsis_that_leaves_code_out_is_an_excerpts_and_one_before_it_is_not(offline):
    after, before = validate_document(
        page(
            script("import sbdemo\nbox = sbdemo.Container()\n...\nbox.fill()\n", 5),
            script("import sbdemo\nbox = sbdemo.Container()\nbox.fill()\n...\n", 15),
        ),
        offline,
    ).results
    assert after.status == "skipped" and "leaves code out at line 7" in after.error_message
    assert (before.status, before.severity) == ("failure", "error")


def test_a_message_the_page_shows_under_another_exceptions_name_is_a_warning_and_under_its_own_passes(offline):
    other, own = validate_document(
        page(
            script('import sbdemo\nsbdemo.explode(3)\n# "LookupError: bad value: 3"\n', 5),
            script('import sbdemo\nsbdemo.explode(3)\n# "ValueError: bad value: 3"\n', 15),
        ),
        offline,
    ).results
    assert (other.status, other.severity) == ("failure", "warning")
    assert other.error_message.startswith("It raises ValueError (line 6 of the page), where the page shows LookupError")
    assert own.status == "success" and own.severity is None


def test_a_run_with_arguments_the_page_shows_under_a_run_that_gave_none_is_not_compared(offline):
    asked_none, terminal, printed_other, plain = validate_document(
        page(
            script("print('ran')\n", 5, expected_output="usage: tool [-h] [--fast]\n"),
            script("print('ran')\n", 10, expected_output="$ python tool.py --fast\nfast\n"),
            script("print('usage: tool [-h]')\n", 15, expected_output="usage: tool [-h] [--fast]\n"),
            script("print('ran')\n", 20, expected_output="$ python tool.py\nwalked\n"),
        ),
        offline,
    ).results
    assert (asked_none.status, asked_none.severity) == ("success", "info")
    assert (terminal.status, terminal.severity) == ("success", "info")
    assert "run with arguments" in terminal.error_message
    assert (printed_other.status, printed_other.severity) == ("failure", "error"), "its own help is compared"
    assert (plain.status, plain.severity) == ("failure", "error"), "a run with no arguments is this run"


def test_a_library_broken_by_its_dependencys_newest_release_runs_with_the_one_before_and_says_so_once(tmp_path):
    build_wheel(tmp_path, "sbcore", "1.2.0", "OLD_NAME = 'core'\n")
    build_wheel(tmp_path, "sbcore", "2.0.0", "NEW_NAME = 'core'\n")
    build_wheel(tmp_path, "sbplugin", "1.0.0", "from sbcore import OLD_NAME\n", requires=["sbcore"])
    options = validation_options(timeout=10, find_links=[tmp_path], offline=True, num_workers=1)
    examples = [
        CodeExample(library="sbplugin", code="import sbplugin\nprint(sbplugin.OLD_NAME)\n", line=5, style="script")
    ]
    broken = ExtractionAnalysis(page="guide.md", library="sbplugin", version="1.0.0", examples=examples)
    result = validate_document(broken, options)
    assert outcome(result) == [("success", None)]
    [problem] = result.setup_problems
    assert problem.message.startswith("sbplugin does not import under sbcore 2.0.0, the newest release")
    assert "ran with sbcore 1.2.0 (`sbcore<2`)" in problem.message


def test_a_package_an_example_imports_is_installed_only_when_the_page_names_it(offline):
    examples = (
        script("import sbplain\nprint(sbplain.VALUE)\n", 5),
        script("print(sbplain.VALUE.upper())\n", 10),
        script("import sbnowhere\n", 15),
    )
    named = validate_document(page(*examples, prose_names=["sbplain"]), offline)
    assert outcome(named)[0] == ("success", None)
    unnamed, built_on, unpublished = validate_document(page(*examples), offline).results
    assert (unnamed.status, unnamed.severity) == ("failure", "warning")
    assert unnamed.suggestions == (
        "The example imports `sbplain`, which the page never tells the reader to install: add `pip install sbplain` "
        "to the page."
    )
    assert built_on.status == "skipped" and built_on.error_message.startswith("Builds on example 0 (line 5)")
    assert unpublished.status == "skipped" and "`sbnowhere`, which is no published package" in unpublished.error_message


def test_an_import_one_letter_off_the_librarys_module_is_a_slip_and_another_name_the_readers_own(offline):
    slip, own = validate_document(analysis("import sbdemmo\n", "import sbdemo_app\n"), offline).results
    assert (slip.status, slip.severity) == ("failure", "error")
    assert slip.suggestions == "`sbdemmo` is a slip of sbdemo 1.0.0's module `sbdemo`: write `sbdemo`."
    assert own.status == "skipped", "a module named after the library is the reader's"


def test_a_name_a_package_the_page_imports_from_exports_is_a_missing_import_naming_that_package(offline):
    imported = validate_document(
        page(
            script("import sbplain\nprint(sbplain.VALUE)\n", 5),
            script("print(VALUE.lower())\n", 10),
            prose_names=["sbplain"],
        ),
        offline,
    ).results[1]
    assert (imported.status, imported.severity) == ("failure", "warning")
    assert imported.suggestions == "Add `from sbplain import VALUE` to the example: it is never imported."
    installed = validate_document(
        page(script("print(VALUE.lower())\n", 10), requirements=[{"requirement": "sbplain", "line": 3}]), offline
    ).results[0]
    assert installed.suggestions == "Add `from sbplain import VALUE` to the example: it is never imported.", (
        "the page's install line brings it, though no block imports it"
    )


def test_the_first_name_the_reader_meets_decides_between_a_missing_import_and_a_stand_in(offline):
    library_first, stand_in_first, placeholder = validate_document(
        page(
            script("print(greet(visitor_of_nobody))\n", 5),
            script("print(visitor_of_nobody.name, greet('x'))\n", 10),
            script("print(greet(my_visitor))\n", 15),
        ),
        offline,
    ).results
    assert (library_first.status, library_first.severity) == ("failure", "warning"), "greet fails before the stand-in"
    assert library_first.suggestions.startswith("Add `from sbdemo import greet`")
    assert stand_in_first.status == "skipped" and stand_in_first.error_message.startswith(
        "Illustrative: uses `visitor_of_nobody`"
    )
    assert placeholder.status == "skipped" and placeholder.error_message.startswith(
        "Illustrative: uses `my_visitor`"
    ), "a stand-in that says it is one makes the block a pattern shown on a placeholder, whatever comes first"


def test_a_stand_in_the_prose_talks_about_or_passed_for_its_parameter_makes_a_script_a_pattern(offline):
    explained, parameter, unexplained = validate_document(
        page(
            script("print(greet(visitor_of_nobody))\n", 5, named_in_prose=["visitor_of_nobody"]),
            script("print(greet(name=NAME))\n", 10),
            script("print(greet(visitor_of_nobody))\n", 15, named_in_prose=["greet"]),
        ),
        offline,
    ).results
    typed = validate_document(
        page(session(">>> greet(visitor_of_nobody)\n'hello'\n", 20, named_in_prose=["visitor_of_nobody"])), offline
    ).results[0]
    assert explained.status == "skipped" and explained.error_message.startswith(
        "Illustrative: uses `visitor_of_nobody`"
    ), "the text says what the value is: the block shows a pattern over the reader's value"
    assert parameter.status == "skipped" and parameter.error_message.startswith("Illustrative: uses `NAME`")
    assert (unexplained.status, unexplained.severity) == ("failure", "warning"), "the prose names only greet"
    assert (typed.status, typed.severity) == ("failure", "warning"), "a session is typed as shown"


def test_a_library_name_met_first_in_a_function_that_also_uses_a_stand_in_is_a_sketch_of_the_readers_own(offline):
    sketched, separate = validate_document(
        page(
            script("def welcome(text=greet('x')):\n    return text + visitor_of_nobody\n", 5),
            script(
                "def welcome(text=greet('x')):\n    return text\n\n\ndef bye(text=greet('y')):\n    return visitor_of_nobody\n",
                10,
            ),
        ),
        offline,
    ).results
    assert sketched.status == "skipped" and sketched.error_message.startswith("Illustrative: uses `visitor_of_nobody`")
    assert (separate.status, separate.severity) == ("failure", "warning"), (
        "the reader meets greet first in a function without one"
    )
    assert separate.suggestions.startswith("Add `from sbdemo import greet`")


def test_each_result_file_records_the_python_and_the_installed_distributions(offline):
    result = validate_document(page(script("import sbdemo\n", 5)), offline)
    assert result.environment.python.startswith("3.")
    assert result.environment.distributions["sbdemo"] == "1.0.0"
    assert json.loads(result.model_dump_json())["environment"]["distributions"]["sbdemo"] == "1.0.0"


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


def test_an_example_the_page_says_raises_passes_when_it_raises_that_and_is_a_warning_when_it_does_not(offline):
    result = validate_document(
        page(
            script(
                "import sbdemo\nsbdemo.explode(1)  # raises ValueError\n",
                5,
                expected_exception="ValueError",
                expected_exception_line=6,
            ),
            script("print(sbdemo.greet('after'))\n", 10),
            script("import sbdemo\nsbdemo.explode(2)\n", 15, expected_exception="Exception"),
            script("import sbdemo\nsbdemo.greet('x')\n", 20, expected_exception="Exception"),
            script("import sbdemo\nsbdemo.explode(3)\n", 25, expected_exception="TypeError"),
        ),
        offline,
    )
    assert outcome(result) == [
        ("success", None),
        ("success", None),
        ("success", None),
        ("failure", "warning"),
        ("failure", "warning"),
    ]
    assert result.results[1].execution_output == "hello after\n", "what the raising example defined stays"
    assert result.results[3].error_message == "The page says this raises an exception; it did not."
    assert result.results[4].error_message.startswith("ValueError: bad value: 3"), "another exception is judged"


def test_a_session_statement_commented_as_raising_passes_when_it_raises_that(offline):
    result = validate_document(
        page(session(">>> import sbdemo\n>>> sbdemo.explode(2)  # raises ValueError\n>>> sbdemo.explode(3)\n", 5)),
        offline,
    ).results[0]
    assert (result.status, result.severity) == ("failure", "warning")
    assert "(line 7)" in result.error_message, "only the uncommented statement is a finding"


def test_a_module_standing_for_the_readers_own_is_illustrative_unless_the_page_lays_out_its_file(offline):
    result = validate_document(
        page(
            script("from my_package import shapes\n", 5),
            script("from your_app import VALUE\nprint(VALUE)\n#> 42\n", 20),
            files=[{"path": "your_app.py", "content": "VALUE = 42\n", "line": 12}],
        ),
        offline,
    )
    assert outcome(result) == [("skipped", None), ("success", None)]
    assert result.results[0].error_message.startswith("Illustrative: imports `my_package`")
    early = validate_document(
        page(
            session(">>> from your_app import VALUE\n>>> VALUE\n7\n", 5),
            script("from your_app import VALUE\nprint(VALUE)\n#> 42\n", 20),
            files=[{"path": "your_app.py", "content": "VALUE = 42\n", "line": 12}],
        ),
        offline,
    )
    assert outcome(early) == [("skipped", None), ("success", None)], "imported before the page lays it out"
    assert early.results[0].error_message.endswith("(the page only lays it out later).")


def test_a_name_the_page_only_imports_from_the_readers_code_is_theirs_so_a_block_using_it_is_illustrative(offline):
    result = validate_document(
        page(
            script("from sbdemo import greet\n\nprint(greet(visitor))\n", 5),
            script("from my_project import visitor\n", 20),
            script("from sbdemo import greet\n\nprint(greet(visitor))\n", 30),
        ),
        offline,
    )
    before, _, after = result.results
    assert (before.status, after.status) == ("skipped", "skipped")
    assert before.error_message.startswith("Illustrative: uses `visitor`")
    assert "the reader's own code" in after.error_message, "it builds on the import of the reader's own module"


def test_a_name_that_says_it_is_the_readers_is_theirs_even_where_the_page_defines_one_later(offline):
    result = validate_document(
        page(
            script("from sbdemo import greet\n\nprint(greet(MyVisitor))\n", 5),
            script("from sbdemo import greet\n\nprint(greet(visitor))\n", 10),
            script("class MyVisitor:\n    pass\n\nvisitor = MyVisitor()\n", 20),
        ),
        offline,
    )
    readers, pages = result.results[:2]
    assert readers.status == "skipped" and "`MyVisitor`, the reader's own" in readers.error_message
    assert (pages.status, pages.severity) == ("failure", "warning"), "the page's own name is only defined later"


def test_a_name_the_page_calls_the_readers_stands_for_it_whatever_module_or_unrun_block_shares_its_name(offline):
    module, unrun = validate_document(
        page(
            script("import sbdemo\n\nqueue.put(sbdemo.greet('docs'))\n", 5, readers_names=["queue"]),
            script("visitor = the_crowd.first()\n", 10),
            script("print(greet(visitor))\n", 15, readers_names=["visitor"]),
        ),
        offline,
    ).results[::2]
    assert module.status == "skipped" and module.error_message.startswith("Illustrative: uses `queue`"), (
        "the reader's queue, not the standard library's module to import"
    )
    assert unrun.status == "skipped" and "`visitor`" in unrun.error_message, "a stand-in besides a missing import"


def test_a_name_passed_as_the_parameter_it_is_named_after_stands_for_the_readers_value(offline):
    unimported, other, later = validate_document(
        page(
            session(">>> sbdemo.greet(name)\n", 5),
            session(">>> from sbdemo import greet\n>>> greet(visitor)\n", 10),
            script("from sbdemo import greet\nprint(greet(name))\n", 15),
            script("name = 'docs'\n", 20),
        ),
        offline,
    ).results[:3]
    assert unimported.error_message.startswith("Illustrative: uses `name`"), "greet's parameter is `name`"
    assert (other.status, other.severity) == ("failure", "error"), "the parameter is not named `visitor`"
    assert later.status == "skipped" and "`name`, the reader's own here" in later.error_message, (
        later.error_message,
        later.suggestions,
    )


def test_a_file_block_runs_with_the_files_shown_right_after_it_in_place(offline):
    result = validate_document(
        page(
            script("from tiles.sizes import SIDE\nprint(SIDE)\n#> 3\n", 10),
            script("SIDE = 3\n", 16),
            files=[
                {"path": "tiles/__init__.py", "content": "from tiles.sizes import SIDE\nprint(SIDE)\n", "line": 10},
                {"path": "tiles/sizes.py", "content": "SIDE = 3\n", "line": 16},
            ],
        ),
        offline,
    )
    assert outcome(result) == [("success", None)] * 2


def test_a_testsetup_runs_before_the_sessions_of_its_doctest_group_only(offline):
    result = validate_document(
        page(
            CodeExample(library="sbdemo", code=">>> size\n3\n", line=10, style="doctest", doctest_groups=["sizes"]),
            CodeExample(
                library="sbdemo",
                code=">>> 'colour' in dir()\nFalse\n",
                line=20,
                style="doctest",
                doctest_groups=["default"],
            ),
            setup=[
                {"code": "colour = 'red'\n", "line": 5, "source": "guide.md", "groups": ["colours"]},
                {"code": "size = 3\n", "line": 40, "source": "guide.md", "groups": ["sizes"]},
            ],
        ),
        offline,
    )
    assert outcome(result) == [("success", None), ("success", None)]


def test_a_script_the_page_shows_indented_runs_dedented_and_is_a_warning(offline):
    result = validate_document(
        page(
            script("answer = 42\n", 10, shown_indent=4),
            script("print(answer)\n#> 42\n", 20),
            script("from sbdemo import greet\nname = greet(1, 2)\n", 30),
            script("print(name)\n", 40, shown_indent=2),
        ),
        offline,
    )
    assert outcome(result) == [("failure", "warning"), ("success", None), ("failure", "error"), ("failure", "warning")]
    assert "indented by 2 spaces" in result.results[3].error_message, "its own defect, whatever it builds on"
    assert "indented by 4 spaces" in result.results[0].error_message
    assert "IndentationError" in result.results[0].error_message
    assert result.results[0].suggestions == "Remove the indentation from the block's lines."


def test_a_session_after_a_block_shown_indented_has_what_the_block_defines_as_its_reader_fixing_the_indent_has(
    offline,
):
    result = validate_document(
        page(script("def answer():\n    return 42\n", 10, shown_indent=1), session(">>> answer()\n42\n", 20)),
        offline,
    )
    assert outcome(result) == [("failure", "warning"), ("success", None)]


def test_a_module_the_page_names_shown_indented_is_that_warning_whatever_it_stands_for_or_raises(offline):
    result = validate_document(
        page(
            script("from ._helpers import version\n", 10, shown_indent=4),
            script("from sbdemo import greet\n\ngreet(1, 2)\n", 20, shown_indent=4),
            files=[
                {"path": "kit/__init__.py", "content": "from ._helpers import version\n", "line": 10},
                {"path": "kit/setup.py", "content": "from sbdemo import greet\n\ngreet(1, 2)\n", "line": 20},
            ],
        ),
        offline,
    )
    assert outcome(result) == [("failure", "warning"), ("failure", "info")]
    assert all("indented by 4 spaces" in r.error_message for r in result.results), "whatever loads it meets that first"
    assert result.results[1].repeats_example == 0, "one indentation, counted at its first block"


def test_a_block_shown_failing_that_repeats_the_last_shown_error_without_using_what_it_defines_is_a_warning(offline):
    result = validate_document(
        page(
            script("from sbdemo import greet\n\ngreet(1, 2)\n", 10, expected_exception="TypeError"),
            script(
                "def welcome(name):\n    return greet(name, name)\n\ngreet(1, 2)\n", 20, expected_exception="TypeError"
            ),
            script(
                "def welcome(name):\n    return greet(name, name)\n\nwelcome(1)\n", 30, expected_exception="TypeError"
            ),
        ),
        offline,
    )
    assert outcome(result) == [("success", None), ("failure", "warning"), ("success", None)]
    assert "very error example 0 (line 10) raised" in result.results[1].error_message
    assert result.results[1].suggestions == "Use `welcome` in the statement that is to fail."


def test_an_indented_block_that_awaits_is_an_excerpt_of_an_unseen_async_function_not_a_pasting_mistake(offline):
    result = validate_document(
        page(
            script("import asyncio\n", 10),
            script("await asyncio.sleep(0)\n", 20, shown_indent=4, execution_context="async"),
            script("await asyncio.sleep(json.loads('0'))\n", 30, shown_indent=4, execution_context="async"),
        ),
        offline,
    )
    assert outcome(result) == [("success", None), ("success", None), ("skipped", None)]
    assert result.results[2].error_message.startswith("Illustrative: an excerpt from inside an async function")


def test_a_block_mixing_script_lines_with_prompts_is_a_warning_that_says_so(offline):
    result = validate_document(
        page(
            script("from sbdemo import greet\n\n  >>> greet('docs')\n  'hello docs'\n", 10),
            session(">>> from sbdemo import greet\nprint(greet('docs'))\n", 20),
            session(">>> from sbdemo import greet\n>>> greet('docs')\n'hello you'\n", 30),
        ),
        offline,
    )
    assert outcome(result) == [("failure", "warning"), ("failure", "warning"), ("failure", "error")]
    script_mixed, session_mixed, wrong_output = result.results
    assert "mixes script lines with `>>>` prompt lines (line 12 of the page)" in script_mixed.error_message
    assert "mixes script lines with `>>>` prompt lines (after the prompt at line 20)" in session_mixed.error_message
    assert "output differs" in wrong_output.error_message, "an output shown as a value is an output"


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the sandbox's Python must predate PEP 695")
def test_syntax_newer_than_the_oldest_python_the_library_supports_is_a_warning_unless_the_reader_was_told(offline):
    generic = "class Box[T]:\n    item: T\n"
    told = script(generic, 30, named_python="3.12")
    supported = validate_document(
        page(script(generic, 10), session(">>> type Pair = tuple[int, int]\n", 20), told, version="1.1.0"), offline
    )
    assert outcome(supported) == [("failure", "warning"), ("failure", "warning"), ("skipped", None)]
    assert "needs Python 3.12 (type parameters (PEP 695)), but sbdemo supports Python 3.9" in (
        supported.results[0].error_message
    )
    assert supported.results[0].suggestions.startswith("Say on the page that the example needs Python 3.12")
    unknown = validate_document(page(script(generic, 10)), offline).results[0]
    assert (unknown.status, unknown.severity) == ("skipped", None), "no Requires-Python: the reader's business"


def shown_tests(code, line, **fields):
    return CodeExample(library="sbdemo", code=code, line=line, style="tests", dependencies=["pytest"], **fields)


def test_tests_run_with_pytest_as_a_module_of_their_own_beside_the_pages_files(offline_with_pytest):
    welcome = "from sbdemo import greet\n\ndef welcome(name):\n    return greet(name) + '!'\n"
    result = validate_document(
        page(
            script(welcome, 10),
            shown_tests(
                "from sbdemo import greet\n\ndef test_greet(name):\n    assert greet(name) == 'hello docs'\n", 20
            ),
            shown_tests("def test_welcome():\n    assert welcome('docs') == 'hello docs!'\n", 30),
            shown_tests(
                "from sbdemo import greet\n\ndef test_shout():\n    assert greet('x').upper() == 'HELLO'\n", 40
            ),
            shown_tests("def test_missing(nmae):\n    pass\n", 50),
            files=[
                {"path": "conftest.py", "content": "import pytest\n\n@pytest.fixture\ndef name():\n    return 'docs'\n"}
            ],
        ),
        offline_with_pytest,
    )
    script_result, fixture, unimported, assertion, no_fixture = result.results
    assert [script_result.status, fixture.status] == ["success", "success"], "the conftest.py's fixture is found"
    assert (unimported.status, unimported.severity) == ("failure", "error")
    assert "defined in example 0 (line 10), but the test module never imports it" in unimported.suggestions
    assert (assertion.status, assertion.severity) == ("failure", "error")
    assert assertion.error_message.startswith("AssertionError: assert 'HELLO X' == 'HELLO'")
    assert (no_fixture.status, no_fixture.severity) == ("failure", "error")
    assert "fixture 'nmae' not found" in no_fixture.error_message


def test_tests_that_fail_without_the_options_the_pages_pytest_line_gives_are_judged_with_them(offline_with_pytest):
    strict = "def test_strict(request):\n    assert request.config.getoption('strict_markers')\n"
    given, plain = (
        validate_document(page(shown_tests(strict, 10), test_options=options), offline_with_pytest).results[0]
        for options in (["--strict-markers"], [])
    )
    assert given.status == "success", "the reader runs the tests the way the page's pytest line does"
    assert (plain.status, plain.severity) == ("failure", "error")


def test_a_test_module_saved_under_the_name_of_an_earlier_one_that_did_not_run_fails_on_its_own(offline_with_pytest):
    unrun = "def test_sketch():\n    ...\n    value = compute()\n"
    own = "def test_date():\n    assert datetime.now()\n"
    _, second = validate_document(
        page(
            shown_tests(unrun, 10, execution_context="not_executable", skip_reason="Not run: a placeholder."),
            shown_tests(own, 20),
            files=[
                {"path": "test_file.py", "content": unrun, "line": 10},
                {"path": "test_file.py", "content": own, "line": 20},
            ],
        ),
        offline_with_pytest,
    ).results
    assert (second.status, second.severity) == ("failure", "warning"), "its NameError is its own missing import"
    assert second.suggestions.startswith("Add `from datetime import datetime`")


def test_a_block_outside_any_test_using_a_fixture_the_pages_tests_ask_for_is_a_tests_body_shown_alone(
    offline_with_pytest,
):
    asks = shown_tests("def test_greeting(greet):\n    assert greet\n", 10)
    fixture_page, plain_page = (
        page(*tests, script("print(greet('x'))\n", 30), script("print(greet(Container()))\n", 40))
        for tests in ([asks], [])
    )
    _, body, lacking = validate_document(fixture_page, offline_with_pytest).results
    assert body.status == "skipped" and "`greet` is the fixture" in body.error_message
    assert (lacking.status, lacking.severity) == ("failure", "warning"), "the body still never imports Container"
    assert lacking.suggestions.startswith("Add `from sbdemo import Container`")
    plain = validate_document(plain_page, offline_with_pytest).results[0]
    assert (plain.status, plain.severity) == ("failure", "warning"), "elsewhere, the library's greet never imported"
    assert plain.suggestions.startswith("Add `from sbdemo import greet`")


def test_a_test_asking_for_a_fixture_nothing_gives_nor_resembles_is_written_against_the_readers_own(
    offline_with_pytest,
):
    own, slip = validate_document(
        page(
            shown_tests("def test_api(web_client):\n    assert web_client.get('/')\n", 10),
            shown_tests("def test_tmp(tmp_paht):\n    assert tmp_paht.exists()\n", 20),
        ),
        offline_with_pytest,
    ).results
    assert own.status == "skipped" and "`web_client`, a fixture of the reader's own" in own.error_message
    assert (slip.status, slip.severity) == ("failure", "error"), "a slip of pytest's own tmp_path"
    assert "fixture 'tmp_paht' not found" in slip.error_message


def test_a_failing_test_the_page_shows_changed_beside_it_is_a_state_of_an_edit_not_a_finding(offline_with_pytest):
    before = "from sbdemo import greet\n\ndef test_greet():\n    assert greet('docs') == 'hi docs'\n"
    after = before.replace("hi docs", "hello docs")
    first, second, apart, again = validate_document(
        page(shown_tests(before, 10), shown_tests(after, 20), script("import sbdemo\n", 30), shown_tests(before, 40)),
        offline_with_pytest,
    ).results
    assert first.status == "skipped" and "shows `test_greet` changed beside it, at line 20" in first.error_message
    assert second.status == "success"
    assert (again.status, again.severity) == ("failure", "error"), "the same test further away is no edit"


def test_a_test_a_comment_says_fails_passes_when_it_fails_and_others_still_count(offline_with_pytest):
    on_purpose = (
        "from sbdemo import greet\n\ndef test_greet():\n"
        "    # the greeting is wrong, so the test will fail\n    assert greet('docs') == 'hi docs'\n"
    )
    unsaid = "from sbdemo import greet\n\ndef test_greeting():\n    assert greet('docs') == 'hi docs'\n"
    said, plain = validate_document(
        page(shown_tests(on_purpose, 10, expected_exception="Exception"), shown_tests(unsaid, 20)),
        offline_with_pytest,
    ).results
    assert said.status == "success", "the reader sees the failure the page announces"
    assert (plain.status, plain.severity) == ("failure", "error")


def test_tests_the_reader_adapts_to_their_own_project_still_need_every_name_they_use_imported(offline_with_pytest):
    adapted = "from your_project.app import settings\n\ndef test_settings():\n    assert welcome(settings)\n"
    result = validate_document(
        page(
            script("def welcome(name):\n    return name\n", 10),
            shown_tests(adapted, 20, execution_context="not_executable", skip_reason="Not run: a placeholder."),
        ),
        offline_with_pytest,
    ).results[1]
    assert (result.status, result.severity) == ("failure", "error")
    assert result.error_message == "NameError: name 'welcome' is not defined (line 23 of the page)"


def test_tests_run_as_at_the_readers_terminal_not_on_a_ci_server(offline_with_pytest):
    off_ci = shown_tests("import os\n\ndef test_off_ci():\n    assert 'CI' not in os.environ\n", 10)
    assert outcome(validate_document(page(off_ci), offline_with_pytest)) == [("success", None)]


def test_an_async_test_needs_a_plugin_the_page_names_only_when_it_marks_the_test_for_one(offline_with_pytest):
    unmarked = "async def test_later():\n    assert True\n"
    marked = "import pytest\n\n@pytest.mark.asyncio\nasync def test_later():\n    assert True\n"
    left, named = validate_document(
        page(shown_tests(unmarked, 10), shown_tests(marked, 20)), offline_with_pytest
    ).results
    assert left.status == "skipped" and "the reader chooses" in left.error_message
    assert (named.status, named.severity) == ("failure", "warning")


def test_scripts_after_tests_build_on_what_the_test_module_defines(offline_with_pytest):
    module = "from sbdemo import greet\n\nWHO = 'docs'\n\ndef test_greet():\n    assert greet(WHO) == 'hi docs'\n"
    result = validate_document(page(shown_tests(module, 10), script("print(greet(WHO))\n", 20)), offline_with_pytest)
    assert outcome(result) == [("failure", "error"), ("success", None)]
    assert result.results[1].execution_output == "hello docs\n"


def test_a_special_method_spelt_wrong_is_an_error_even_in_a_block_built_on_stand_ins(offline):
    sketch = "from sbdemo import greet\n\n\nclass Welcome:\n    def __init(self, visitor: VisitorOfNobody):\n"
    sketch += "        self.text = greet(visitor)\n"
    result = validate_document(page(script(sketch, 5)), offline).results[0]
    assert (result.status, result.severity) == ("failure", "error")
    assert result.error_message.startswith("`__init` (line 9 of the page) is not `__init__`")


def test_a_whole_function_whose_body_is_only_a_comment_is_the_indentation_error_its_reader_meets(offline):
    handler = "from sbdemo import greet\n\n\ndef on_greeting(name):\n    # send greet(name) where you like\n"
    result = validate_document(page(script(handler, 5)), offline).results[0]
    assert (result.status, result.severity) == ("failure", "error")
    assert result.error_message.startswith("IndentationError")


def test_settings_written_with_a_colon_run_but_assign_nothing_and_are_a_warning(offline):
    settings = "GREETING: {\n    'name': 'docs',\n}\n"
    result = validate_document(page(script(settings, 5)), offline).results[0]
    assert (result.status, result.severity) == ("failure", "warning")
    assert result.error_message.startswith("`GREETING:` (line 5 of the page) annotates `GREETING`")


def test_a_method_shown_alone_whose_annotations_use_typing_names_never_imported_lacks_an_import(offline):
    hook = (
        "from sbdemo import greet\n\nclass Greeter(BaseOfTheReader):\n"
        "    def hello(self, name: Optional[str] = None) -> Any:\n        return greet(name)\n"
    )
    pattern = "class Greeter(BaseOfTheReader):\n    def hello(self, name: MyName) -> Any:\n        return name\n"
    excerpt = (
        "class Greeter(BaseOfTheReader):\n    def hello(\n        self,\n        refusal: GreetingRefused,\n"
        "        name: Optional[str] = None,\n    ) -> Any:\n        return refusal\n"
    )
    the_librarys = (
        "class Greeter(BaseOfTheReader):\n    def hello(self, kept: Container) -> None:\n        return kept\n"
    )
    result, own, imports_left_out, library_name = validate_document(
        analysis(hook, pattern, excerpt, the_librarys), offline
    ).results
    assert (result.status, result.severity) == ("failure", "warning")
    assert result.suggestions.startswith("Add `from typing import Any, Optional` to the example: they are never")
    assert result.error_message.endswith("is not defined (line 13 of the page)"), "the line the reader meets it on"
    assert own.status == "skipped", "a pattern on the reader's own names is theirs to complete"
    assert imports_left_out.status == "skipped", "the library's `GreetingRefused` is met first, never imported either"
    assert library_name.status == "skipped", "`Container` is the library's to its reader, not typing's"


def test_a_failure_inside_a_package_given_a_path_of_the_readers_own_needs_their_files(offline):
    own, named = validate_document(
        analysis(
            'import sbdemo\nsbdemo.explode("path/to/your/drawing")', 'import sbdemo\nsbdemo.gret("path/to/drawing")'
        ),
        offline,
    ).results
    assert own.status == "skipped" and "their own files at `path/to/your/drawing`" in own.error_message
    assert (named.status, named.severity) == ("failure", "error"), "the example's own mistake stays"


def test_a_failure_whose_error_names_a_stand_in_for_the_readers_data_needs_their_data(offline):
    query = "import sqlite3\nconnection = sqlite3.connect(':memory:')\nconnection.execute('SELECT a FROM {}')\n"
    own, named, in_session = validate_document(
        page(
            script(query.format("my_table"), 10),
            script(query.format("orders"), 20),
            session(">>> import sqlite3\n>>> sqlite3.connect(':memory:').execute('SELECT * FROM mytable')\n", 30),
        ),
        offline,
    ).results
    assert own.status == "skipped" and "runs on `my_table`, a stand-in for theirs" in own.error_message
    assert (named.status, named.severity) == ("failure", "error"), "a table the page should have made"
    assert in_session.status == "skipped" and "`mytable`" in in_session.error_message


def test_a_page_that_names_the_library_by_its_module_installs_nothing_more(offline):
    named = page(
        CodeExample(library="sb-kit", code="import sbkitmod\nprint(sbkitmod.VALUE)\n", line=10, style="script"),
        dependencies=[],
        requirements=[{"requirement": "sbkitmod", "line": 3}],
    )
    named.library = "sb-kit"
    result = validate_document(named, offline)
    assert outcome(result) == [("success", None)]
    assert result.setup_problems == [], "the library's own module is no package to look for"


def test_a_function_that_raises_a_class_the_library_exports_without_importing_it_lacks_an_import(offline):
    hook = "def refuse(name):\n    raise GreetingRefused(name)\n"
    sketch = "def refuse(name):\n    raise GreetingRefused(reason_of_the_reader(name))\n"
    result, own = validate_document(analysis(hook, sketch), offline).results
    assert (result.status, result.severity) == ("failure", "warning")
    assert result.suggestions.startswith("Add `from sbdemo import GreetingRefused` to the example")
    assert own.status == "success", "a sketch of the reader's own is theirs to complete"


def test_a_file_the_librarys_command_runs_is_not_blamed_for_what_only_the_command_sets_up(offline):
    command = FileCommand(command="sbdeploy @local deploy.py", program="sbdeploy", files=["deploy.py"], line=5)
    uses_host = "from sbdeploy import host\n\nprint(host.fact('os'))\n"
    never_imported = "from sbdeploy import host\n\nif host.fact('os'):\n    deploy('nginx')\n"
    module_of_its_own = "print(host.fact('kernel'))\n"
    shown = ExtractionAnalysis(
        page="deploys.md",
        library="sbdeploy",
        version="1.0.0",
        examples=[
            CodeExample(library="sbdeploy", code=uses_host, line=10, style="script"),
            CodeExample(library="sbdeploy", code=never_imported, line=20, style="script"),
            CodeExample(library="sbdeploy", code=module_of_its_own, line=30, style="script"),
        ],
        files=[
            PageFile(path="deploy.py", content=uses_host, line=10),
            PageFile(path="facts.py", content=module_of_its_own, line=30),
        ],
        file_commands=[command],
    )
    run_by_command, missing_import, own_imports_only = validate_document(shown, offline).results
    assert run_by_command.status == "skipped"
    assert run_by_command.error_message.startswith("A file the library's own command runs (`sbdeploy @local deploy.py`")
    assert (missing_import.status, missing_import.severity) == ("failure", "warning")
    assert missing_import.suggestions.startswith("Add `from sbdeploy import deploy`")
    assert (own_imports_only.status, own_imports_only.severity) == ("failure", "warning")
    assert own_imports_only.suggestions.startswith("Add `from sbdeploy import host`"), "earlier blocks are other files"


def test_signatures_listed_for_reference_are_checked_against_the_library(offline):
    listed = f"A fragment: {python_code.SIGNATURES_LISTED}."
    blocks = [
        ("def greet(name: str) -> str\n", "`greet`"),
        ("def greet(person: str) -> str\n", "`greet`"),
        ("def wave(name: str) -> str\n", "`wave`"),
        ("def on_greeting(name: str) -> None\n", "Greeting hooks"),
        ("def explode(value: str) -> str\n", "`greet`"),
        ("def __getattr__(name: str) -> object\n", "Lazy attributes of your module"),
    ]
    examples = [
        script(code, 10 * (n + 1), context=heading, execution_context="not_executable", skip_reason=listed)
        for n, (code, heading) in enumerate(blocks)
    ]
    examples[3].readers_names = ["on_greeting"]
    matches, unaccepted, missing, hook, another, special = validate_document(page(*examples), offline).results
    assert (matches.status, matches.severity) == ("skipped", None)
    assert (unaccepted.status, unaccepted.severity) == ("failure", "warning")
    assert unaccepted.error_message.startswith("`greet` has no parameter `person`; its parameters are `(name)`")
    assert missing.error_message.startswith("The library has no `wave`")
    assert (hook.status, hook.severity) == ("skipped", None), "the page has the reader write it"
    assert another.error_message.startswith("The section is about `greet`, but the signature it lists is `explode`")
    assert (special.status, special.severity) == ("skipped", None), "Python calls it on the reader's module"


def test_tests_the_page_says_build_on_earlier_blocks_run_after_them_in_one_file(offline_with_pytest):
    greeter = "from sbdemo import greet\n\nwelcome = greet('docs')\n"
    built_on = (
        "def test_welcome():\n    assert welcome == 'hello docs'\n\n\ndef test_shout():\n    assert welcome == 'x'\n"
    )
    (carried,) = validate_document(
        page(script(greeter, 10), shown_tests(built_on, 20, builds_on_earlier=True)),
        offline_with_pytest,
    ).results[1:]
    assert carried.status == "failure" and "NameError" not in carried.error_message
    assert carried.error_message.startswith("AssertionError") and "line 25 of the page" in carried.error_message
    undefined = validate_document(
        page(script("import missing_module\n\nwelcome = 1\n", 10), shown_tests(built_on, 20, builds_on_earlier=True)),
        offline_with_pytest,
    ).results[1]
    assert undefined.status == "skipped" and "example 0" in undefined.error_message


def test_tests_of_a_page_that_runs_pytest_on_one_unshown_file_share_that_file_with_the_code_before_them(
    offline_with_pytest,
):
    shout = "from sbdemo import greet\n\ndef shout(name):\n    return greet(name).upper()\n"
    tested = "def test_shout():\n    assert shout('docs') == 'HELLO DOCS'\n"
    run = {"command": "pytest shout.py", "program": "pytest", "files": ["shout.py"], "line": 30}
    together = validate_document(
        page(script(shout, 10), shown_tests(tested, 20), file_commands=[run]), offline_with_pytest
    ).results[1]
    assert (together.status, together.severity) == ("success", None)
    apart = validate_document(page(script(shout, 10), shown_tests(tested, 20)), offline_with_pytest).results[1]
    assert apart.status == "failure" and "shout" in apart.error_message, "without it, a module of its own"


def test_a_warning_shown_among_a_statements_output_is_the_terminals_and_the_rest_is_still_compared(offline):
    warned = ">>> import warnings\n>>> warnings.warn('slow', UserWarning); 1 + 1\n  UserWarning: slow [...]\n"
    shown, wrong = validate_document(page(session(warned + "2\n", 10), session(warned + "3\n", 20)), offline).results
    assert (shown.status, shown.severity) == ("success", "info") and "error stream" in shown.error_message
    assert (wrong.status, wrong.severity) == ("failure", "error")


def test_a_value_a_comment_shows_that_changes_every_run_is_one_of_its_values_and_a_steady_one_is_compared(offline):
    random_id, steady = validate_document(
        page(
            script("import secrets\n\nsecrets.token_hex(4)  # => 'a1b2c3d4'\n", 10),
            script("import secrets\n\nlen(secrets.token_hex(4))  # => 9\n", 20),
        ),
        offline,
    ).results
    assert (random_id.status, random_id.severity) == ("success", "info"), random_id.error_message
    assert "changes from run to run" in random_id.error_message
    assert (steady.status, steady.severity) == ("failure", "warning"), "8, every time: the comment is wrong"


def test_a_name_a_session_only_reaches_deep_into_is_the_readers_object_even_beside_a_mistyped_prompt(offline):
    handle, typo = validate_document(
        page(
            session(">>> import json\n>>> value = db.model.get_id()\n>>> <Thing 1>\n", 10),
            session(">>> import json\n>>> value = db_model.get_id()\n", 20),
        ),
        offline,
    ).results
    assert handle.status == "skipped" and "`db`" in handle.error_message, handle.error_message
    assert (typo.status, typo.severity) == ("failure", "error"), "a name used as it is: the reader types it too"


def test_a_value_shown_under_an_assignment_is_the_value_it_assigns_and_another_value_still_differs(offline):
    shown, other = validate_document(
        page(
            session(">>> sizes = [1, 2]\n[1, 2]\n>>> len(sizes)\n2\n", 10),
            session(">>> sizes = [1, 2]\n[3]\n", 20),
        ),
        offline,
    ).results
    assert (shown.status, shown.severity) == ("success", "info")
    assert "prints nothing for an assignment" in shown.error_message
    assert (other.status, other.severity) == ("failure", "error")


def test_a_value_that_changes_from_run_to_run_is_one_of_its_values_unless_its_form_differs(offline):
    naive_shown = (
        ">>> import datetime\n>>> datetime.datetime.now(datetime.timezone.utc)\n"
        "datetime.datetime(2017, 6, 30, 8, 51, 22, 123000)\n"
    )
    random_id, wrong, aware = validate_document(
        page(
            session(">>> import secrets\n>>> secrets.token_urlsafe(12)\n'qZpLxmWbRrTkGhVn'\n", 10),
            session(">>> 2 + 2\n5\n", 20),
            session(naive_shown, 30),
        ),
        offline,
    ).results
    assert (random_id.status, random_id.severity) == ("success", "info")
    assert "changes from run to run" in random_id.error_message
    assert (wrong.status, wrong.severity) == ("failure", "error")
    assert aware.status == "failure", "every run gives a time zone the page's datetime lacks"


def test_a_key_no_example_put_in_an_earlier_object_is_the_readers_data_and_a_near_miss_a_slip(offline):
    made = script("d = {'username': 'ada', 'profile': {'city': 'Rome'}}\n", 10)
    _, readers, slip = validate_document(
        page(made, script("print(d['cities'][0])\n", 20), script("print(d['usernme'])\n", 30)), offline
    ).results
    assert (readers.status, readers.severity) == ("skipped", None)
    assert "no example before it put there" in readers.error_message
    assert (slip.status, slip.severity) == ("failure", "error")


def test_a_shape_with_elided_bodies_borrowing_a_standard_library_name_is_illustrative_a_whole_block_is_not(offline):
    shape, whole = validate_document(
        page(
            script("Pair = namedtuple('Pair', 'a b')\n\nclass Named(Pair):\n    ...\n", 10),
            script("Pair = namedtuple('Pair', 'a b')\nprint(Pair(1, 2))\n", 20),
        ),
        offline,
    ).results
    assert (shape.status, shape.severity) == ("skipped", None)
    assert (whole.status, whole.severity) == ("failure", "warning")
    assert whole.suggestions.startswith("Add `from collections import namedtuple`")


def test_a_name_the_prose_calls_the_readers_that_the_page_imports_from_the_library_is_a_missing_import(offline):
    early = script("print(greet('docs'))\n", 10, readers_names=["greet"])
    imported = validate_document(page(early, script("from sbdemo import greet\n", 20)), offline).results[0]
    assert (imported.status, imported.severity) == ("failure", "warning")
    assert imported.suggestions.startswith("Add `from sbdemo import greet`")
    never = validate_document(page(early), offline).results[0]
    assert (never.status, never.severity) == ("skipped", None), "the reader's own where the page never imports it"


def test_a_slip_of_a_library_name_or_a_constant_is_an_error_even_beside_stand_ins(offline):
    letter_dropped, words_swapped, constant, plural, other_case = validate_document(
        page(
            script("from sbdemo import greet\nprint(greet(fancy_gret))\n", 5),
            script("print(greet_fancy(visitor_of_nobody))\n", 10),
            script("print(greet('x', visitor_of_nobody) or none)\n", 15),
            script("print(old_greets(visitor_of_nobody))\n", 20),
            script("raise greetingrefused(visitor_of_nobody)\n", 25),
        ),
        offline,
    ).results
    assert (letter_dropped.status, letter_dropped.severity) == ("failure", "error")
    assert "misspelling of `sbdemo.fancy_greet`" in letter_dropped.suggestions
    assert (words_swapped.status, words_swapped.severity) == ("failure", "error")
    assert "misspelling of `sbdemo.fancy_greet`" in words_swapped.suggestions
    assert (constant.status, constant.severity) == ("failure", "error"), "importing greet, the reader still meets none"
    assert constant.error_message == "NameError: name 'none' is not defined"
    assert "misspelling of `None`" in constant.suggestions
    assert plural.status == "skipped", "a plural names the reader's own collection"
    assert other_case.status == "skipped", "an object named after its class is the reader's own"


def test_past_the_import_of_the_readers_own_module_the_first_name_never_imported_is_still_met(offline):
    library_name, stand_in, slip, complete = validate_document(
        page(
            script("from my_hooks import on_error\n\nprint(greet('x'), on_error)\n", 5),
            script("from my_hooks import on_error\n\nprint(visitor_of_nobody, greet('x'), on_error)\n", 10),
            script("from my_hooks import on_error\n\non_error(fancy_gret)\n", 15),
            script("from my_hooks import on_error\n\non_error('x')\n", 20),
        ),
        offline,
    ).results
    assert (library_name.status, library_name.severity) == ("failure", "warning")
    assert library_name.error_message == (
        "NameError: name 'greet' is not defined (line 7 of the page, once `my_hooks` is the reader's own)"
    )
    assert library_name.suggestions.startswith("Add `from sbdemo import greet`")
    assert stand_in.status == "skipped", "the reader meets their own stand-in first"
    assert (slip.status, slip.severity) == ("failure", "error")
    assert "misspelling of `sbdemo.fancy_greet`" in slip.suggestions
    assert complete.status == "skipped" and complete.error_message.startswith("Illustrative: imports `my_hooks`")


def test_a_test_module_pytest_cannot_import_is_judged_by_the_import_that_failed(offline_with_pytest):
    own_module, misspelt = validate_document(
        page(
            shown_tests("from my_app.models import Visitor\n\n\ndef test_visitor():\n    assert Visitor\n", 10),
            shown_tests("from sbdemo import gret\n\n\ndef test_greet():\n    assert gret('x')\n", 20),
        ),
        offline_with_pytest,
    ).results
    assert own_module.status == "skipped" and own_module.error_message.startswith("Illustrative: imports `my_app")
    assert (misspelt.status, misspelt.severity) == ("failure", "error")
    assert misspelt.error_message.startswith("ImportError: cannot import name 'gret' from 'sbdemo'")


def test_a_script_held_back_by_the_readers_project_name_still_meets_a_library_name_it_never_imports(offline):
    _, held_back, complete = validate_document(
        page(
            script("print('a block the page runs')\n", 1),
            script(
                "from your_project.hooks import on_error\n\nprint(greet('x'), on_error)\n",
                5,
                execution_context="not_executable",
            ),
            script(
                "from your_project.hooks import on_error\n\non_error('x')\n", 10, execution_context="not_executable"
            ),
        ),
        offline,
    ).results
    assert (held_back.status, held_back.severity) == ("failure", "warning")
    assert held_back.suggestions.startswith("Add `from sbdemo import greet`")
    assert complete.status == "skipped"


def test_a_relative_import_of_the_librarys_own_module_is_a_line_copied_from_its_source(tmp_path):
    build_wheel(
        tmp_path,
        "sbqueue",
        "1.0.0",
        "from .jobs import Job\n",
        submodules={"jobs": "class Job:\n    pass\n"},
    )
    copied, readers_own = scripts_on_a_built_library(
        tmp_path, "sbqueue", "from .jobs import Job\n\nprint(Job())\n", "from .views import Job\n"
    )
    assert (copied.status, copied.severity) == ("failure", "error")
    assert copied.suggestions.endswith("Write `from sbqueue import Job`.")
    assert readers_own.status == "skipped", "the library has no such module: the reader's own package"


def test_a_failure_inside_the_library_about_a_package_it_is_handed_by_name_needs_the_readers_installed_package(
    offline,
):
    published, made_up = validate_document(
        analysis('import sbdemo\nsbdemo.explode("sbplain")', 'import sbdemo\nsbdemo.explode("sbnowhere")'), offline
    ).results
    assert published.status == "skipped", "the reader who runs a tool on a package by name has that package"
    assert "the package `sbplain` by name" in published.error_message
    assert (made_up.status, made_up.severity) == ("failure", "warning"), "no index has it: the input is the page's"


def test_a_script_the_page_puts_in_the_readers_package_init_runs_as_that_module(offline):
    acts_on_its_package = (
        "import sbdemo\n"
        "if not __package__:\n"
        "    raise RuntimeError('a script outside any package')\n"
        "print(sbdemo.greet(__name__))\n"
    )
    init, plain = validate_document(
        page(script(acts_on_its_package, 10, package_init="your_package"), script(acts_on_its_package, 20)),
        offline,
    ).results
    assert init.status == "success", "it runs where the page puts it: the reader's package's __init__"
    assert (plain.status, plain.severity) == ("failure", "error"), "a script of its own has no package"


def test_a_package_module_importing_its_sibling_by_bare_name_is_an_error_and_the_session_after_it_counts_there(
    offline,
):
    init = "import sizes\n"
    result = validate_document(
        page(
            script(init, 10),
            script("SIDE = 3\n", 16),
            session(">>> from tiles.sizes import SIDE\n>>> SIDE\n3\n", 22),
            script("from . import sizes\n", 30),
            session(">>> from tiles.sizes import SIDE\n>>> SIDE\n3\n", 36),
            files=[
                {"path": "tiles/__init__.py", "content": init, "line": 10},
                {"path": "tiles/sizes.py", "content": "SIDE = 3\n", "line": 16},
                {"path": "tiles/__init__.py", "content": "from . import sizes\n", "line": 30},
            ],
        ),
        offline,
    )
    bare, _, first, _, second = result.results
    assert (bare.status, bare.severity) == ("failure", "error")
    assert "Write `from . import sizes`" in bare.suggestions and "`tiles/sizes.py`" in bare.suggestions
    assert first.status == "skipped" and first.error_message.startswith("Builds on example 0 (line 10")
    assert second.status == "success", "the package as the page shows it last, with its relative import"


def test_a_listed_signature_over_a_type_the_page_defined_is_a_function_the_reader_writes(offline):
    listed = f"A fragment: {python_code.SIGNATURES_LISTED}."
    defined = script("class Parcel:\n    weight = 1\n", 10)
    over_own = script(
        "def ship(parcel: Parcel) -> None: ...\n", 20, execution_context="not_executable", skip_reason=listed
    )
    over_str = script("def ship(name: str) -> None: ...\n", 30, execution_context="not_executable", skip_reason=listed)
    _, own, unknown = validate_document(page(defined, over_own, over_str), offline).results
    assert (own.status, own.severity) == ("skipped", None)
    assert unknown.error_message.startswith("The library has no `ship`"), "nothing of the page's in it"


def test_an_example_building_on_a_failed_one_that_also_reads_a_file_of_the_projects_tests_is_its_own_error(offline):
    result = validate_document(
        page(
            session(">>> from tests.fixtures import Shape\n", 10),
            session(">>> Shape.load('tests/fixtures/square.json')\n", 20),
            session(">>> Shape.load('square.json')\n", 30),
        ),
        offline,
    )
    _, reads_test_file, reads_own_file = result.results
    assert (reads_test_file.status, reads_test_file.severity) == ("failure", "error")
    assert reads_test_file.suggestions.startswith("`tests/fixtures/square.json` is a file of the project's own tests")
    assert reads_own_file.status == "skipped" and reads_own_file.error_message.startswith("Builds on example 0")


def test_a_value_a_comment_shows_is_compared_with_the_value_the_statement_had(offline):
    result = validate_document(
        page(
            script("import json\nsizes = {'small': 1}\njson.dumps(sizes)  # {\"small\": 1}\n", 10),
            script("sizes = {'small': 1, 'large': 3}\nsizes\n# {'small': 1}\n", 20),
            script("total = sum([1, 2])  # => 3\nlabel = object()  # 'object'\nprint('done')  # 4\n", 30),
        ),
        offline,
    )
    json_text, differs, equal = result.results
    assert json_text.status == "success", "the JSON a string holds is the value its comment shows"
    assert (differs.status, differs.severity) == ("failure", "warning")
    assert differs.error_message == (
        "The value differs from what the page shows (the comment at line 21): it shows `{'small': 1}`; the value "
        "is `{'small': 1, 'large': 3}`."
    )
    assert equal.status == "success", "an object's repr is no literal, and a print's comment is not its value"


def test_values_shown_at_prompts_under_a_scripts_lines_are_compared_as_its_values_and_a_call_may_print_them(offline):
    result = validate_document(
        page(
            script("import sbdemo\nword = sbdemo.greet('a')\nword\n>>> 'hello a'\nlen(word)\n>>> 7\n", 10),
            script("word\n>>> 'hello b'\n", 20),
            script("import sbdemo\nprint(sbdemo.greet('c'))\n>>> 'hello c'\nsbdemo.Container()\n>>> 'made'\n", 30),
        ),
        offline,
    )
    same, differs, printed = result.results
    assert same.status == "success" and same.severity is None
    assert same.code.endswith(">>> 7\n"), "the result shows the block as the page does"
    assert (differs.status, differs.severity) == ("failure", "warning")
    assert differs.error_message.startswith("The value differs from what the page shows (the comment at line 20)")
    assert printed.status == "success", "text shown under a print, or under a call that gives no text, is printed"


def test_a_block_that_starts_at_a_prompt_is_a_session_whatever_literals_it_types():
    assert python_code.values_shown_at_prompts(">>> 'a'\n'a'\n") is None
    assert python_code.values_shown_at_prompts("x = 1\n>>> print(x)\n1\n") is None, "a prompt that types code"
    assert python_code.session_parts("x = 1\n>>> print(x)\n1\n") is not None


def test_an_error_whose_message_a_comment_under_its_statement_shows_is_the_one_the_page_shows(offline):
    shown, unshown = validate_document(
        page(
            script("int('ten')\n# => invalid literal for int() with base 10: 'ten'\n", 10),
            script("int('ten')\n# => a number\n", 20),
        ),
        offline,
    ).results
    assert shown.status == "success"
    assert (unshown.status, unshown.severity) == ("failure", "error")


def test_a_program_that_reads_an_argument_it_was_not_given_is_a_command_line_program_to_run_with_it(offline):
    (reads_argument, indexes_a_list) = validate_document(
        page(
            script("import sys\nfolder = sys.argv[1]\nprint(folder)\n", 10),
            script("names = []\nprint(names[1])\n", 20),
        ),
        offline,
    ).results
    assert reads_argument.status == "skipped" and "command-line program" in reads_argument.error_message
    assert (indexes_a_list.status, indexes_a_list.severity) == ("failure", "error")


def test_what_a_session_prints_where_the_page_shows_a_picture_is_not_compared(offline):
    pictured, unshown = validate_document(
        page(
            session(">>> print('a table')\n", 10, output_pictured=True),
            session(">>> print('a table')\n", 20),
        ),
        offline,
    ).results
    assert (pictured.status, pictured.severity) == ("success", "info")
    assert (unshown.status, unshown.severity) == ("failure", "error")


def test_a_repaired_block_keeps_the_imports_its_functions_use_when_they_run_in_later_blocks(offline):
    missing, later = validate_document(
        page(
            script("where = lambda: os.sep\nprint(sys.platform)\n", 10),
            script("print(where())\n", 20),
        ),
        offline,
    ).results
    assert (missing.status, missing.severity) == ("failure", "warning")
    assert "import sys" in missing.suggestions
    assert later.status == "success", "the reader who adds the imports the block lacks adds `os` too"


def test_a_repaired_block_imports_the_modules_member_its_functions_reach_into(offline):
    missing, later = validate_document(
        page(
            script("stamp = lambda: datetime.fromtimestamp(0).year\nprint(sys.platform)\n", 10),
            script("print(stamp())\n", 20),
        ),
        offline,
    ).results
    assert (missing.status, missing.severity) == ("failure", "warning")
    assert later.status == "success", "`datetime.fromtimestamp` is the class's: the reader imports the class"
