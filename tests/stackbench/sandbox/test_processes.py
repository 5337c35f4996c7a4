"""Ending a sandbox's processes: a command's process group, and the strays a finished command leaves behind."""

import os
import subprocess
from pathlib import Path

import pytest

from stackbench.sandbox.processes import Spawned, processes_in, strays_gone
from tests.builders import wait_for


@pytest.mark.slow
def test_strays_are_killed_around_a_process_that_must_live_on(make_sandbox):
    sandbox = make_sandbox()
    kept = sandbox.spawn(["sleep", "600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    stray = sandbox.run(["bash", "-c", "setsid sleep 600 >/dev/null 2>&1 & echo $!"], timeout=10)
    assert stray.returncode == 0
    sandbox.kill_strays(keep={kept.pid})
    left = sandbox.run(["bash", "-c", "ps -eo args= | grep -c '^sleep 600'"], timeout=10).stdout.strip()
    assert left == "1", "only the kept sleep is left"
    assert kept.popen.poll() is None
    kept.kill()


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def test_killing_a_spawned_command_ends_its_whole_process_group():
    launcher = subprocess.Popen(
        ["sh", "-c", "sleep 600 & echo $!; wait"], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    background = int(launcher.stdout.readline())
    Spawned(launcher, launcher.pid).kill()
    assert launcher.wait(timeout=5) == -9
    wait_for(lambda: _gone(background), timeout=30, message="the command's background sleep to end")


def test_the_processes_of_a_pid_namespace_are_found_by_its_inode():
    mine = os.stat("/proc/self/ns/pid").st_ino
    assert os.getpid() in processes_in(mine)
    assert processes_in(0) == []
    assert strays_gone(mine, set(), one_by_one=False) is False  # only looked for: nothing is killed


@pytest.mark.slow
def test_without_a_process_to_keep_a_leftover_daemon_takes_the_whole_tree_with_it(make_sandbox):
    sandbox = make_sandbox()
    assert sandbox.run(["bash", "-c", "setsid sleep 600 >/dev/null 2>&1 &"], timeout=10).returncode == 0
    sandbox.kill_strays()
    left = sandbox.run(["bash", "-c", "ps -eo args= | grep -c '^sleep 600'"], timeout=10).stdout.strip()
    assert left == "0"
