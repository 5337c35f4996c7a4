"""What the worker's machine can offer a reader: its Pythons (those a user with no rights of its own can run)."""

from pathlib import Path

import pytest

from stackbench.sandbox.machine import profile_for, pythons

SYSTEM_PYTHON = "/usr/bin/python3"


def test_a_profile_names_the_python_asked_for_and_describes_it():
    if not Path(SYSTEM_PYTHON).exists():
        pytest.skip("needs Debian's python3")
    (version,) = pythons([SYSTEM_PYTHON])
    profile = profile_for(version.rsplit(".", 1)[0], "none", [SYSTEM_PYTHON])
    assert profile.python == SYSTEM_PYTHON and profile.python_version == version
    assert profile.describe()["python"] == version and profile.describe()["network"] == "none"
    with pytest.raises(LookupError, match=r"Python 2\.7 is not on this worker"):
        profile_for("2.7", "none", [SYSTEM_PYTHON])


def test_an_interpreter_others_cannot_run_is_not_offered(tmp_path):
    private = tmp_path / "python3.99"
    private.write_text("#!/bin/sh\necho 3.99.0\n")
    private.chmod(0o700)
    assert pythons([str(private)]) == {}
    with pytest.raises(LookupError, match="no Python interpreter an unprivileged user can run"):
        profile_for("", "registries", [str(private)])
