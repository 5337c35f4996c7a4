"""A page's installs in a real virtualenv, offline against wheels the tests build."""

import pytest

from stackbench.validation.batch import validate_all, validate_document
from stackbench.validation.page_setup import PageSetup
from stackbench.validation.verdicts import PageKnowledge
from tests.stackbench.validation.example_pages import analysis, outcome

pytestmark = pytest.mark.slow


def test_the_pinned_version_is_the_one_installed(offline):
    code = "from sbdemo import shout\nprint(shout('v2'))"
    assert outcome(validate_document(analysis(code, version="2.0.0"), offline)) == [("success", None)]
    assert outcome(validate_document(analysis(code, version="1.0.0"), offline)) == [("failure", "error")]


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


def test_the_readers_own_modules_are_never_looked_up_on_an_index(offline):
    result = validate_document(analysis("from myapp.models import User"), offline).results[0]
    assert result.status == "skipped" and "`myapp`" in result.error_message


def test_a_module_the_entry_points_of_the_pages_pyproject_name_is_the_readers_project_though_an_index_has_one(offline):
    pyproject = {"path": "pyproject.toml", "content": '[project.scripts]\nshop = "shop.cli:main"\n', "line": 3}
    result = validate_document(analysis("from shop.cli import main\nmain()", files=[pyproject]), offline).results[0]
    assert result.status == "skipped" and "the reader's own project" in result.error_message


def test_an_install_line_no_installer_takes_is_one_setup_problem_of_its_page_and_fails_no_example(offline, tmp_path):
    with_line = analysis(
        "import sbdemo\nprint(sbdemo.greet('a'))",
        "import sbextra\nprint(sbextra.VALUE)",
        requirements=[{"requirement": "$(sbdemo-tool get-deps)", "line": 3}],
    )
    other = analysis("import sbdemo\nprint(sbdemo.greet('b'))").model_copy(update={"page": "other.md"})
    first, second = validate_all([with_line, other], tmp_path, offline).documents
    assert [p.requirement for p in first.setup_problems] == ["$(sbdemo-tool get-deps)"]
    assert first.results[0].status == "success", "what does not need the install still runs"
    assert first.results[1].status == "skipped" and "`sbextra`" in first.results[1].error_message, "its own verdict"
    assert outcome(second) == [("success", None)] and second.setup_problems == []


def test_a_module_of_a_namespace_comes_from_the_librarys_extra_named_after_its_package():
    setup = PageSetup(analysis("import sbdemo"), None, PageKnowledge("sbdemo", "1.0.0"), [])
    setup.extras = {"zope-cloud-shapes": "shapes"}
    assert setup.distribution_of("zope.cloud.shapes.curves") == "zope-cloud-shapes"
    assert setup.distribution_of("zope.other") is None
    assert setup.distribution_of("yaml") == "PyYAML"
