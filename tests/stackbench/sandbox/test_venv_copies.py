"""Reader virtualenvs: a template kept once per Python, and private copies of it for each sandbox."""

import dataclasses
import os
import sys

import pytest

from stackbench.sandbox.sandbox import open_sandbox
from stackbench.sandbox.venv_copies import (
    SANDBOX_UIDS,
    discard,
    keep_template,
    release,
    take_copy,
    template_folder,
)
from stackbench_site.configuration import sandbox_settings


@pytest.fixture
def template(tmp_path):
    """A made-up virtualenv kept as a template (a real one is made by the first sandbox; see below)."""
    venv = tmp_path / "made" / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("#!/usr/bin/python3\n")
    kept = template_folder(str(tmp_path / "templates"), sys.executable, "3.11.2", None)
    keep_template(venv, kept)
    return kept


def test_the_template_is_kept_per_python_and_there_is_none_without_a_templates_folder(tmp_path):
    assert template_folder(None, sys.executable, "3.11.2", None) is None
    kept = template_folder(str(tmp_path), sys.executable, "3.11.2", None)
    assert kept.parent == tmp_path and kept != template_folder(str(tmp_path), sys.executable, "3.11.3", None)


def test_a_copy_of_the_template_is_private_down_to_the_inode_and_released_once_moved(template, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    copy = take_copy(template, scratch, as_root=False)
    python = copy.path / "bin" / "python"
    assert copy.uid is None and python.read_text() == "#!/usr/bin/python3\n"
    assert python.stat().st_ino != (template / "bin" / "python").stat().st_ino
    assert copy.path.parent.name.startswith(f"stackbench_sandbox_{os.getpid()}_venv_")  # swept if the worker dies
    os.rename(copy.path, tmp_path / "moved-in")
    release(copy)
    assert not copy.path.parent.exists()


def test_for_a_root_worker_each_copy_belongs_to_a_new_unprivileged_uid(template, tmp_path, root_worker):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    first, second = take_copy(template, scratch, as_root=True), take_copy(template, scratch, as_root=True)
    assert SANDBOX_UIDS[0] <= first.uid < SANDBOX_UIDS[1] and first.uid != second.uid
    assert (first.path / "bin" / "python").stat().st_uid == first.uid


def test_a_template_that_goes_away_takes_the_copies_made_ahead_of_it_along(template, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    taken = take_copy(template, scratch, as_root=False)  # and more are made ahead for the next sandboxes
    discard(template)
    assert list(scratch.iterdir()) == [taken.path.parent]


@pytest.mark.slow
def test_on_a_fresh_machine_the_first_sandbox_makes_the_template_and_later_ones_get_private_copies(tmp_path):
    fresh = dataclasses.replace(sandbox_settings(), templates_dir=str(tmp_path / "templates"))
    first = open_sandbox(fresh, "first")
    try:
        (template,) = (tmp_path / "templates").iterdir()
        assert first.run(["python", "-c", "print('first')"], timeout=60).stdout.strip() == "first"
    finally:
        first.close()
    second = open_sandbox(fresh, "second")
    try:
        (pip,) = template.glob("lib/python*/site-packages/pip/__init__.py")
        relative = pip.relative_to(template)
        assert second.run(["python", "-c", "import pip"], timeout=60).returncode == 0
        assert (second.root / "home" / ".venv" / relative).stat().st_ino != pip.stat().st_ino
    finally:
        second.close()
