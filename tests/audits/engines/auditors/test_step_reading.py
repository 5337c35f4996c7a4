from audits.engines.auditors.step_reading import (
    command_words,
    is_setup_only,
    shell_definitions,
    without_function_bodies,
)


def test_command_words_are_the_programs_each_segment_runs():
    assert command_words("FOO=1 sudo apt-get install x && cd app | grep y; $(git rev-parse HEAD)") == [
        "apt-get",
        "cd",
        "grep",
        "git",
    ]


def test_shell_grammar_is_not_taken_for_programs():
    assert command_words("for f in *.txt; do wc -l $f; done") == ["wc"]
    assert command_words("if curl -s x; then jq .; fi") == ["curl", "jq"]
    assert command_words("function shout { echo HEY; }") == ["echo"]


def test_functions_and_aliases_a_command_defines_are_found():
    assert shell_definitions("greet() { echo hi; }; function shout { echo HEY; }; alias ll='ls -l'") == {
        "greet",
        "shout",
        "ll",
    }


def test_defining_a_function_is_setup_and_calling_one_is_not():
    assert is_setup_only("greet() { cd app; }")
    assert not is_setup_only("greet() { cd app; }; greet")


def test_a_function_definition_runs_none_of_its_body():
    assert (
        without_function_bodies("greet() { echo hi; if x; then { y; }; fi; }; ls\nfunction f { rm -r /; }") == "; ls\n"
    )
    assert is_setup_only("greet() { echo \"hi $1\"; }\nalias ll='ls -l'")
