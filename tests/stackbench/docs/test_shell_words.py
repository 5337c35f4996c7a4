from stackbench.docs.shell_words import (
    command_words,
    console_transcript,
    is_server_command,
    is_setup_only,
    looks_like_command,
    python_files_run,
    shell_definitions,
    split_shell_lines,
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


def test_quoted_text_is_never_taken_for_commands():
    assert command_words('python -c "import csv; w = csv.writer(x)" && ls') == ["python", "ls"]


def test_a_shell_block_splits_into_the_commands_a_reader_types():
    block = "pip install x\ncat <<EOF > a.txt\nhello\nEOF\n# a comment\necho 'two\nlines'\n"
    commands, output = split_shell_lines(block)
    assert commands == ["pip install x", "cat <<EOF > a.txt\nhello\nEOF", "echo 'two\nlines'"] and output == []


def test_in_a_console_block_only_prompted_lines_are_commands():
    assert split_shell_lines("$ python --version\nPython 3.11.2\n", console=True) == (
        ["python --version"],
        ["Python 3.11.2"],
    )


def test_a_console_transcript_gives_each_command_the_output_under_it_without_narration_or_markup():
    block = (
        "$ python main.py\n\nHello World\n\n// Now check the help\n$ python main.py --help\n"
        '<b>Usage: </b><font color="#A5A5A1">main.py [OPTIONS]</font> &apos;name&apos;\n'
    )
    assert console_transcript(block, console=True) == [
        ("python main.py", ["Hello World"]),
        ("python main.py --help", ["Usage: main.py [OPTIONS] 'name'"]),
    ]
    assert split_shell_lines(block, console=True) == (
        ["python main.py", "python main.py --help"],
        ["Hello World", "Usage: main.py [OPTIONS] 'name'"],
    )


def test_servers_keep_running_and_prose_is_no_command():
    assert is_server_command("uvicorn app:app --reload") and not is_server_command("npm create vite@latest app")
    assert looks_like_command("pip install x", labelled=False)
    assert not looks_like_command("make sure it works", labelled=False)


def test_the_python_files_a_command_line_gives_a_program_are_those_it_runs_not_values_or_options():
    assert python_files_run("FOO=1 sudo tool inventory.py deploy.py --limit web && python -m tool x=setup.py") == [
        ("tool", ["inventory.py", "deploy.py"])
    ]
    assert python_files_run("tool --help") == []
