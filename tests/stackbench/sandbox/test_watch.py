"""Why a running command must stop: out of time, cancelled, or filling the sandbox's disk (blocks or files)."""

import time

import pytest

from stackbench.sandbox.watch import Watch

pytestmark = pytest.mark.slow


def test_filling_the_disk_stops_the_command_and_a_full_disk_takes_no_more(terminal):
    term = terminal(disk_bytes=50 * 1024**2, file_size_bytes=20 * 1024**2, timeout=60)
    result = term.run("for i in $(seq 1 20); do head -c 10000000 /dev/urandom > f$i.bin; sleep 0.3; done")
    assert result.disk_limit and "filled the sandbox's disk" in result.output
    # As on a full disk: what adds nothing still runs, what writes more is stopped at once.
    assert term.run("echo fresh").output == "fresh\n"
    started = time.monotonic()
    assert term.run("head -c 19000000 /dev/urandom > more.bin; sleep 30").disk_limit
    assert time.monotonic() - started < 10
    assert term.run("rm -f f*.bin more.bin && echo freed").output == "freed\n"
    assert term.run("head -c 10000000 /dev/urandom > again.bin && echo written").output == "written\n"


def test_a_step_making_files_without_end_is_stopped_near_the_file_limit(terminal):
    term = terminal(max_files=20_000, timeout=120)
    maker = "python3 -c \"import os\nfor i in range(10**7): open(f'f{i}', 'w').close()\""
    result = term.run(f"mkdir many && cd many && {maker}")
    assert result.disk_limit and "filled the sandbox's disk" in result.output
    made = int(term.run("ls -f ~/work/many | wc -l").output)
    assert 20_000 < made < 20_000 + 60_000, made
    # Each later step starts over the limit and may not add: a dozen steps cannot each add as many again.
    for _ in range(3):
        assert term.run(f"cd ~/work/many && {maker.replace('f{i}', 'g{i}')}").disk_limit
    assert int(term.run("ls -f ~/work/many | wc -l").output) < made + 3 * 10_000


def test_a_command_past_its_time_is_stopped_for_that_before_anything_else(make_sandbox):
    sandbox = make_sandbox()
    assert Watch(sandbox, 60, lambda: False).interruption() is None
    assert Watch(sandbox, 60, lambda: True).interruption() == "cancelled"
    late = Watch(sandbox, 0.01, lambda: True)
    time.sleep(0.05)
    assert late.interruption() == "timeout"
