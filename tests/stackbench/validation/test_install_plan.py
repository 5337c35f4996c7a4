import pytest

from stackbench.formats.walkthrough import CodeExample, ExtractionAnalysis
from stackbench.validation.install_plan import (
    extras_by_distribution,
    library_requirement,
    page_names,
    page_requirements,
    previous_major_bound,
    refused_requirements,
    suspected_dependencies,
    told,
)
from stackbench.validation.options import ValidationError


def page(requirements=(), examples=(), version="1.0.0"):
    return ExtractionAnalysis(
        page="guide.md",
        library="sbdemo",
        version=version,
        requirements=[{"requirement": r, "line": 3} for r in requirements],
        examples=list(examples),
    )


def test_the_library_is_pinned_with_every_extra_the_pages_install_lines_name():
    assert library_requirement(page(["sbdemo[fancy]", "SBDemo[async,fancy]>=1"])) == "sbdemo[async,fancy]==1.0.0"
    assert library_requirement(page(version="")) == "sbdemo"
    chosen = page(["sbdemo[async]"]).model_copy(update={"docs_installs": ["sbdemo[qt]"]})
    assert library_requirement(chosen) == "sbdemo[async,qt]==1.0.0", "the backend the installation page had chosen"


def test_other_packages_come_from_the_page_and_from_the_examples_that_run():
    run = CodeExample(library="sbdemo", code="x", line=1, dependencies=["requests", "sbdemo"])
    not_run = CodeExample(library="sbdemo", code="x", line=2, execution_context="not_executable", dependencies=["rich"])
    assert page_requirements(page(["httpx==0.27", "HTTPX"], [run, not_run])) == ["httpx==0.27", "requests"]


@pytest.mark.parametrize(
    "bad",
    ["--index-url=http://evil.example", "sbdemo @ https://evil.example/x.whl", "not a req", "$(sbdemo-tool deps)"],
)
def test_what_is_no_plain_package_is_never_installed_and_named_for_its_page(bad):
    analysis = page([bad, "rich"])
    assert library_requirement(analysis) == "sbdemo==1.0.0"
    assert page_requirements(analysis) == ["rich"] and refused_requirements(analysis) == [bad]


def test_a_library_version_that_makes_no_plain_requirement_is_a_broken_analysis():
    with pytest.raises(ValidationError):
        library_requirement(page(version="1.0 --index-url=http://evil.example"))


def test_the_library_extra_that_brings_a_distribution_is_read_from_its_requirements():
    requires = ['rich>=13; extra == "fancy"', "idna", 'Py_Yaml; extra == "yaml"', "not valid ;;"]
    assert extras_by_distribution(requires) == {"rich": "fancy", "py-yaml": "yaml"}


def test_a_page_tells_of_a_package_by_its_prose_its_install_lines_or_an_examples_listed_dependencies():
    listed = CodeExample(library="sbdemo", code="import yaml", line=1, dependencies=["PyYAML"])
    analysis = page(["sbdemo[fancy]", "rich>=13"], [listed]).model_copy(update={"prose_names": ["httpx"]})
    names = page_names(analysis)
    for module, distribution in (("httpx", "httpx"), ("rich", "rich"), ("yaml", "PyYAML")):
        assert told(names, "sbdemo", module, distribution), module
    assert told(names, "sbdemo", "sbfancy", "sbfancy", extra="fancy"), "the extra the page installs brings it"
    assert not told(names, "sbdemo", "trio", "trio") and not told(names, "sbdemo", "anyio", "anyio", extra="async")


def test_a_dependency_is_held_back_below_the_release_series_it_is_at():
    assert previous_major_bound("9.0.1") == "<9"
    assert previous_major_bound("0.14.2") == "<0.14", "a 0.x minor is a major"
    assert previous_major_bound("0.0.3") is None and previous_major_bound("not a version") is None


def test_the_dependencies_an_import_error_names_are_suspected_first_and_optional_ones_never():
    requires = ["sbtools", "sbcore>=1", 'sbfancy; extra == "fancy"']
    installed = {"sbtools": "2.1", "sbcore": "3.0", "sbfancy": "1.0"}
    error = 'File "/venv/site-packages/_sbcore/api.py", line 3\nImportError: cannot import name'
    assert suspected_dependencies(requires, installed, {"sbcore": ["_sbcore"]}, error) == [
        ("sbcore", "3.0"),
        ("sbtools", "2.1"),
    ]
    assert suspected_dependencies(requires, installed, {}, "in sbcore_helpers.py") == [
        ("sbtools", "2.1"),
        ("sbcore", "3.0"),
    ], "a module named after the dependency is not the dependency"
