"""The page runner's process in the sandbox: stuck, flooding or forking examples, and what it reads back."""

import resource

import pytest

from stackbench.docs import python_code
from stackbench.formats.walkthrough import CodeExample
from stackbench.validation.batch import validate_document
from stackbench.validation.document_sandbox import DocumentSandbox
from stackbench.validation.page_process import PageProcess, materialize_request, script_request, session_request
from stackbench_site.configuration import sandbox_settings
from tests.stackbench.validation.example_pages import analysis, page, script


def test_a_sessions_statements_are_numbered_by_their_lines_on_the_page():
    plain = CodeExample(library="sbdemo", code=">>> 1 + 1\n2\n", line=40, style="doctest")
    request = session_request("guide.md", plain, 5)
    assert (request["op"], request["name"], request["prefix"], request["line"]) == ("session", "guide.md:40", "", 39)
    typed_first = CodeExample(library="sbdemo", code="import math\n>>> math.floor(2.5)\n2\n", line=40, style="doctest")
    request = session_request("guide.md", typed_first, 5)
    assert (request["prefix"], request["line"], request["text"]) == ("import math", 40, ">>> math.floor(2.5)\n2\n")


def test_a_script_that_awaits_at_top_level_is_run_in_an_event_loop():
    code = "import asyncio\nawait asyncio.sleep(0)\n"
    example = CodeExample(library="sbdemo", code=code, line=7)
    request = script_request(example, 2, python_code.parse(code), [], 5, "/state", record_prints=False)
    assert request["async"] and request["name"] == "example_2_line_7.py" and request["state"] == "/state"
    plain = CodeExample(library="sbdemo", code="print(1)\n", line=7)
    assert not script_request(plain, 2, python_code.parse(plain.code), [], 5, "/state", False)["async"]


def test_a_script_joins_the_pages_process_under_its_own_name():
    example = CodeExample(library="sbdemo", code="x = 1\n", line=3)
    assert materialize_request(example, 0, 5) == {
        "op": "materialize",
        "name": "example_0_line_3.py",
        "code": "x = 1\n",
        "timeout": 5,
    }


@pytest.mark.slow
def test_an_example_that_keeps_running_is_stopped_and_the_next_one_still_runs(offline):
    offline.timeout = 1
    hanging, after = validate_document(analysis("import time\ntime.sleep(30)", "print('after')"), offline).results
    assert hanging.status == "skipped" and "did not finish within 1 s" in hanging.error_message
    assert after.status == "success" and after.execution_output == "after\n"


@pytest.mark.slow
def test_a_runner_started_anew_reaps_the_old_one_first(offline):
    # An old launcher left unreaped stays charged to the sandbox's process count: ending the sandbox's processes
    # then waits out its whole time limit for it.
    document = DocumentSandbox(offline, "guide")
    try:
        runner = PageProcess(document, {"cwd": document.sandbox.work, "preload": [], "output_cap": 1000}, lambda: False)
        old = runner.popen
        runner.restart()
        assert old.returncode is not None and runner.request({"op": "environment"}, 10)["status"] == "ok"
        runner.close()
    finally:
        document.close()


@pytest.mark.slow
def test_a_second_runner_of_the_page_is_no_stray_of_the_first(offline):
    # A failed example's second chance runs in a runner of its own beside the page's: the cleanup after a request
    # to either one leaves the other running.
    document = DocumentSandbox(offline, "guide")
    start = {"cwd": document.sandbox.work, "preload": [], "output_cap": 1000}
    try:
        page_runner = PageProcess(document, start, lambda: False)
        second_chance = PageProcess(document, start, lambda: False)
        assert second_chance.request({"op": "environment"}, 10)["status"] == "ok"
        assert page_runner.popen.poll() is None
        assert page_runner.request({"op": "environment"}, 10)["status"] == "ok"
        assert second_chance.popen.poll() is None
        # Ended, the second one lingers a moment before it is reaped: no stray that would end the whole sandbox.
        second_chance.close()
        running = page_runner.popen
        assert page_runner.request({"op": "environment"}, 10)["status"] == "ok"
        assert page_runner.popen is running and running.poll() is None
        page_runner.close()
    finally:
        document.close()


@pytest.mark.slow
def test_output_is_capped(offline):
    offline.output_cap = 2000
    result = validate_document(analysis("print('x' * 1_000_000)"), offline).results[0]
    assert result.status == "success" and len(result.execution_output) < 2200 and "bytes cut" in result.execution_output


@pytest.mark.slow
def test_examples_see_none_of_the_apps_secrets(offline, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "never-show-me")
    result = validate_document(analysis("import os\nprint(sorted(os.environ.items()))"), offline).results[0]
    assert "never-show-me" not in result.execution_output


@pytest.mark.slow
def test_an_example_that_forks_without_end_is_killed_and_the_next_example_still_runs(offline, pids_cgroup):
    import time

    offline.sandbox, offline.timeout = sandbox_settings(max_processes=64), 30
    bomb = "import os, time\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        time.sleep(0.01)"
    started = time.monotonic()
    first, second = validate_document(analysis(bomb, "print('after')"), offline).results
    assert (first.status, first.severity) == ("failure", "error") and "limit of 64 processes" in first.error_message
    assert second.status == "success" and second.execution_output == "after\n"
    assert time.monotonic() - started < 20


@pytest.mark.slow
def test_processes_an_example_leaves_behind_are_killed_before_the_next_one(offline, pids_cgroup):
    offline.sandbox, offline.timeout = sandbox_settings(max_processes=64), 30
    detached_bomb = "import subprocess\nsubprocess.Popen(['bash', '-c', 'b() { b | b & }; b'], start_new_session=True)"
    first, second = validate_document(
        analysis(detached_bomb, "import subprocess\nsubprocess.run(['true'])"), offline
    ).results
    # The bomb may reach the limit before the example's answer does (a run gets only its share of the CPUs): then
    # the example that started it is the one that failed, never the next.
    assert first.status == "success" or "limit of 64 processes" in first.error_message, first
    assert second.status == "success", second.error_message


@pytest.mark.slow
def test_what_the_runner_and_its_setup_print_is_read_from_files_the_page_cannot_replace(offline, root_only):
    _, secret = root_only
    relink = (
        "import glob, os\n"
        "for path in glob.glob('/run/stackbench/*.log'):\n"
        f"    os.remove(path); os.symlink('{secret}', path)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    result = validate_document(page(script(relink, 5), script("print('next')\n#> next\n", 10)), offline)
    assert "ROOT-ONLY" not in result.model_dump_json()
    assert result.results[1].status == "success"


@pytest.mark.slow
def test_a_flood_into_the_runners_own_pipe_costs_bounded_memory(offline):
    # Every pipe the runner's process may write to, its answers to the worker among them.
    flood = (
        "import fcntl, os\n"
        "pipes = [fd for fd in range(3, 64) if os.path.exists(f'/proc/self/fd/{fd}')\n"
        "         and os.readlink(f'/proc/self/fd/{fd}').startswith('pipe:')\n"
        "         and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY]\n"
        "chunk = b'x' * 2**20\n"
        "while True:\n"
        "    for fd in pipes:\n"
        "        os.write(fd, chunk)\n"
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = validate_document(page(script(flood, 5), script("print('after')\n#> after\n", 10)), offline)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 300_000  # kilobytes
    assert result.results[0].status == "failure", result.results[0].error_message
    assert result.results[1].status == "success"
