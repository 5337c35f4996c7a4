import pytest

from stackbench.docs import python_code
from stackbench.formats.walkthrough import CodeExample
from stackbench.validation.verdicts import (
    SUCCESS,
    PageKnowledge,
    adapter_of,
    docs_warnings,
    exception_type,
    judge_exception,
    judge_output,
    judge_prints,
    judge_warnings,
    newer_syntax,
    oldest_python,
    optional_module,
    packages_handed_by_name,
    raised_as_said,
    runner_trouble,
    same_exception,
    shown_exception_message,
    shows_exception,
    signature_difference,
)


def exception(kind, message="", where="example", **fields):
    mro = [f"builtins.{kind}", "builtins.Exception", "builtins.BaseException", "builtins.object"]
    if kind == "ModuleNotFoundError":
        mro.insert(1, "builtins.ImportError")
    frames = [{"filename": "x.py", "lineno": 3, "name": "f", "where": where}]
    return {"type": kind, "message": message, "mro": fields.pop("mro", mro), "frames": frames, **fields}


def knowledge(**fields):
    return PageKnowledge("shapes", "1.0", python="3.11.2", library_modules=["shapes"], **fields)


def test_environment_failures_are_skipped_not_blamed_on_the_docs():
    credentials = exception(
        "NoCredentialsError",
        "Unable to locate credentials",
        mro=["botocore.exceptions.NoCredentialsError", "builtins.Exception"],
    )
    assert judge_exception(credentials, knowledge()).status == "skipped"
    terminal = exception("OSError", "No such device or address", errno=6, filename="/dev/tty")
    assert "interactive terminal" in judge_exception(terminal, knowledge()).message


def test_a_prompt_with_no_one_to_answer_it_needs_the_readers_terminal():
    prompt = exception("EOFError", "EOF when reading a line", "package")
    assert judge_exception(prompt, knowledge()).message.startswith(
        "Needs the reader's environment: an interactive terminal, where the reader answers its prompt"
    )
    truncated = exception("EOFError", "Ran out of input", "package")
    assert judge_exception(truncated, knowledge()).status == "failure", "a truncated file is no prompt"


def test_a_librarys_own_error_caused_by_a_refused_connection_needs_the_service_the_reader_runs():
    refused = {
        "type": "ConnectionRefusedError",
        "mro": ["builtins.ConnectionRefusedError", "builtins.ConnectionError", "builtins.OSError"],
        "message": "[Errno 111] Connection refused",
    }
    load_failed = exception("LoadError", "Connection failed", where="package", causes=[refused])
    verdict = judge_exception(load_failed, knowledge())
    assert (verdict.status, verdict.severity) == ("skipped", None)
    assert verdict.message.startswith("Needs the reader's environment: LoadError (Connection failed), caused by Conn")
    unrelated = exception("LoadError", "Connection failed", where="package", causes=[exception("KeyError", "'url'")])
    assert judge_exception(unrelated, knowledge()).status == "failure"


def test_a_domain_no_name_server_could_find_is_the_readers_network():
    nxdomain = {
        "type": "NXDOMAIN",
        "mro": ["dns.resolver.NXDOMAIN", "dns.exception.DNSException", "builtins.Exception"],
        "message": "The DNS query name does not exist: example.org.",
    }
    undeliverable = exception(
        "EmailUndeliverableError", "The domain example.org does not exist.", "package", causes=[nxdomain]
    )
    verdict = judge_exception(undeliverable, knowledge())
    assert verdict.status == "skipped" and "caused by NXDOMAIN" in verdict.message
    unrelated = exception("EmailSyntaxError", "An email address must have an @-sign.", "package")
    assert judge_exception(unrelated, knowledge()).status == "failure"


def test_a_program_the_library_says_is_missing_from_the_machine_is_the_readers_environment():
    cli = exception("ValueError", "The vault CLI is not properly installed. See https://example.org/cli", "package")
    assert judge_exception(cli, knowledge()).status == "skipped"
    assert (
        judge_exception(exception("RuntimeError", "kv: command not found", "package"), knowledge()).status == "skipped"
    )
    module = exception("ValueError", "Module 'toml' not installed", "package")
    assert judge_exception(module, knowledge()).status != "skipped", "a Python package, which the page can name"


def test_a_framework_project_without_its_settings_is_the_readers_environment():
    unconfigured = exception(
        "ImproperlyConfigured",
        "Requested setting INSTALLED_APPS, but settings are not configured.",
        "package",
        mro=["django.core.exceptions.ImproperlyConfigured", "builtins.Exception"],
    )
    verdict = judge_exception(unconfigured, knowledge())
    assert verdict.status == "skipped" and verdict.message.startswith("Needs the reader's environment")


def test_a_name_is_judged_by_where_it_could_come_from():
    page = knowledge(defined_later={"later": (4, 40)}, defined_by_failed={"broken": (1, 10)})
    assert judge_exception(exception("NameError", name="os", importable=True), page).severity == "warning"
    assert judge_exception(exception("NameError", name="draw", provided_by=["shapes"]), page).suggestion.startswith(
        "Add `from shapes import draw`"
    )
    assert judge_exception(exception("NameError", name="later"), page).severity == "warning"
    assert judge_exception(exception("NameError", name="broken"), page).status == "skipped"
    assert judge_exception(exception("NameError", name="row"), page).message.startswith("Illustrative")


def test_a_one_letter_name_the_page_defines_only_later_stands_for_any_value_there_not_for_that_one():
    page = knowledge(defined_later={"x": (4, 40), "xs": (4, 40)})
    assert judge_exception(exception("NameError", name="x"), page).status == "skipped"
    assert judge_exception(exception("NameError", name="xs"), page).severity == "warning"


def test_a_module_and_what_it_provides_of_the_same_name_are_told_apart_by_how_the_name_is_used():
    both = exception("NameError", name="shape", importable=True, provided_by=["shape"])
    assert judge_exception(both, knowledge()).import_needed == "from shape import shape", "called or decorating"
    reached_into = knowledge(used_as_modules={"shape"})
    assert judge_exception(both, reached_into).import_needed == "import shape", "shape.circle(...)"


def test_a_module_whose_member_of_the_same_name_has_what_the_code_reaches_is_imported_as_that_member():
    member = exception("NameError", name="datetime", importable=True, member_import=True)
    assert judge_exception(member, knowledge(used_as_modules={"datetime"})).import_needed == (
        "from datetime import datetime"
    )
    imported_as_module = exception("AttributeError", name="utcnow", owner="datetime", member_has=True)
    verdict = judge_exception(imported_as_module, knowledge())
    assert verdict.severity == "error" and "`from datetime import datetime`" in verdict.suggestion


def test_an_error_naming_what_a_failed_example_never_defined_is_counted_there():
    page = knowledge(defined_by_failed={"engine": (1, 10)}, defined_by_skipped={"client": (2, 20, "Not run.")})
    for error in (
        exception("NameError", name="engine"),
        exception("AttributeError", name="engine", owner="builtins.module"),
        exception("ImportError", name="__main__", missing="engine"),
    ):
        verdict = judge_exception(error, page)
        assert (verdict.status, verdict.builds_on) == ("skipped", 1)
        assert verdict.message == "Builds on example 1 (line 10), which failed; counted there."
    assert judge_exception(exception("NameError", name="client"), page).builds_on == 2
    assert judge_exception(exception("NameError", name="other"), page).builds_on is None


def test_a_test_module_has_only_the_names_it_imports_whatever_other_examples_define_or_failed_to():
    page = knowledge(own_module=True, defined_elsewhere={"engine": (1, 10)}, defined_by_failed={"engine": (1, 10)})
    verdict = judge_exception(exception("NameError", name="engine"), page)
    assert (verdict.status, verdict.severity) == ("failure", "error")
    assert "defined in example 1 (line 10), but the test module never imports it" in verdict.suggestion


def test_a_path_starting_with_a_tilde_fails_on_every_machine_not_only_the_sandbox():
    missing = exception("FileNotFoundError", "No such file: '~/data/x'", filename="~/data/x", where="stdlib")
    missing["mro"] = ["builtins.FileNotFoundError", "builtins.OSError", "builtins.Exception"]
    verdict = judge_exception(missing, knowledge())
    assert (verdict.status, verdict.severity) == ("failure", "error")
    assert "does not expand `~`" in verdict.suggestion
    missing.update(filename="/srv/data/x")
    assert judge_exception(missing, knowledge()).status == "skipped", "the reader's own file, elsewhere"


def test_a_name_a_session_types_that_nothing_defines_is_an_error_unless_it_is_the_readers_own():
    session = knowledge(verbatim=True, readers_names={"store"})
    typo = judge_exception(exception("NameError", name="Cirle"), session)
    assert (typo.status, typo.severity) == ("failure", "error")
    assert "defined nowhere" in typo.suggestion
    for own in ("my_shape", "your_token", "MyShapeError", "store", "a_file_object", "an_instance"):
        assert judge_exception(exception("NameError", name=own), session).message.startswith("Illustrative")
    handle = knowledge(verbatim=True, reached_deep_only={"db"})
    deep = judge_exception(exception("NameError", name="db"), handle)
    assert deep.message.startswith("Illustrative"), "`db.model.get_id()`: an object of the reader's, known inside"
    assert judge_exception(exception("NameError", name="Cirle"), knowledge()).status == "skipped", "in a script"
    unresolved = knowledge(verbatim=True, unresolved=["Cirle"])
    verdict = judge_exception(exception("NameError", name="os", importable=True), unresolved)
    assert verdict.severity == "warning", "a session's other unknown names do not make it illustrative"


def test_a_name_that_stands_for_any_one_of_its_kind_is_the_readers_to_pick():
    session = knowledge(verbatim=True)
    for own in ("some_text", "SomeItem", "render_some_template"):
        assert judge_exception(exception("NameError", name=own), session).message.startswith("Illustrative")
    assert judge_exception(exception("NameError", name="somewhere"), session).severity == "error"


def test_a_name_that_says_it_is_the_readers_is_theirs_though_the_page_defines_it_only_later():
    page = knowledge(defined_later={"MyPlugin": (4, 40), "plugin": (4, 40), "foo": (5, 50), "food": (5, 50)})
    assert judge_exception(exception("NameError", name="MyPlugin"), page).message.startswith("Illustrative")
    assert judge_exception(exception("NameError", name="plugin"), page).severity == "warning"
    assert judge_exception(exception("NameError", name="foo"), page).message.startswith("Illustrative"), "foo"
    assert judge_exception(exception("NameError", name="food"), page).severity == "warning"


def test_a_top_level_export_met_before_a_stand_in_is_a_missing_import_but_a_module_a_deep_name_or_a_placeholder_is_a_sketch():
    sketch = knowledge(unresolved=["outline"], used_as_modules={"shapes"})
    exported = exception("NameError", name="Circle", provided_by=["geometry"])
    assert (judge_exception(exported, sketch).status, judge_exception(exported, sketch).import_needed) == (
        "failure",
        "from geometry import Circle",
    )
    deep = exception("NameError", name="Registry", provided_by=["shapes.util"])
    module = exception("NameError", name="shapes", importable=True, provided_by=["shapes"])
    for sketched in (deep, module):
        assert judge_exception(sketched, sketch).message.startswith("Illustrative: uses `outline`")
    placeholder = knowledge(unresolved=["SomeShape"])
    assert judge_exception(exported, placeholder).message.startswith("Illustrative: uses `SomeShape`"), (
        "a stand-in named as one makes the block a pattern shown on a placeholder"
    )


def test_a_missing_attribute_of_the_library_is_an_error_with_a_confident_hint_only():
    close = exception("AttributeError", name="drwa", owner="shapes", suggestions=["draw"])
    assert (
        judge_exception(close, knowledge()).suggestion
        == "`drwa` does not exist on `shapes` in shapes 1.0; did you mean `draw`?"
    )
    newer_stdlib = exception("AttributeError", name="replace", owner="copy")
    verdict = judge_exception(newer_stdlib, knowledge())
    assert verdict.status == "skipped" and "Python 3.11.2" in verdict.message
    on_a_function = exception("AttributeError", name="delay", owner="builtins.function")
    assert judge_exception(on_a_function, knowledge()).severity == "error", "no Python adds attributes to functions"


def test_modules_are_judged_by_what_installing_them_gave():
    page = knowledge(modules={"fancy": ("failed", "fancy==2"), "mine": ("unpublished", "mine")})
    assert judge_exception(exception("ModuleNotFoundError", name="fancy"), page).severity == "warning"
    assert judge_exception(exception("ModuleNotFoundError", name="mine"), page).status == "skipped"
    assert judge_exception(exception("ModuleNotFoundError", name="shapes.gone"), page).severity == "error"
    inside = exception("ModuleNotFoundError", name="numpy", where="package")
    page.extras["numpy"] = "fast"
    assert 'pip install "shapes[fast]"' in judge_exception(inside, page).suggestion


def test_a_package_the_page_never_names_is_a_warning_that_says_what_to_pip_install_whoever_imports_it():
    page = knowledge(modules={"yaml": ("unnamed", "PyYAML"), "rich": ("unnamed", "shapes[pretty]==1.0")})
    page.extras["rich"] = "pretty"
    imported = judge_exception(exception("ModuleNotFoundError", name="yaml"), page)
    assert (imported.status, imported.severity) == ("failure", "warning")
    assert imported.suggestion == (
        "The example imports `yaml` (from the `PyYAML` package), which the page never tells the reader to install: "
        "add `pip install PyYAML` to the page."
    )
    extra = judge_exception(exception("ModuleNotFoundError", name="rich"), page).suggestion
    assert '`pip install rich` (or `pip install "shapes[pretty]"`, whose `pretty` extra brings it)' in extra
    page.modules["toolkit.cli"] = ("unnamed", "toolkit")
    inner = judge_exception(exception("ModuleNotFoundError", name="toolkit"), page)
    assert inner.severity == "warning", "`import toolkit.cli` fails at `toolkit`: the fate of toolkit.cli is its own"
    assert "`pip install toolkit`" in inner.suggestion
    by_the_library = judge_exception(exception("ModuleNotFoundError", name="yaml", where="package"), page)
    assert by_the_library.severity == "warning" and "`pip install PyYAML`" in by_the_library.suggestion
    assert judge_exception(exception("ModuleNotFoundError", name="rich", where="package"), page).suggestion.endswith(
        'add `pip install "shapes[pretty]"` to the page.'
    )


def test_a_library_that_names_the_missing_package_only_in_its_message_gets_that_package_in_the_advice():
    raised = exception(
        "ModuleNotFoundError", "Module 'python-dotenv' not installed. Install it first.", where="package", name=None
    )
    verdict = judge_exception(raised, knowledge())
    assert (verdict.status, verdict.severity) == ("failure", "warning")
    assert "`pip install python-dotenv`" in verdict.suggestion and "``" not in verdict.suggestion


def test_an_example_that_imports_a_missing_package_itself_fails_on_its_own_import_not_on_an_earlier_example():
    page = knowledge(modules={"httpx": ("unnamed", "httpx")}, defined_by_failed={"httpx": (1, 10)})
    verdict = judge_exception(exception("ModuleNotFoundError", name="httpx"), page)
    assert (verdict.status, verdict.builds_on) == ("failure", None)
    assert judge_exception(exception("NameError", name="httpx"), page).builds_on == 1, "using its name builds on it"


def test_an_exception_raised_in_a_package_is_a_warning_and_in_the_docs_code_an_error():
    assert judge_exception(exception("ValueError", "bad", where="package"), knowledge()).severity == "warning"
    assert judge_exception(exception("ValueError", "bad"), knowledge()).severity == "error"


def test_the_pages_lines_in_another_order_are_format_only_for_code_that_goes_through_a_set():
    reordered = judge_output("pear\napple\n", "apple\npear\n", "line 3", iterates_a_set=True)
    assert (reordered.status, reordered.severity) == ("success", "info") and "a set" in reordered.message
    assert judge_output("pear\napple\n", "apple\npear\n", "line 3").severity == "error", "order is promised"
    assert judge_output("pear\napple\n", "apple\nplum\n", "line 3", iterates_a_set=True).severity == "error"


def test_outputs_and_deprecations_map_to_error_and_info():
    assert judge_output("1", "2").severity == "error"
    assert judge_output("at 2020-01-01 10:00:00", "at 2026-11-23 07:00:00").severity == "info"
    deprecated = [{"category": "DeprecationWarning", "message": "old", "filename": "x.py", "lineno": 1}]
    assert judge_warnings(deprecated).severity == "info" and judge_warnings([]).severity is None


@pytest.mark.parametrize(
    "shown, printed",
    [
        ("<Foo object at 0x7f..>", "<Foo object at 0x7e9a3c5d1f20>"),
        ("<Foo object at 0x7f3a2b1c0d90>", "<Foo object at 0x7e0011223344>"),
        ("saved at 2024-05-06 07:08:09", "saved at 2026-11-23 01:02:03"),
        ("# the answer:\n42", "42"),
        ("\x1b[1m42\x1b[0m", "[1m42[0m"),
    ],
)
def test_an_output_that_differs_only_in_what_varies_between_runs_is_never_a_failure(shown, printed):
    verdict = judge_output(shown, printed)
    assert verdict.status == "success" and verdict.severity in (None, "info")


def test_a_traceback_is_known_by_the_exception_type_of_its_last_line():
    traceback = "Traceback (most recent call last):\n  ...\npkg.errors.BadValue: no\n"
    assert exception_type(traceback) == "BadValue" and exception_type("BadValue: no") is None
    assert same_exception(traceback, "Traceback (most recent call last):\nBadValue: other words\n")


def test_each_documented_print_is_judged_against_what_that_print_wrote():
    example = CodeExample(library="shapes", code="print('a')\n#> a\nprint('b')\n#> c\n", line=20)
    shown = python_code.documented_prints(example.code, python_code.parse(example.code))
    verdict = judge_prints(shown, [(1, "a\n"), (3, "b\n")], example)
    assert (verdict.status, verdict.severity) == ("failure", "error") and "the print at line 22" in verdict.message
    assert judge_prints(shown[:1], [(1, "a\n")], example) == SUCCESS


def test_a_runner_that_stopped_says_how():
    assert "limit of 64 processes" in runner_trouble({"status": "process_limit", "limit": 64}).message
    assert runner_trouble({"status": "cancelled"}).status == "skipped"
    assert runner_trouble({"status": "died", "message": "gone"}).message == "The page runner stopped: gone"


def test_only_warnings_of_the_examples_own_code_count():
    ours = {"filename": "example_0_line_5.py", "category": "DeprecationWarning", "message": "old"}
    theirs = {"filename": "/venv/lib/python3.11/site-packages/x.py", "category": "DeprecationWarning"}
    assert docs_warnings({"warnings": [ours, theirs]}) == [ours]


def test_an_optional_dependency_is_the_module_a_package_looked_for():
    missing = exception("ModuleNotFoundError", name="rich", where="package")
    assert optional_module(missing) == "rich" and optional_module(exception("ModuleNotFoundError", name="x")) is None
    assert optional_module({"none_module": "pkg.integrations.yaml"}) == "yaml"


def test_a_library_module_named_after_the_package_it_failed_to_import_is_an_adapter_to_it():
    def raised_in(filename):
        return {"frames": [{"where": "package", "filename": filename, "lineno": 3, "name": "<module>"}]}

    assert adapter_of("aiohttp", raised_in("/venv/site-packages/shapes/extras/aiohttp_shapes.py"))
    assert adapter_of("redis", raised_in("/venv/site-packages/shapes/backends/redis.py"))
    assert not adapter_of("aiohttp", raised_in("/venv/site-packages/shapes/core.py")), "the core needs it: optional"
    assert not adapter_of("aiohttp", {}), "no frame, no module named after it"


def test_a_package_whose_own_import_error_says_what_to_install_names_its_optional_dependency():
    told = exception("ImportError", "Drawing curves requires shapes_curves to be installed.", where="package")
    assert optional_module(told) == "shapes_curves"
    assert optional_module(exception("ImportError", "requires shapes_curves to be installed.")) is None, (
        "the example's own import, not the library asking"
    )


def test_a_package_that_rewords_its_failed_import_names_the_module_that_failed_under_it():
    not_found = {"type": "ModuleNotFoundError", "mro": ["builtins.ModuleNotFoundError", "builtins.ImportError"]}
    reworded = exception(
        "ImportError",
        "Drawing curves needs the curves add-on",
        "package",
        causes=[{**not_found, "message": "No module named 'shapes_curves'"}],
    )
    assert optional_module(reworded) == "shapes_curves"
    assert (
        optional_module({**reworded, "causes": [{**not_found, "mro": ["builtins.KeyError"], "message": "'x'"}]}) is None
    )


def test_a_missing_namespace_is_the_module_the_failing_line_imports_from_it():
    missing = exception("ModuleNotFoundError", "No module named 'zope'", "package", name="zope")
    missing["frames"][-1]["line"] = "from zope.cloud import shapes"
    assert optional_module(missing) == "zope.cloud.shapes"
    missing["frames"][-1]["line"] = "import zope.cloud.shapes.curves as curves"
    assert optional_module(missing) == "zope.cloud.shapes.curves"


def test_a_package_that_raises_the_missing_module_error_itself_names_the_module_in_its_message():
    raised = exception("ModuleNotFoundError", "Module 'toml' not installed. Run 'pip install cfg[toml]'", "package")
    assert optional_module(raised) == "toml"
    assert optional_module(exception("ModuleNotFoundError", "Install the extras first.", "package")) is None


def test_an_exception_is_as_said_when_the_page_names_its_type_a_base_of_it_or_none():
    raised = exception("KeyError")
    raised["mro"].insert(1, "builtins.LookupError")
    assert raised_as_said("KeyError", raised) and raised_as_said("LookupError", raised)
    assert raised_as_said("Exception", raised)
    assert not raised_as_said("TypeError", raised)


def test_a_module_standing_for_the_readers_own_is_illustrative_whoever_imports_it_unless_the_page_lays_it_out():
    told_to_the_library = exception("ModuleNotFoundError", name="my_project.settings", where="package")
    verdict = judge_exception(told_to_the_library, knowledge())
    assert (verdict.status, verdict.message) == (
        "skipped",
        "Illustrative: imports `my_project.settings`, which stands for the reader's own code.",
    )
    laid_out = knowledge(modules={"your_app": ("page", "")})
    assert judge_exception(exception("ModuleNotFoundError", name="your_app"), laid_out).status == "failure"


def test_the_oldest_python_a_library_supports_is_read_from_its_requires_python():
    assert oldest_python(">=3.9") == "3.9" and oldest_python(">=3.9, <4") == "3.9"
    assert oldest_python("~=3.10") == "3.10" and oldest_python(">3.8") == "3.8"
    assert oldest_python("") is None and oldest_python("not a specifier") is None


def test_syntax_newer_than_the_librarys_oldest_python_is_a_warning_unless_the_page_names_the_python_it_needs():
    pep695 = ("3.12", "a `type` alias (PEP 695)")
    older = newer_syntax(pep695, knowledge(requires_python=">=3.9"), "line 4 of the page", None)
    assert (older.status, older.severity) == ("failure", "warning")
    assert "needs Python 3.12 (a `type` alias (PEP 695)), but shapes supports Python 3.9" in older.message
    assert "use syntax Python 3.9 has" in older.suggestion
    assert newer_syntax(pep695, knowledge(requires_python=">=3.9"), "", "3.9").status == "failure", "an older one"
    told = newer_syntax(pep695, knowledge(requires_python=">=3.9"), "", "3.12")
    assert (told.status, told.message) == (
        "skipped",
        "Needs Python 3.12 or newer, as the page says: it uses a `type` alias (PEP 695).",
    )
    assert newer_syntax(pep695, knowledge(requires_python=">=3.12"), "", None).status == "skipped"
    assert newer_syntax(pep695, knowledge(), "", None).status == "skipped", "nothing known about its Pythons"


@pytest.mark.parametrize(
    "raised, says",
    [
        (exception("ValueError", "Round shapes are only supported in Python 3.14 and above."), "Python 3.14 or newer"),
        (exception("RuntimeError", "this feature requires Python 3.13+", where="package"), "Python 3.13 or newer"),
        (exception("OSError", "Not a git repository: .", where="package"), "Not a git repository"),
        (exception("LookupError", "Expected environment variables not found: SHOP_URL", where="package"), "SHOP_URL"),
        (exception("RuntimeError", "The environment variable SHOP_KEY is not set", where="package"), "SHOP_KEY"),
    ],
)
def test_what_the_library_says_the_readers_machine_lacks_is_their_environment(raised, says):
    verdict = judge_exception(raised, knowledge())
    assert verdict.status == "skipped" and says in verdict.message


def test_a_library_handed_the_readers_own_package_by_name_is_illustrative():
    loaded = judge_exception(
        exception("ImportError", "cannot load 'my_package' from ['/w']", where="package"), knowledge()
    )
    assert loaded.status == "skipped" and "`my_package`" in loaded.message
    real = judge_exception(exception("ImportError", "cannot load 'shapes_extra'", where="package"), knowledge())
    assert (real.status, real.severity) == ("failure", "warning")


PAINT = [
    {
        "where": "shapes.paint",
        "parameters": [["canvas", "POSITIONAL_OR_KEYWORD", False], ["colour", "KEYWORD_ONLY", True]],
    }
]


@pytest.mark.parametrize(
    ("listing", "difference"),
    [
        ("def paint(canvas, colour='red')\n", None),
        ("def paint(canvas, *, colour: str = 'red') -> Stroke:\n    ...\n", None),
        ("def paint(canvas)\n", None),
        ("def paint(canvas, **options)\n", None),
        ("def paint(self, canvas)\n", None),
        ("def paint(canvas, hue='red')\n", "`paint` has no parameter `hue`; its parameters are `(canvas, colour=…)`"),
    ],
)
def test_a_listed_signature_differs_when_the_reader_would_pass_what_the_library_does_not_take(listing, difference):
    (listed,) = python_code.listed_signatures(listing)
    verdict = signature_difference(listed, PAINT)
    if difference is None:
        assert verdict is None
    else:
        assert (verdict.status, verdict.severity) == ("failure", "warning")
        assert verdict.message.startswith(difference)


def test_a_listed_signature_matching_any_definition_of_its_name_or_one_without_a_signature_is_no_finding():
    (listed,) = python_code.listed_signatures("def paint(surface)\n")
    other = {"where": "shapes.brush.paint", "parameters": [["surface", "POSITIONAL_OR_KEYWORD", False]]}
    assert signature_difference(listed, [*PAINT, other]) is None
    assert signature_difference(listed, [{"where": "shapes.paint", "parameters": None}]) is None


def test_a_listed_signature_leaving_out_a_required_parameter_is_a_shortened_listing_said_not_blamed():
    (listed,) = python_code.listed_signatures("def paint(colour='red')\n")
    verdict = signature_difference(listed, PAINT)
    assert (verdict.status, verdict.severity) == ("skipped", "info")
    assert "`paint` needs `canvas`, which the page leaves out" in verdict.message


def test_a_session_that_shows_only_the_errors_last_line_shows_that_error_and_no_other():
    raised = exception("ValueError", "bad input")
    assert shows_exception("ValueError: bad input, worded as an older release words it", raised)
    assert shows_exception("shapes.errors.ValueError: bad input", raised)
    assert shows_exception("Traceback (most recent call last):\n  ...\nValueError: bad input", raised)
    assert not shows_exception("ShapeError: bad input", raised), "another class than the one raised"
    assert not shows_exception("The value: ValueError", raised), "output that mentions the class is no error line"


def test_an_error_shown_by_its_last_line_with_another_message_is_noted_not_reported():
    raised = exception("ValueError", "no low surrogate in string")
    note = shown_exception_message("ValueError: unexpected end of hex escape", raised, "line 4")
    assert (note.status, note.severity) == ("success", "info") and "message differs" in note.message
    assert shown_exception_message("ValueError: no low surrogate in string", raised, "line 4").severity is None


def test_an_error_shown_under_another_name_the_library_gives_its_class_is_that_error():
    raised = exception("TypeError", "Integer exceeds 53-bit range", aliases=["JSONEncodeError"])
    assert shows_exception("JSONEncodeError: Integer exceeds 53-bit range", raised)
    assert shows_exception("shapes.JSONEncodeError: Integer exceeds 53-bit range", raised)
    assert not shows_exception("JSONEncodeError: Integer exceeds 53-bit range", exception("TypeError", "x"))
    assert raised_as_said("JSONEncodeError", raised) and not raised_as_said("JSONDecodeError", raised)


def test_a_librarys_error_is_about_a_package_handed_by_name_when_it_names_it_or_quotes_a_name_looked_up_in_it():
    handed = ["gizmo.parts.wheels", "shapes.extra"]
    not_found = exception("KeyError", "'gizmo'", where="package")
    assert packages_handed_by_name(not_found, handed, handed, knowledge()) == ["gizmo"]
    part = exception("LookupError", "no module 'parts.wheels' here", where="package")
    assert packages_handed_by_name(part, handed, handed, knowledge()) == ["gizmo"], "a dotted part of the name"
    prose = exception("ImportError", "install shapes with the gizmo feature", where="package")
    assert packages_handed_by_name(prose, handed, [], knowledge()) == [], "a word of the message is no name"
    looked_up = exception("KeyError", "'spokes'", where="package")
    assert packages_handed_by_name(looked_up, handed, ["spokes"], knowledge()) == ["gizmo"]
    other = exception("KeyError", "'colour'", where="package")
    assert packages_handed_by_name(other, handed, ["spokes"], knowledge()) == [], "about none of the example's names"
    own = exception("KeyError", "'gizmo'")
    assert packages_handed_by_name(own, handed, handed, knowledge()) == [], "raised in the example's own code"
    assert packages_handed_by_name(not_found, ["my_package"], ["my_package"], knowledge()) == [], "the reader's own"


def test_git_run_outside_a_repository_needs_the_readers_repository_and_other_failed_commands_stay_findings():
    mro = ["subprocess.CalledProcessError", "subprocess.SubprocessError", "builtins.Exception"]
    git = exception(
        "CalledProcessError", "Command '['git', 'diff-index', 'HEAD']' returned non-zero exit status 128.", mro=mro
    )
    assert judge_exception(git, knowledge()).message.startswith("Needs the reader's environment: the reader's git")
    make = exception("CalledProcessError", "Command '['make', 'all']' returned non-zero exit status 2.", mro=mro)
    assert judge_exception(make, knowledge()).status == "failure"


def test_a_missing_file_a_compiled_library_names_only_in_its_message_is_the_readers_file():
    rust = exception("FileNotFoundError", "No such file or directory (os error 2): data.parquet", "package")
    assert judge_exception(rust, knowledge()).message.startswith(
        "Needs the reader's environment: the file data.parquet, which the page does not create"
    )
    unnamed = exception("FileNotFoundError", "No such file or directory", "package")
    assert judge_exception(unnamed, knowledge()).status == "failure", "no file named, nothing to own"


def test_a_missing_file_behind_a_librarys_own_error_is_the_readers_file_and_another_oserror_is_not():
    oserror = ["builtins.OSError", "builtins.Exception", "builtins.BaseException", "builtins.object"]
    wrapped = exception(
        "ValueError",
        "Invalid data or url or filepath argument: /srv/data.yml",
        "package",
        causes=[{"type": "OSError", "mro": oserror, "message": "Invalid file path: /srv/data.yml"}],
    )
    assert judge_exception(wrapped, knowledge()).message.startswith(
        "Needs the reader's environment: the file /srv/data.yml, which the page does not create"
    )
    told = exception("ValueError", "Unexpected error / bad argument\nInvalid file path: /srv/data.yml", "package")
    assert judge_exception(told, knowledge()).status == "skipped", "said on a line of its own message"
    other = exception(
        "ValueError", "bad data", "package", causes=[{"type": "OSError", "mro": oserror, "message": "disk full"}]
    )
    assert judge_exception(other, knowledge()).status == "failure"


def test_a_library_saying_it_must_run_in_a_terminal_needs_the_readers_terminal():
    tty = exception("UserWarning", "This must be run on a tty connected terminal.", "package")
    assert judge_exception(tty, knowledge()).message.startswith(
        "Needs the reader's environment: an interactive terminal"
    )
    other = exception("ValueError", "the terminal width must be positive", "package")
    assert judge_exception(other, knowledge()).status == "failure"


def test_a_name_the_docs_import_a_module_under_is_never_the_readers_own_object():
    page = knowledge(readers_names={"sh"}, aliases={"sh": "shapes"})
    verdict = judge_exception(exception("NameError", "name 'sh' is not defined", name="sh"), page)
    assert (verdict.status, verdict.import_needed) == ("failure", "import shapes as sh")
