"""`stackbench up` as a newcomer runs it: the web app, a worker and the recovery schedule, kept alive."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.builders import BASE_DIR, dies_with_the_test_run

pytestmark = pytest.mark.slow


def children_of(pid: int) -> dict[int, str]:
    found = {}
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
            if int(fields["PPid"]) == pid:
                found[int(status.parent.name)] = (status.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, KeyError, ValueError):
            continue
    return found


def wait_until(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def test_up_starts_the_recovery_schedule_again_when_it_dies(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(STACKBENCH_VAR=str(tmp_path / "var"), DJANGO_SETTINGS_MODULE="stackbench_site.settings")
    log = tmp_path / "up.log"
    with open(log, "w") as out:
        up = subprocess.Popen(
            [sys.executable, "-m", "stackbench_site.cli", "up", "--port", str(port), "--workers", "1", "--no-sample"],
            cwd=BASE_DIR,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=dies_with_the_test_run,
        )
    try:
        wait_until(lambda: "Stackbench is running" in log.read_text(), 120, "up to start")
        beat = wait_until(
            lambda: next((pid for pid, cmd in children_of(up.pid).items() if " beat " in cmd), None), 30, "the beat"
        )
        os.kill(beat, signal.SIGKILL)
        wait_until(lambda: "The beat stopped" in log.read_text(), 30, "up to notice the dead beat")
        again = wait_until(
            lambda: next((p for p, cmd in children_of(up.pid).items() if " beat " in cmd and p != beat), None),
            30,
            "a new beat",
        )
        assert again != beat and up.poll() is None, "the web app and up kept running"
    finally:
        os.killpg(up.pid, signal.SIGTERM)
        try:
            up.wait(timeout=40)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, signal.SIGKILL)
            up.wait()
