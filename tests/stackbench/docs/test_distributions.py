import pytest

from stackbench.docs.distributions import (
    any_module,
    distribution_for,
    entry_point_modules,
    laid_out_modules,
    module_names_of,
    names_extra,
    names_package,
    normalized,
    prose_names,
    readers_own,
)


@pytest.mark.parametrize(
    "module, distribution",
    [
        ("requests", "requests"),
        ("yaml", "PyYAML"),
        ("pythonjsonlogger.jsonlogger", "python-json-logger"),
        ("opentelemetry.trace", "opentelemetry-api"),
        ("azure.identity", "azure-identity"),
        ("google.cloud.secretmanager", "google-cloud-secret-manager"),
        ("mypy.plugin", "mypy"),
        ("typing_inspection", "typing-inspection"),
    ],
)
def test_a_module_maps_to_the_distribution_that_provides_it(module, distribution):
    assert distribution_for(module) == distribution


@pytest.mark.parametrize(
    "module",
    [
        "os.path",
        "__future__",
        "azure",
        "_private",
        "mylib",
        "myapp.models",
        "settings",
        "my_package",
        "myproject.settings",
        "your_app",
        "yourmodule",
        "my_awesome_service.tasks",
        "your_project_name",
        "pkg2",
        "package_b.shapes",
        "module1",
        "somewhere.helpers",
    ],
)
def test_the_standard_library_bare_namespaces_and_the_readers_own_modules_map_to_none(module):
    assert distribution_for(module) is None


def test_made_up_packages_told_apart_by_number_or_letter_are_the_readers_but_real_names_like_them_are_not():
    assert readers_own("pkg1") and readers_own("module_c")
    assert any_module("a") and any_module("b.c") and any_module("x1"), "an imported letter stands for any module"
    assert any_module("mod") and any_module("package.sub"), "so does the word for a module"
    assert not any_module("modal") and not any_module("packaging")
    assert not readers_own("a"), "a quoted letter in a library's message is more often a field's name"
    assert not readers_own("pkgutil") and not readers_own("lib2to3") and not readers_own("modal")


def test_the_layers_of_a_layered_application_are_the_readers_own_packages_whatever_an_index_holds_by_that_name():
    assert distribution_for("domain") is None and distribution_for("infrastructure.repositories") is None
    assert distribution_for("use_cases") is None and distribution_for("adapters.http") is None
    assert distribution_for("domainmodel") == "domainmodel", "only the layer's own name"


def test_a_module_named_as_a_place_the_page_leaves_open_is_the_readers_own():
    assert readers_own("somewhere") and readers_own("elsewhere.helpers")
    assert not readers_own("somewhat")


def test_import_names_of_a_distribution_and_normal_names():
    assert module_names_of("python-dateutil") >= {"dateutil"}
    assert module_names_of("PyYAML") >= {"yaml"}
    assert normalized("Pydantic_Settings") == "pydantic-settings"


def test_prose_names_a_package_by_a_whole_word_in_any_case_or_by_the_module_it_provides():
    names = prose_names(
        "Send them with HTTPX.AsyncClient; compare with Dirty-Equals. Pick `full` from `shapes[full, fast]`."
    )
    assert names_package(names, "httpx", "httpx") and names_package(names, "dirty_equals", "dirty-equals")
    assert names_package(names, "yaml", "PyYAML") is False, "neither yaml nor PyYAML is in it"
    assert not names_package(prose_names("a dirty-equals check"), "dirty", "dirty"), "part of a word names nothing"
    assert not names_package(prose_names("the Azure cloud"), "azure.identity", "azure-identity"), "a namespace alone"
    assert names_extra(names, "Shapes", "fast") and names_extra(names, "shapes", "full")
    assert not names_extra(prose_names("the full example"), "shapes", "full"), "an extra's name alone is a word"
    assert names_extra(prose_names("## Cloud Key Store\n\nKeep the keys there."), "shapes", "cloud-key-store")
    assert not names_extra(prose_names("## Cloud storage"), "shapes", "cloud-key-store"), "every word of its name"


def test_every_folder_and_module_of_a_laid_out_file_is_the_readers_own_and_other_files_name_none():
    paths = ["app.py", "src/shop/__init__.py", "src/shop/cart.py", "settings.toml", ".env"]
    assert laid_out_modules(paths) == {"app", "src", "shop", "__init__", "cart"}


def test_the_entry_points_of_a_pyproject_the_page_shows_name_the_readers_own_project_modules():
    pyproject = (
        '[project]\nname = "shop"\n\n[project.scripts]\nshop = "shop.cli:main"\n\n'
        '[project.gui-scripts]\nshop-gui = "shopgui:run"\n\n[project.entry-points.plugins]\ncart = "carts.plugin:Cart"\n'
    )
    files = [
        ("pyproject.toml", pyproject),
        ("other.toml", '[project.scripts]\nx = "nope:main"\n'),
        ("pyproject.toml", "["),
    ]
    assert entry_point_modules(files) == {"shop", "shopgui", "carts"}
