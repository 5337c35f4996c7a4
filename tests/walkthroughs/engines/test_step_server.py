"""The old module path of the step server, kept for one release: what scripts start must still start."""

import subprocess
import sys

from tests.builders import BASE_DIR


def test_the_old_module_path_still_starts_the_step_server():
    done = subprocess.run(
        [sys.executable, "-m", "walkthroughs.engines.step_server", "--help"],
        capture_output=True,
        text=True,
        cwd=BASE_DIR,
        timeout=60,
    )
    new = subprocess.run(
        [sys.executable, "-m", "stackbench.auditing.step_server", "--help"],
        capture_output=True,
        text=True,
        cwd=BASE_DIR,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "The MCP step server" in done.stdout and "--allowed-root" in done.stdout
    assert done.stdout == new.stdout
