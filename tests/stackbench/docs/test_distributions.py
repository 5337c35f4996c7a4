import pytest

from stackbench.docs.distributions import distribution_for, module_names_of, normalized, readers_own


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
    ],
)
def test_the_standard_library_bare_namespaces_and_the_readers_own_modules_map_to_none(module):
    assert distribution_for(module) is None


def test_made_up_packages_told_apart_by_number_or_letter_are_the_readers_but_real_names_like_them_are_not():
    assert readers_own("pkg1") and readers_own("module_c")
    assert not readers_own("pkgutil") and not readers_own("lib2to3") and not readers_own("modal")


def test_import_names_of_a_distribution_and_normal_names():
    assert module_names_of("python-dateutil") >= {"dateutil"}
    assert module_names_of("PyYAML") >= {"yaml"}
    assert normalized("Pydantic_Settings") == "pydantic-settings"
