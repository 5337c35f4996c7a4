"""What confined sandboxes need of the machine, and the refusal naming the fix when it lacks something."""

import pytest

from stackbench.sandbox import prerequisites
from stackbench.sandbox.prerequisites import SandboxUnavailable, bubblewrap_problem, tool
from stackbench.sandbox.sandbox import open_sandbox
from stackbench.sandbox.settings import SandboxSettings


def test_without_bubblewrap_sandboxes_are_refused_with_the_fix(monkeypatch):
    monkeypatch.setattr(prerequisites, "tool", lambda name: name)
    prerequisites.bubblewrap_problem.cache_clear()
    try:
        with pytest.raises(
            SandboxUnavailable, match="install Debian's bubblewrap, slirp4netns.*STACKBENCH_UNCONFINED=1"
        ):
            open_sandbox(SandboxSettings(), "x")
    finally:
        monkeypatch.undo()
        prerequisites.bubblewrap_problem.cache_clear()
    assert bubblewrap_problem() is None


def test_system_tools_are_found_in_the_systems_own_folders_whatever_path_the_environment_names(monkeypatch, tmp_path):
    planted = tmp_path / "sh"
    planted.write_text("#!/bin/sh\n")
    planted.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert tool("sh") in ("/usr/bin/sh", "/bin/sh")
    assert tool("no-such-tool-anywhere") == "no-such-tool-anywhere"
