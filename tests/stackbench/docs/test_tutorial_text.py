"""The words tutorials are read by, tried on small sentences of the kind tutorials use."""

import re

import pytest

from stackbench.docs.tutorial_text import (
    ALTERNATIVE_INTRO,
    CROSS_REFERENCE,
    ENV_ASSIGNED,
    ENV_IN_PYTHON,
    ENV_IN_SHELL,
    EXPECTED_OUTPUT,
    FILE_INTRO,
    HEDGED_OUTPUT,
    LOCAL_URL,
    NOT_WORK,
    OPS_ITEM,
    OR_INTRO,
    PARAGRAPH_TARGET,
    PLACEHOLDER,
    PROMPTED,
    RUN_INTRO,
    RUN_LABEL,
    SUBHEADING,
    TAB,
    TEMPLATE_INTRO,
    VAGUE_PHRASES,
    VERIFICATION_CUES,
    is_file_path,
)


@pytest.mark.parametrize(
    "text",
    ["app.py", "config.yaml", "src/app/main.py", "app/artist/[username]/page.tsx", "docker/Dockerfile", "src/app"],
)
def test_a_path_a_reader_could_create_is_a_file_path(text):
    assert is_file_path(text)


@pytest.mark.parametrize(
    "text", ["str.format", "project.name", "notes.unknownext", "https://x.io/a.py", "a b.py", "my file", "README"]
)
def test_a_dotted_name_a_url_or_words_are_no_file_path(text):
    assert not is_file_path(text)


@pytest.mark.parametrize(
    ("sentence", "verb", "name"),
    [
        ("Create a file called `app.py`:", "Create", "app.py"),
        ("Add this to `settings.py`:", "Add", "settings.py"),
        ("Save it as `hello.py`", "Save", "hello.py"),
    ],
)
def test_the_sentence_before_a_block_names_the_file_it_goes_in(sentence, verb, name):
    assert FILE_INTRO.search(sentence).groups() == (verb, name)


def test_a_command_in_backticks_mid_sentence_names_no_file():
    assert FILE_INTRO.search("Run `pip install x` and then:") is None
    assert (
        FILE_INTRO.search("Create `app.py`, then start the development server and open the browser to see it.") is None
    ), "a name far from the end of the sentence is not what the block goes in"
    assert PARAGRAPH_TARGET.findall("Add the line to your `settings.py` file.") == ["settings.py"]


@pytest.mark.parametrize("sentence", ["With Yarn:", "Or with Docker:", "Alternatively, run", "Using pnpm"])
def test_one_way_among_several_is_recognised(sentence):
    assert ALTERNATIVE_INTRO.search(sentence)


def test_a_sentence_that_merely_starts_with_with_is_no_alternative():
    assert not ALTERNATIVE_INTRO.search("With the file saved, run the tests.")
    assert OR_INTRO.search("Or, if you prefer") and not OR_INTRO.search("Orders come in")


def test_hedged_output_and_template_blocks_are_told_from_promises():
    assert HEDGED_OUTPUT.search("The output will look something like:")
    assert HEDGED_OUTPUT.search("Your path may differ.") and HEDGED_OUTPUT.search("Timings may vary.")
    assert not HEDGED_OUTPUT.search("It prints:")
    assert TEMPLATE_INTRO.search("using the syntax:") and not TEMPLATE_INTRO.search("using the file:")


def test_a_run_introduction_ends_in_a_colon():
    assert RUN_INTRO.search("Run the following command:") and RUN_INTRO.search("Execute:")
    assert not RUN_INTRO.search("Run it.")


def test_a_prompted_line_starts_with_a_prompt_and_a_space():
    assert PROMPTED.match("$ ls") and PROMPTED.match(">>> 1 + 1")
    assert not PROMPTED.match("$HOME")


def test_promised_output_is_read_from_the_backticks_after_the_verb():
    assert EXPECTED_OUTPUT.findall("It prints `hello world` and returns `42`.") == ["hello world", "42"]
    assert re.search(VERIFICATION_CUES, "You should see a table", re.IGNORECASE)
    assert not re.search(VERIFICATION_CUES, "Open the file", re.IGNORECASE)


def test_vague_words_and_pointers_elsewhere_are_found():
    assert any(re.search(p, "Configure it appropriately.", re.IGNORECASE) for p in VAGUE_PHRASES)
    assert not any(re.search(p, "Set the port to 8000.", re.IGNORECASE) for p in VAGUE_PHRASES)
    assert CROSS_REFERENCE.search("See the installation guide for details.")
    assert not CROSS_REFERENCE.search("See what happens.")


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Set <your-api-key> here", ["<your-api-key>"]),
        ("export YOUR_TOKEN=1", ["YOUR_TOKEN"]),
        ("clone user/repo", ["user/repo"]),
        ("key: xxxx", ["xxxx"]),
        ("use <div> here", []),
        ("clone django/django", []),
        ("see https://example.com/user/repo", []),
    ],
)
def test_a_placeholder_to_fill_in_is_told_from_markup_and_real_names(text, found):
    assert PLACEHOLDER.findall(text) == found


def test_local_addresses_are_found_with_their_path_and_others_are_not():
    text = "open http://localhost:8000/docs) or http://127.0.0.1/ and https://example.com"
    assert LOCAL_URL.findall(text) == ["http://localhost:8000/docs", "http://127.0.0.1/"]


def test_numbered_work_is_read_and_notes_are_not_work():
    assert OPS_ITEM.findall("1. Run x\n- Read y\nplain") == ["1. ", "- "]
    assert RUN_LABEL.search("Run this command: pip install x").group(2) == "pip install x"
    assert NOT_WORK.match("Success indicators: ok") and not NOT_WORK.match("Install the package")


def test_tabs_and_deep_subheadings_mark_ways():
    assert TAB.match('=== "Linux"') and not TAB.match("==")
    assert SUBHEADING.match("### With Docker ##").group(2) == "With Docker"
    assert not SUBHEADING.match("## Two")


def test_environment_variables_used_and_set_are_found_in_shell_and_python():
    assert ENV_IN_SHELL.findall("echo $API_KEY ${DB_URL} $x $AB") == ["API_KEY", "DB_URL"]
    python = "os.environ['API_KEY']; os.getenv(\"DB\"); os.environ.get('TOKEN')"
    assert ENV_IN_PYTHON.findall(python) == ["API_KEY", "DB", "TOKEN"]
    assert ENV_ASSIGNED.findall("export FOO=1; BAR=2 cmd; x=FOO=3") == ["FOO", "BAR"]


def test_the_newest_python_version_the_text_names_is_found_in_the_ways_docs_say_it():
    from stackbench.docs.tutorial_text import named_python

    assert named_python("This needs Python 3.12 or newer:") == "3.12"
    assert named_python("Works since Python 3.9; on 3.13+ you can write:") == "3.13"
    assert named_python("# python3.12 and later") == "3.12"
    assert named_python("Generic classes work with PEP 695 too:") is None
