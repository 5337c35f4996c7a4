"""Launching into a sandbox: the launch shell, what bubblewrap reports back, the filter handed to it."""

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from stackbench.sandbox import seccomp_filter
from stackbench.sandbox.launch import LAUNCH, RESTORE_STDERR, first_child, read_info, seccomp_pipe
from stackbench.sandbox.prerequisites import SandboxUnavailable


@pytest.mark.slow
def test_what_the_launcher_prints_reaches_the_command_s_stderr_but_keyctl_s_notice_does_not(make_sandbox):
    sandbox = make_sandbox()
    refused = sandbox.spawn(["true"], cwd="/no/such/folder", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, printed = refused.popen.communicate(timeout=30)
    assert refused.popen.returncode != 0 and b"chdir" in printed and b"keyring" not in printed
    ran = sandbox.spawn(["sh", "-c", "echo out; echo err >&2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert ran.popen.communicate(timeout=30) == (b"out\n", b"err\n")


def test_the_launch_shell_joins_the_groups_named_and_parks_stderr_until_it_is_restored(tmp_path):
    procs = tmp_path / "cgroup.procs"
    launched = subprocess.Popen(
        ["/bin/bash", "-c", LAUNCH, "launch", "9", str(procs), "--"]
        + ["/bin/sh", "-c", 'echo parked >&2; exec "$@"', "sh"]
        + ["/bin/bash", "-c", RESTORE_STDERR, "restore", "9", "/bin/sh", "-c", "echo back >&2"],
        stderr=subprocess.PIPE,
        text=True,
    )
    _, printed = launched.communicate(timeout=30)
    assert launched.returncode == 0 and printed == "back\n"
    assert procs.read_text().strip() == str(launched.pid)  # every step execs: one process throughout


def test_a_group_that_cannot_be_joined_stops_the_launch():
    done = subprocess.run(
        ["/bin/bash", "-c", LAUNCH, "launch", "-", "/no/such/cgroup.procs", "--", "true"], capture_output=True
    )
    assert done.returncode == 125


def test_what_bubblewrap_reports_is_read_even_when_it_comes_in_pieces():
    read, write = os.pipe()
    os.write(write, b'{"child-pid": ')

    def rest():
        time.sleep(0.1)
        os.write(write, b"42}")
        os.close(write)

    threading.Thread(target=rest).start()
    assert read_info(read) == {"child-pid": 42}


def test_a_launcher_that_reports_nothing_is_an_error_rather_than_a_hang():
    read, write = os.pipe()
    os.close(write)
    with pytest.raises(ValueError):
        read_info(read)


def test_the_first_child_of_a_process_is_found_and_a_process_gone_has_none():
    parent = subprocess.Popen(["sh", "-c", "sleep 600 & wait"], start_new_session=True)
    try:
        assert Path(f"/proc/{first_child(parent.pid)}/stat").exists()
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait()
    with pytest.raises(SandboxUnavailable):
        first_child(parent.pid)


def test_bubblewrap_is_handed_the_compiled_filter_through_a_pipe():
    read = seccomp_pipe()
    with os.fdopen(read, "rb") as handed:
        assert handed.read() == seccomp_filter.program()
