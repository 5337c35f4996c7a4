"""A sandbox's control groups: a ceiling on processes that counts what it refused, CPU shares, and the groups dead
workers left."""

import subprocess
import sys

import pytest

from stackbench.sandbox.cgroups import FOLDER, Cgroups, _parent_for, sweep_leftovers


def test_processes_left_in_a_dead_workers_group_are_ended_and_the_group_removed():
    parent = _parent_for("pids")
    if parent is None:
        pytest.skip("needs a pids cgroup the worker may create groups in")
    group = parent / FOLDER / "999999999-leftover"
    group.mkdir(parents=True, exist_ok=True)
    lingering = subprocess.Popen(["sleep", "600"], start_new_session=True)
    (group / "cgroup.procs").write_text(str(lingering.pid))
    sweep_leftovers()
    assert lingering.wait(timeout=5) == -9
    assert not group.exists()


@pytest.mark.slow
def test_a_run_gets_only_its_share_of_the_cpus(terminal):
    if _parent_for("cpu") is None:
        pytest.skip("the machine lets the worker make no cpu cgroup")
    term = terminal(cpus=0.5, timeout=30)
    busy = "for i in 1 2 3 4; do timeout 2 sh -c 'while :; do :; done' & done; wait"
    timed = term.run(f"TIMEFORMAT='%U %S'; time ( {busy} )").output.split()
    used = float(timed[-2]) + float(timed[-1])
    assert used < 1.5, f"{used} s of CPU in 2 s with half a CPU"


FLOOD = """
import os, sys, time
with open(sys.argv[1], "w") as procs:
    procs.write(str(os.getpid()))
for _ in range(20):
    try:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
    except OSError:
        pass
print("forked", flush=True)
time.sleep(600)
"""


def test_a_pids_group_refuses_forks_past_its_ceiling_counts_them_and_kills_everything_in_it(pids_cgroup):
    groups = Cgroups.create(8, 2**30)
    try:
        flood = subprocess.Popen(
            [sys.executable, "-c", FLOOD, str(groups.pids / "cgroup.procs")], stdout=subprocess.PIPE, text=True
        )
        assert flood.stdout.readline() == "forked\n"
        assert len(groups.processes()) == 8 and groups.refused_forks() > 0
        assert "pids" in groups.describe()
        assert groups.kill_all(wait=False) and groups.processes() == []
        assert flood.wait(timeout=5) == -9  # reaped here: the group counts it until then
    finally:
        groups.kill_all(wait=False)
        groups.remove_when_empty()
