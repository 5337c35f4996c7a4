import time

import pytest

from audits.engines.auditors.shell import Terminal
from audits.engines.sandbox import HOME, WORK
from tests.builders import processes_of, wait_for


@pytest.fixture
def terminal(make_sandbox):
    term = Terminal(make_sandbox(timeout=5, output_bytes=4000))
    yield term
    term.close()


def test_cd_and_exports_carry_over_like_one_terminal(terminal):
    assert terminal.run("mkdir -p app && cd app && export GREETING=hello").ok
    result = terminal.run('echo "$GREETING from $(basename "$PWD")"')
    assert result.output == "hello from app\n"
    assert terminal.cwd == f"{WORK}/app" and terminal.cwd_host == terminal.work_dir / "app"


def test_an_activated_virtualenv_carries_over_to_python_snippets(terminal):
    assert terminal.run("python3 -m venv .venv && . .venv/bin/activate", timeout=60).ok
    result = terminal.run_python("import sys\nprint(sys.prefix)", "<step>")
    assert result.output.strip() == f"{WORK}/.venv"


def test_a_failing_command_reports_its_status_and_output(terminal):
    result = terminal.run("echo before; ls /definitely/missing")
    assert result.exit_code == 2 and "before" in result.output and "No such file" in result.output
    assert result.evidence().startswith("$ echo before; ls /definitely/missing\n(exit 2 after")


def test_a_command_that_hangs_is_killed_and_the_session_goes_on_in_the_same_place(terminal):
    terminal.run("mkdir deep && cd deep && export KEPT=yes")
    started = time.monotonic()
    result = terminal.run("sleep 60", timeout=1)
    assert result.timed_out and time.monotonic() - started < 5
    after = terminal.run('echo "$KEPT $(basename "$PWD")"')
    assert after.output == "yes deep\n"


def test_commands_that_read_stdin_get_end_of_file_instead_of_hanging(terminal):
    result = terminal.run("read answer; echo got:$answer", timeout=3)
    assert result.ok and result.output == "got:\n"


def test_a_shell_exit_starts_a_new_shell(terminal):
    assert terminal.run("exit 3").exit_code == 3
    assert terminal.run("echo back").output == "back\n"


def test_huge_output_is_capped_keeping_head_and_tail(terminal):
    result = terminal.run("seq 1 200000")
    assert result.truncated and len(result.output) < 5000
    assert result.output.startswith("1\n2\n") and result.output.rstrip().endswith("200000")
    assert "bytes cut" in result.output


def test_python_snippets_share_state_and_report_tracebacks(terminal):
    assert terminal.run_python("value = 41", "<a>").ok
    result = terminal.run_python("print(value + 1)\nmissing_name", "<b>")
    assert result.exit_code == 1 and "42" in result.output
    assert "NameError: name 'missing_name' is not defined" in result.output
    assert 'File "<b>", line 2' in result.output


def test_top_level_await_runs_in_a_python_snippet(terminal):
    result = terminal.run_python("import asyncio\nawait asyncio.sleep(0)\nprint('awaited')", "<c>")
    assert result.ok and result.output == "awaited\n"


def test_a_python_snippet_that_hangs_is_stopped(terminal):
    result = terminal.run_python("import time\ntime.sleep(60)", "<d>", timeout=1)
    assert result.timed_out
    assert terminal.run_python("print('fresh')", "<e>").output == "fresh\n"


def test_background_servers_keep_running_and_answer_until_the_sandbox_ends(terminal):
    result = terminal.start_background("python3 -m http.server 8123", settle_seconds=1.5)
    assert result.ok and "still running" in result.output
    answer = terminal.run(
        "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8123/').status)\""
    )
    assert answer.output.strip() == "200"
    uid = terminal.sandbox.uid
    assert processes_of(uid)
    terminal.close()
    terminal.sandbox.close()
    wait_for(lambda: not processes_of(uid), timeout=5, message="the server to end with its sandbox")


def test_a_background_command_that_dies_is_a_failure_with_its_log(terminal):
    result = terminal.start_background("echo starting; exit 4", settle_seconds=1)
    assert result.exit_code == 4 and "starting" in result.output


def test_files_can_be_written_only_in_the_readers_own_folders(terminal):
    assert terminal.resolve_inside("notes/a.txt") == f"{WORK}/notes/a.txt"
    assert terminal.resolve_inside("../.bashrc") == f"{HOME}/.bashrc"
    assert terminal.resolve_inside("~/.config/x") == f"{HOME}/.config/x"
    assert terminal.resolve_inside("../../../etc/passwd") is None
    assert terminal.resolve_inside("/etc/passwd") is None
