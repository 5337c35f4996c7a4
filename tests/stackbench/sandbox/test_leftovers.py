"""What dead workers leave behind is swept; what live ones hold, and what a link points to, is not."""

import os
import subprocess

import pytest

from stackbench.sandbox.leftovers import sweep_leftovers


def test_workspaces_of_a_dead_worker_are_swept_those_of_a_live_one_kept(tmp_path):
    dead = tmp_path / "stackbench_sandbox_999999999_claude_wt_x_ab12"
    alive = tmp_path / f"stackbench_sandbox_{os.getpid()}_claude_wt_x_cd34"
    for folder in (dead, alive):
        (folder / "work").mkdir(parents=True)
    lingering = subprocess.Popen(["sleep", "600"], cwd=dead / "work", start_new_session=True)
    kept = subprocess.Popen(["sleep", "600"], cwd=alive / "work", start_new_session=True)
    sweep_leftovers(str(tmp_path))
    assert not dead.exists() and alive.exists()
    assert lingering.wait(timeout=5) == -9, "a process still working in a dead worker's folder is ended"
    assert kept.poll() is None
    kept.kill()


def test_the_leftover_sweep_follows_no_link_named_like_a_leftover(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    working = subprocess.Popen(["sleep", "600"], cwd=elsewhere, start_new_session=True)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    os.symlink(elsewhere, scratch / "stackbench_sandbox_999999999_planted")
    try:
        sweep_leftovers(str(scratch))
        with pytest.raises(subprocess.TimeoutExpired):
            working.wait(timeout=1)
        assert elsewhere.is_dir()
    finally:
        working.kill()
