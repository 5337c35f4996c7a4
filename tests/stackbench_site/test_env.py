import pytest

from stackbench_site.env import BadSetting, envbool, envfloat, envint, envlist, envstr


@pytest.mark.parametrize("raw", ["1", "true", "YES", " on "])
def test_the_usual_spellings_of_true_are_true(monkeypatch, raw):
    monkeypatch.setenv("SB_FLAG", raw)
    assert envbool("SB_FLAG", False) is True


@pytest.mark.parametrize("raw", ["0", "False", "no", "OFF"])
def test_the_usual_spellings_of_false_are_false(monkeypatch, raw):
    monkeypatch.setenv("SB_FLAG", raw)
    assert envbool("SB_FLAG", True) is False


def test_an_unset_or_empty_variable_is_the_default(monkeypatch):
    monkeypatch.delenv("SB_UNSET", raising=False)
    monkeypatch.setenv("SB_EMPTY", "")
    for name in ("SB_UNSET", "SB_EMPTY"):
        assert envbool(name, True) is True
        assert envint(name, 7) == 7
        assert envfloat(name, 2.5) == 2.5
        assert envlist(name, ("a", "b")) == ["a", "b"]
    assert envstr("SB_UNSET", "fallback") == "fallback" and envstr("SB_EMPTY", "fallback") == ""


@pytest.mark.parametrize(
    "reader, raw, message",
    [
        (envbool, "maybe", "SB_VALUE='maybe' is not a boolean (use true/false, 1/0, yes/no, on/off)"),
        (envint, "12.5", "SB_VALUE='12.5' is not an integer"),
        (envfloat, "fast", "SB_VALUE='fast' is not a number"),
    ],
)
def test_a_bad_value_fails_loudly_naming_the_variable(monkeypatch, reader, raw, message):
    monkeypatch.setenv("SB_VALUE", raw)
    with pytest.raises(BadSetting) as failure:
        reader("SB_VALUE", None)
    assert str(failure.value) == message


def test_numbers_are_read_as_numbers(monkeypatch):
    monkeypatch.setenv("SB_INT", "-42")
    monkeypatch.setenv("SB_FLOAT", "1e3")
    assert envint("SB_INT", 0) == -42 and envfloat("SB_FLOAT", 0.0) == 1000.0


def test_a_list_is_comma_separated_with_blanks_dropped(monkeypatch):
    monkeypatch.setenv("SB_LIST", " pypi.org, ,files.pythonhosted.org ,")
    assert envlist("SB_LIST") == ["pypi.org", "files.pythonhosted.org"]
    monkeypatch.setenv("SB_LIST", "   ")
    assert envlist("SB_LIST", ["default"]) == ["default"]
