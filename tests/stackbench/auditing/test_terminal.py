import resource
import time

import pytest

from stackbench.auditing.terminal import Terminal
from stackbench.sandbox.reader import HOME, STATE, WORK
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
    assert terminal.cwd == f"{WORK}/app" and terminal.sandbox.files.kind(terminal.cwd) == "folder"


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
    assert result.timed_out and time.monotonic() - started < 30  # killed, not left to sleep its 60 s
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
    wait_for(lambda: not processes_of(uid), timeout=30, message="the server to end with its sandbox")


def test_a_background_command_that_dies_is_a_failure_with_its_log(terminal):
    result = terminal.start_background("echo starting; exit 4", settle_seconds=1)
    assert result.exit_code == 4 and "starting" in result.output


def test_files_can_be_written_only_in_the_readers_own_folders(terminal):
    assert terminal.resolve_inside("notes/a.txt") == f"{WORK}/notes/a.txt"
    assert terminal.resolve_inside("../.bashrc") == f"{HOME}/.bashrc"
    assert terminal.resolve_inside("~/.config/x") == f"{HOME}/.config/x"
    assert terminal.resolve_inside("../../../etc/passwd") is None
    assert terminal.resolve_inside("/etc/passwd") is None


def test_a_servers_log_relinked_to_a_root_only_file_is_never_read_back(terminal, root_only):
    _, secret = root_only
    log, status = f"{STATE}/background-0.log", f"{STATE}/background-0.status"
    # The server's own command swaps its log (and its exit status) for links to a host file the worker can read.
    started = terminal.start_background(f"rm -f {log}; ln -s {secret} {log}; ln -s {secret} {status}; sleep 60", 1)
    assert "ROOT-ONLY" not in started.output
    assert "ROOT-ONLY" not in terminal.server_log()


def test_what_a_snippet_prints_is_read_from_a_file_it_cannot_replace(terminal, root_only):
    _, secret = root_only
    planted = terminal.run_python(
        f"import glob, os\nfor path in glob.glob('{STATE}/*'):\n"
        f"    os.remove(path); os.symlink('{secret}', path)\nprint('relinked')",
        "<step 1>",
    )
    assert planted.ok, planted.output
    after = terminal.run_python("print('after')", "<step 2>")
    assert after.output == "after\n"
    assert "ROOT-ONLY" not in planted.output + after.output


def test_the_workers_environment_never_reaches_a_snippet_through_a_planted_link(terminal):
    # What /proc/self/environ shows: the worker's environment as it started (DATABASE_URL, keys in production).
    with open("/proc/self/environ", "rb") as own:
        started_with = {item.split(b"=", 1)[0].decode() for item in own.read().split(b"\0") if b"=" in item}
    workers_own = started_with - set(terminal.env) - {"PWD", "OLDPWD", "SHLVL", "_"}  # every shell sets these
    if not workers_own:
        pytest.skip("the worker started with no variable the reader lacks")
    assert terminal.run(f"ln -sf /proc/self/environ {STATE}/env0").ok
    result = terminal.run_python("import os\nprint('\\n'.join(sorted(os.environ)))", "<step>")
    assert result.ok and not workers_own & set(result.output.split()), workers_own & set(result.output.split())
    assert "HOME" in result.output.split()  # the reader's own environment, as the shell started


def test_a_log_that_became_a_device_or_a_fifo_costs_no_memory_and_no_wait(terminal):
    log = f"{STATE}/background-0.log"
    assert terminal.start_background("sleep 60", 0.2).ok
    for planted in (f"ln -sf /dev/zero {log}", f"rm -f {log} && mkfifo {log}"):
        assert terminal.run(planted).ok
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.monotonic()
        assert terminal.server_log() == "" and terminal.wait_for_url(0.5) is None
        assert time.monotonic() - started < 10  # a FIFO waited on would hang for ever
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # kilobytes
