"""Each rule of the rule-based auditor, on a small walkthrough followed for real."""

import json

import pytest

from stackbench.auditing.run import run_audit
from stackbench_site.configuration import sandbox_settings
from tests.builders import audit_request


@pytest.fixture
def audit(make_walkthrough, tmp_path):
    def run(steps, **limits):
        path = make_walkthrough(steps)
        request = audit_request(path, tmp_path / "out", "demo", "1.0", sandbox=sandbox_settings(**limits))
        result = run_audit(request)
        return [(g.step_number, g.gap_type, g.severity) for g in result.gaps], result

    return run


def test_a_failing_command_is_a_critical_execution_error_with_the_command_and_its_output(audit):
    gaps, result = audit([("Compute", "Run:\n\n```bash\npython3 -c 'print(1/0)'\n```\n\nIt prints a number.", "")])
    assert gaps == [(1, "execution_error", "critical")]
    gap = result.gaps[0]
    assert "ZeroDivisionError: division by zero" in gap.description
    assert gap.context.startswith("$ python3 -c 'print(1/0)'\n(exit 1 after")
    assert "Traceback" in gap.context


def test_a_file_no_earlier_step_created_is_a_logical_flow_gap(audit):
    gaps, result = audit([("Read", "```bash\ncat settings.toml\n```\n\nIt prints the settings.", "")])
    assert gaps == [(1, "logical_flow", "critical")]
    assert "`settings.toml` is used here, but no earlier step creates it" in result.gaps[0].description


def test_a_file_made_in_another_folder_points_at_the_folder(audit):
    gaps, result = audit(
        [
            ("Make", "```bash\nmkdir app\necho hi > app/notes.txt\n```", ""),
            ("Read", "```bash\ncat notes.txt\n```\n\nIt prints `hi`.", ""),
        ]
    )
    assert gaps == [(2, "logical_flow", "warning")]
    assert "exists in `app`" in result.gaps[0].description


def test_a_name_no_earlier_step_defined_is_a_logical_flow_gap(audit):
    gaps, result = audit(
        [
            ("Define", "```python\ntotal = 1\nprint(total)\n```\n\nIt prints `1`.", ""),
            ("Use", "```python\nprint(total + count)\n```\n\nIt prints a number.", ""),
        ]
    )
    assert gaps == [(2, "logical_flow", "critical")]
    assert "`count` is used here" in result.gaps[0].description


def test_python_snippets_share_one_process_across_steps(audit):
    gaps, _ = audit(
        [
            ("Define", "```python\nitems = [1, 2]\n```", ""),
            ("Use", "```python\nprint(sum(items))\n```\n\nIt prints `3`.", ""),
        ]
    )
    assert gaps == []


def test_a_tool_that_is_not_installed_is_a_critical_prerequisite(audit):
    gaps, result = audit([("Install", "```bash\nfrobnicate --init\n```\n\nYou should see `ok`.", "")])
    assert gaps == [(1, "prerequisite", "critical")]
    assert result.gaps[0].description == "`frobnicate` is not installed and no step says to install it."


def test_a_tool_never_mentioned_that_works_is_a_prerequisite_info_once(audit):
    gaps, _ = audit(
        [
            ("Check", "```bash\ngit --version\n```\n\nIt prints the version.", ""),
            ("Again", "```bash\ngit --version\n```\n\nIt prints the version.", ""),
        ]
    )
    assert gaps == [(1, "prerequisite", "info")]


def test_a_tool_the_tutorial_mentions_is_fine(audit):
    gaps, _ = audit([("Check", "You need git installed.\n\n```bash\ngit --version\n```\n\nIt prints the version.", "")])
    assert gaps == []


def test_an_environment_variable_nobody_sets_is_a_prerequisite_info_when_nothing_fails(audit):
    gaps, result = audit([("Token", '```bash\necho "token=$DEMO_API_TOKEN"\n```\n\nIt prints the token.', "")])
    assert gaps == [(1, "prerequisite", "info")]
    assert "`DEMO_API_TOKEN` is read from the environment" in result.gaps[0].description


def test_exported_variables_carry_over_and_count_as_set(audit):
    gaps, _ = audit(
        [
            ("Set", "```bash\nexport DEMO_REGION=eu\n```", ""),
            ("Use", "```bash\necho $DEMO_REGION\n```\n\nIt prints `eu`.", ""),
        ]
    )
    assert gaps == []


def test_no_way_to_verify_is_a_completeness_info_unless_the_command_is_an_install(audit):
    gaps, result = audit(
        [("Run", "```bash\npython3 -c 'print(42)'\n```", ""), ("Install", "```bash\npip install --help\n```", "")]
    )
    assert gaps == [(1, "completeness", "info")]
    assert "42" in result.gaps[0].context


def test_setup_commands_need_no_verification(audit):
    gaps, _ = audit([("Folder", "```bash\nmkdir demo\ncd demo\n```", "")])
    assert gaps == []


def test_documented_output_that_differs_is_a_warning(audit):
    gaps, result = audit([("Hello", "```bash\necho hello\n```\n\nIt prints `goodbye`.", "")])
    assert gaps == [(1, "execution_error", "warning")]
    assert "`goodbye`" in result.gaps[0].description


def test_an_output_block_is_compared_with_what_the_command_prints(audit):
    gaps, _ = audit([("List", "```console\n$ printf 'a\\nb\\n'\na\nb\n```", "")])
    assert gaps == []
    gaps, _ = audit([("List", "```console\n$ printf 'a\\nb\\n'\nx\ny\n```", "")])
    assert gaps == [(1, "execution_error", "warning")]


def test_vague_wording_in_the_readers_text_is_a_clarity_info_and_in_the_operations_nothing(audit):
    gaps, result = audit(
        [
            ("Tune", "Tune the database in the usual way.", "1. Apply the appropriate tuning"),
            ("Wrap up", "You are done.", "1. Apply the appropriate tuning as needed"),
        ]
    )
    assert gaps == [(1, "clarity", "info")]
    assert "'in the usual way'" in result.gaps[0].description


def test_a_reading_step_is_not_a_gap(audit):
    gaps, _ = audit([("About", "SQLite stores a whole database in one file.", "1. Read the explanation")])
    assert gaps == []


def test_vague_wording_beside_real_work_is_a_clarity_info(audit):
    gaps, _ = audit([("Vague", "Configure it as needed:\n\n```bash\necho done\n```\n\nIt prints `done`.", "")])
    assert gaps == [(1, "clarity", "info")]


def test_operations_the_reader_is_never_shown_still_run_and_are_not_a_readers_gap(audit):
    gaps, result = audit([("Hidden", "Set things up.", "1. Run: mkdir hidden-dir")])
    assert gaps == []
    actions = json.loads(result.execution_log)[0]["actions"]
    assert actions[0]["command"] == "mkdir hidden-dir" and actions[0]["exit_code"] == 0


def test_an_unexplained_placeholder_is_a_clarity_warning_and_is_not_run(audit):
    gaps, result = audit([("Key", "```bash\ncurl -H 'Authorization: <your-api-key>' http://127.0.0.1:9\n```", "")])
    assert gaps == [(1, "clarity", "warning")]
    assert "<your-api-key>" in result.gaps[0].description
    assert json.loads(result.execution_log)[0]["actions"][0]["skipped"]


def test_a_reference_without_a_link_is_a_cross_reference_info(audit):
    gaps, _ = audit([("Next", "For the schema, see the configuration guide.", "")])
    assert gaps == [(1, "cross_reference", "info")]
    gaps, _ = audit([("Next", "For the schema, see the [configuration guide](config.md).", "")])
    assert gaps == []


def test_files_the_step_names_are_written_where_the_shell_is(audit):
    gaps, _ = audit(
        [
            ("Folder", "```bash\nmkdir app && cd app\n```", ""),
            (
                "File",
                "Create `hello.py`:\n\n```python\nprint('hi from file')\n```\n\nRun it:\n\n```bash\npython3 hello.py\n```"
                "\n\nIt prints `hi from file`.",
                "",
            ),
        ]
    )
    assert gaps == []


def test_a_command_that_never_ends_runs_in_the_background(audit):
    gaps, result = audit([("Serve", "```bash\npython3 -m http.server 0\n```\n\nYou should see `Serving HTTP`.", "")])
    assert gaps == []
    assert json.loads(result.execution_log)[0]["actions"][0]["kind"] == "background"


def test_a_command_that_hangs_times_out_as_an_execution_error(audit):
    gaps, result = audit([("Hang", "```bash\nsleep 30\n```\n\nIt prints nothing.", "")], timeout=1.0)
    assert gaps == [(1, "execution_error", "critical")]
    assert "did not finish within 1 s" in result.gaps[0].description


def test_a_missing_python_package_is_a_prerequisite(audit):
    gaps, result = audit([("Import", "```python\nimport surely_not_installed_pkg\n```\n\nIt prints nothing.", "")])
    assert gaps == [(1, "prerequisite", "critical")]
    assert "`surely_not_installed_pkg`" in result.gaps[0].description


def test_a_fork_bomb_is_a_critical_execution_error_and_later_steps_run_unhindered(audit, pids_cgroup):
    import time

    started = time.monotonic()
    gaps, result = audit(
        [
            ("Bomb", "```bash\nbomb() { bomb | bomb & }; bomb\nsleep 30\n```\n\nIt prints nothing.", ""),
            ("Next", "```bash\nls / > /dev/null && echo fine\n```\n\nIt prints `fine`.", ""),
        ],
        max_processes=64,
        timeout=60,
    )
    assert gaps == [(1, "execution_error", "critical")]
    assert "process limit" in result.gaps[0].description
    # Stopped by the process limit, well before the 60 s time limit (a busy 2-core host has taken 35 s).
    assert time.monotonic() - started < 50


def test_shell_functions_and_aliases_the_tutorial_defines_are_not_missing_tools(audit):
    gaps, _ = audit(
        [
            ("Define", "```bash\ngreet() { echo \"hi $1\"; }\nalias ll='ls -l'\n```", ""),
            (
                "Use",
                "```bash\ngreet there\nfunction shout { echo HEY; }; shout\n```\n\nIt prints `hi there` and `HEY`.",
                "",
            ),
        ]
    )
    assert gaps == []


def test_a_doctest_session_runs_statement_by_statement_and_a_different_output_is_one_warning(audit):
    session = "```pycon\n>>> total = 2\n>>> total * 2\n4\n>>> total + 1\n4\n>>> total - 1\n0\n```"
    gaps, result = audit([("Count", session, "")])
    assert gaps == [(1, "execution_error", "warning")]
    assert "`total + 1` (and 1 more) differs" in result.gaps[0].description
    assert "Shown:\n4\nPrinted:" in result.gaps[0].context and "\n3" in result.gaps[0].context


def test_a_session_raising_the_traceback_it_shows_and_skipped_statements_are_fine(audit):
    session = (
        "```{doctest}\n>>> int('x')\nTraceback (most recent call last):\n  ...\nValueError: invalid literal\n"
        ">>> import time; time.sleep(100)  # doctest: +SKIP\n```"
    )
    gaps, result = audit([("Errors", session, "")])
    assert gaps == []
    actions = json.loads(result.execution_log)[0]["actions"]
    assert actions[1]["skipped"].startswith("marked `# doctest: +SKIP`")


def test_only_the_first_of_several_ways_is_followed(audit):
    content = (
        "With npm:\n\n```bash\nmkdir first-way\n```\n\nWith Yarn:\n\n```bash\nyarn create thing\n```\n\n"
        "Or by hand:\n\n```bash\nfalse\n```\n\nPer tool:\n\n```bash\n# npm\nmkdir second-way\n\n# pnpm\npnpm dlx x\n```"
    )
    gaps, result = audit([("Start", content, "1. Run: yarn create thing\n2. Run: pnpm dlx x")])
    assert gaps == []
    record = json.loads(result.execution_log)[0]
    assert [a["command"] for a in record["actions"]] == ["mkdir first-way", "mkdir second-way"]
    assert record["skipped_alternatives"] == ["yarn create thing", "false", "pnpm dlx x"]


def test_a_missing_tool_is_reported_once_and_the_equivalent_is_followed(audit):
    gaps, result = audit(
        [
            ("Run", "```bash\npnpx --version\n```\n\nIt prints a version.", ""),
            ("Again", "```bash\npnpx --version\n```\n\nIt prints a version.", ""),
        ]
    )
    assert gaps == [(1, "prerequisite", "warning")]
    assert "(`npx --version`) was followed instead" in result.gaps[0].description
    second = json.loads(result.execution_log)[1]["actions"]
    assert [(a["command"], a["exit_code"]) for a in second] == [("pnpx --version", 127), ("npx --version", 0)]


def test_a_server_the_step_starts_is_asked_for_the_urls_the_step_mentions(audit):
    serve = "```bash\nmkdir site && cd site && echo hello > index.html\npython3 -m http.server 8765\n```\n\n"
    gaps, result = audit(
        [
            ("Serve", serve + "Open http://localhost:8765/index.html to see `hello`.", ""),
            (
                "Serve again",
                "```bash\npython3 -m http.server 8765\n```\n\nThen open http://localhost:8765/missing.html.",
                "",
            ),
        ]
    )
    assert gaps == [(2, "execution_error", "critical")]
    assert "http://localhost:8765/missing.html answers HTTP 404" in result.gaps[0].description
    assert "[server log]" in result.gaps[0].context
    first = json.loads(result.execution_log)[0]["actions"]
    assert first[-1]["kind"] == "request" and first[-1]["exit_code"] == 0 and "hello" in first[-1]["output_tail"]


def test_a_later_failure_that_names_what_a_blocking_gap_left_missing_points_to_it(audit):
    gaps, result = audit(
        [
            ("Read", "```bash\ncat settings.toml\n```\n\nIt prints the settings.", ""),
            (
                "Use",
                "```bash\npython3 -c \"import sys; sys.exit('settings.toml is required')\"\n```\n\nIt prints nothing.",
                "",
            ),
            ("Read again", "```bash\ncat settings.toml\n```\n\nIt prints the settings.", ""),
        ]
    )
    assert gaps == [(1, "logical_flow", "critical"), (2, "execution_error", "info")]
    assert result.gaps[1].description.startswith("A consequence of step 1 (`settings.toml` is used here")
    assert (result.total_steps, result.completed_steps) == (3, 0), "each step was followed, none completed"


def test_a_later_failure_that_names_nothing_an_earlier_gap_left_missing_is_its_own_gap(audit):
    gaps, result = audit(
        [
            ("Read", "```bash\ncat settings.toml\n```\n\nIt prints the settings.", ""),
            ("Use", "```bash\npython3 -c 'import sys; sys.exit(3)'\n```\n\nIt prints nothing.", ""),
        ]
    )
    assert gaps == [(1, "logical_flow", "critical"), (2, "execution_error", "critical")]
    assert "consequence" not in result.gaps[1].description


def test_a_steps_commands_after_a_failed_one_still_run_unless_they_need_it(audit):
    gaps, result = audit(
        [
            (
                "Two commands",
                "```bash\ncat settings.toml\necho second > second.txt\n```\n\nThe second writes `second.txt`.",
                "",
            ),
            ("Into a folder", "```bash\ncd missing-folder\necho third > third.txt\n```\n\nIt writes `third.txt`.", ""),
        ]
    )
    first, second = (step["actions"] for step in json.loads(result.execution_log))
    assert [a["exit_code"] for a in first] == [1, 0]
    assert [a["command"] for a in second] == ["cd missing-folder"]  # the next one would run in the wrong folder


def test_an_unreachable_host_is_an_environment_note_not_a_gap(audit):
    fetch = "```bash\npython3 -c \"import urllib.request; urllib.request.urlopen('http://stackbench-no-such-host.invalid/')\"\n```"
    gaps, result = audit([("Fetch", fetch + "\n\nIt prints nothing.", "")])
    assert gaps == []
    notes = json.loads(result.execution_log)[0]["environment_notes"]
    assert len(notes) == 1 and "could not reach the network from the auditing machine" in notes[0]


def test_updating_a_python_file_replaces_the_definition_and_keeps_the_rest(audit):
    gaps, result = audit(
        [
            ("Write", 'Create `app.py`:\n\n```python\ndef greet():\n    return "hi"\n\nprint(greet())\n```', ""),
            (
                "Change",
                'Update `app.py`:\n\n```python\ndef greet():\n    return "hello"\n```\n\n'
                "```bash\npython3 app.py\n```\n\nIt prints:\n\n```text\nhello\n```",
                "",
            ),
        ]
    )
    assert gaps == []
    actions = json.loads(result.execution_log)[1]["actions"]
    assert actions[0]["output_tail"].startswith("merged the block into app.py")
    assert actions[1]["output_tail"].strip() == "hello"


def test_a_command_that_cannot_open_a_terminal_is_a_question_the_page_leaves_unanswered(audit):
    code = "import sys; print('SystemError [ERR_TTY_INIT_FAILED]: TTY initialization failed'); sys.exit(1)"
    gaps, result = audit([("Init", f'```bash\npython3 -c "{code}"\n```\n\nIt asks a few questions.', "")])
    assert gaps == [(1, "clarity", "info")]
    assert "asks questions the page does not answer" in result.gaps[0].description


def test_nodes_tools_are_assumed_on_the_page_of_a_library_it_gets_from_npm(make_walkthrough, tmp_path):
    def gaps_of(text):
        path = make_walkthrough([("Check", text, "")], name=f"wt_node_{len(text)}")
        result = run_audit(audit_request(path, tmp_path / str(len(text)), "demo-cli", "1.0"))
        return [(g.gap_type, g.severity) for g in result.gaps]

    assert (
        gaps_of("Run it with `npx demo-cli`. First:\n\n```bash\nnpm --version\n```\n\nIt prints a version number.")
        == []
    )
    assert gaps_of("First:\n\n```bash\nnpm --version\n```\n\nIt prints a version number.") == [("prerequisite", "info")]


def test_output_shown_from_before_the_steps_changed_things_is_a_logical_flow_gap(audit):
    gaps, result = audit(
        [
            (
                "Start",
                "Create `main.py`:\n\n```python\nprint('Hello World')\n```\n\n```console\n$ python3 main.py\nHello World\n```\n",
                "",
            ),
            (
                "Grow",
                "Update `main.py`:\n\n```python\nimport sys\nprint('Hello', sys.argv[1])\n```\n\n"
                "```console\n$ python3 main.py Ada\nHello Ada\n```\n",
                "",
            ),
            ("Again", "Run it as before:\n\n```console\n$ python3 main.py\nHello World\n```\n", ""),
            ("Once more", "Run it once more:\n\n```console\n$ python3 -B main.py\nHello World\n```\n", ""),
        ]
    )
    assert gaps == [(3, "logical_flow", "warning"), (4, "logical_flow", "warning")]
    assert "printed at step 1, but the steps since then changed what it runs" in result.gaps[0].description


def test_the_same_failure_from_other_commands_is_one_gap_and_a_different_one_is_its_own(audit):
    fail = "python3 -c \"import sys; sys.exit('Error: unknown option --{}')\""
    gaps, result = audit(
        [
            ("One", f"```bash\n{fail.format('fast')}\n{fail.format('fast')} --again\n```\n\nIt prints nothing.", ""),
            (
                "Two",
                f"```bash\n{fail.format('fast')} --once-more\n{fail.format('slow')}\n```\n\nIt prints nothing.",
                "",
            ),
        ]
    )
    assert gaps == [(1, "execution_error", "critical"), (2, "execution_error", "critical")]
    assert "--slow" in result.gaps[1].description
