"""Each rule of the rule-based auditor, on a small walkthrough followed for real."""

import json

import pytest

from audits.engines.auditors.run import run_audit
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


def test_a_tool_never_mentioned_is_a_prerequisite_warning_once(audit):
    gaps, _ = audit(
        [
            ("Check", "```bash\ngit --version\n```\n\nIt prints the version.", ""),
            ("Again", "```bash\ngit --version\n```\n\nIt prints the version.", ""),
        ]
    )
    assert gaps == [(1, "prerequisite", "warning")]


def test_a_tool_the_tutorial_mentions_is_fine(audit):
    gaps, _ = audit([("Check", "You need git installed.\n\n```bash\ngit --version\n```\n\nIt prints the version.", "")])
    assert gaps == []


def test_an_environment_variable_nobody_sets_is_a_prerequisite(audit):
    gaps, result = audit([("Token", '```bash\necho "token=$DEMO_API_TOKEN"\n```\n\nIt prints the token.', "")])
    assert gaps == [(1, "prerequisite", "warning")]
    assert "`DEMO_API_TOKEN` must be set" in result.gaps[0].description


def test_exported_variables_carry_over_and_count_as_set(audit):
    gaps, _ = audit(
        [
            ("Set", "```bash\nexport DEMO_REGION=eu\n```", ""),
            ("Use", "```bash\necho $DEMO_REGION\n```\n\nIt prints `eu`.", ""),
        ]
    )
    assert gaps == []


def test_no_way_to_verify_is_a_completeness_info(audit):
    gaps, result = audit([("Run", "```bash\npython3 -c 'print(42)'\n```", "")])
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


def test_a_step_with_nothing_concrete_is_a_clarity_warning(audit):
    gaps, result = audit([("Tune", "Tune the database in the usual way.", "1. Apply the appropriate tuning")])
    assert gaps == [(1, "clarity", "warning")]
    assert "'in the usual way'" in result.gaps[0].context


def test_a_reading_step_is_not_a_gap(audit):
    gaps, _ = audit([("About", "SQLite stores a whole database in one file.", "1. Read the explanation")])
    assert gaps == []


def test_vague_wording_beside_real_work_is_a_clarity_info(audit):
    gaps, _ = audit([("Vague", "Configure it as needed:\n\n```bash\necho done\n```\n\nIt prints `done`.", "")])
    assert gaps == [(1, "clarity", "info")]


def test_operations_the_reader_is_never_shown_are_a_clarity_warning_and_still_run(audit):
    gaps, result = audit([("Hidden", "Set things up.", "1. Run: mkdir hidden-dir")])
    assert gaps == [(1, "clarity", "warning")]
    assert "`mkdir hidden-dir`" in result.gaps[0].description
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
    assert time.monotonic() - started < 20


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
