from stackbench.validation.verdicts import PageKnowledge, judge_exception, judge_output, judge_warnings


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


def test_a_name_is_judged_by_where_it_could_come_from():
    page = knowledge(defined_later={"later": (4, 40)}, defined_by_failed={"broken": (1, 10)})
    assert judge_exception(exception("NameError", name="os", importable=True), page).severity == "warning"
    assert judge_exception(exception("NameError", name="draw", provided_by=["shapes"]), page).suggestion.startswith(
        "Add `from shapes import draw`"
    )
    assert judge_exception(exception("NameError", name="later"), page).severity == "warning"
    assert judge_exception(exception("NameError", name="broken"), page).status == "skipped"
    assert judge_exception(exception("NameError", name="row"), page).message.startswith("Illustrative")


def test_a_missing_attribute_of_the_library_is_an_error_with_a_confident_hint_only():
    close = exception("AttributeError", name="drwa", owner="shapes", suggestions=["draw"])
    assert (
        judge_exception(close, knowledge()).suggestion
        == "`drwa` does not exist on `shapes` in shapes 1.0; did you mean `draw`?"
    )
    newer_stdlib = exception("AttributeError", name="replace", owner="copy")
    verdict = judge_exception(newer_stdlib, knowledge())
    assert verdict.status == "skipped" and "Python 3.11.2" in verdict.message


def test_modules_are_judged_by_what_installing_them_gave():
    page = knowledge(modules={"fancy": ("failed", "fancy==2"), "mine": ("unpublished", "mine")})
    assert judge_exception(exception("ModuleNotFoundError", name="fancy"), page).severity == "warning"
    assert judge_exception(exception("ModuleNotFoundError", name="mine"), page).status == "skipped"
    assert judge_exception(exception("ModuleNotFoundError", name="shapes.gone"), page).severity == "error"
    inside = exception("ModuleNotFoundError", name="numpy", where="package")
    page.extras["numpy"] = "fast"
    assert 'pip install "shapes[fast]"' in judge_exception(inside, page).suggestion


def test_an_exception_raised_in_a_package_is_a_warning_and_in_the_docs_code_an_error():
    assert judge_exception(exception("ValueError", "bad", where="package"), knowledge()).severity == "warning"
    assert judge_exception(exception("ValueError", "bad"), knowledge()).severity == "error"


def test_outputs_and_deprecations_map_to_error_and_info():
    assert judge_output("1", "2").severity == "error"
    assert judge_output("at 2020-01-01 10:00:00", "at 2026-11-23 07:00:00").severity == "info"
    deprecated = [{"category": "DeprecationWarning", "message": "old", "filename": "x.py", "lineno": 1}]
    assert judge_warnings(deprecated).severity == "info" and judge_warnings([]).severity is None
