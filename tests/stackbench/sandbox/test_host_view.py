"""What of the host a sandbox sees: the system and its configuration, read-only; not the app, var/, other runs or
anything others may not read."""

import shutil
import stat
import tempfile
from pathlib import Path

import pytest
from django.conf import settings

from stackbench.sandbox.host_view import mounts, reachable_by_anyone


@pytest.mark.slow
def test_the_app_folder_var_and_the_workers_home_are_not_there(terminal, root_worker):
    term = terminal()
    secret = settings.VAR_DIR / "secret_key"
    for path in (
        secret,
        settings.VAR_DIR / "stackbench.sqlite3",
        settings.BASE_DIR / "manage.py",
        settings.BASE_DIR / "stackbench_site" / "settings.py",
        settings.VAR_DIR / "admin_password.txt",
    ):
        assert "rc=0" not in term.run(f"cat {path} > /dev/null; echo rc=$?").output, path
    assert term.run(f"ls -A {settings.BASE_DIR}").exit_code != 0
    assert term.run(f"touch {settings.BASE_DIR}/pwned; echo rc=$?").output.strip() != "rc=0"
    assert not (settings.BASE_DIR / "pwned").exists()
    assert term.run("ls -A /root").exit_code != 0


@pytest.mark.slow
def test_the_host_shows_only_what_a_newcomers_machine_has(terminal, root_worker):
    term = terminal()
    top = set(term.run("ls -A /").output.split())
    assert top <= {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "home", "tmp", "var", "run"} | {
        "proc",
        "dev",
    }, top
    for absent in ("/sys", "/srv", "/opt", "/root", "/var/log", "/var/lib", "/work"):
        assert term.run(f"test -e {absent}").exit_code != 0, absent
    # What others may not read on the host is not even there to be named.
    assert term.run("wc -c < /etc/shadow").output.strip() == "0"
    assert term.run("ls -A /etc/ssl/private").output.strip() == ""
    # The reader's tools still work without them.
    assert term.run("nproc && python3 -c 'import os; print(os.cpu_count())' && node -e 'console.log(1)'").ok


def test_a_configuration_file_others_may_not_read_is_covered_by_an_empty_one():
    shadow = Path("/etc/shadow")
    if not shadow.exists() or shadow.stat().st_mode & stat.S_IROTH:
        pytest.skip("needs an /etc/shadow others may not read")
    assert "--ro-bind /run/empty /etc/shadow" in " ".join(mounts([], [], "/run/empty"))


def test_an_interpreter_outside_the_system_is_shown_with_its_installation(tmp_path):
    python = tmp_path / "python3.12" / "bin" / "python3.12"
    python.parent.mkdir(parents=True)
    python.touch()
    installation = python.parent.parent.resolve()
    arguments = " ".join(mounts([str(python), "/usr/bin/python3"], [], "/run/empty"))
    assert f"--ro-bind {installation} {installation}" in arguments
    assert arguments.count("--ro-bind /usr /usr") == 1


def test_a_hidden_folder_within_what_is_shown_is_covered_and_one_outside_it_is_not_named(tmp_path):
    arguments = " ".join(mounts([], ["/usr/share", str(tmp_path)], "/run/empty"))
    assert "--tmpfs /usr/share --remount-ro /usr/share" in arguments
    assert str(tmp_path) not in arguments


@pytest.fixture
def open_folder():
    """A folder every user may enter, as /tmp is (pytest's own folders are root's only)."""
    folder = Path(tempfile.mkdtemp())
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def test_only_what_every_folder_on_the_way_lets_others_into_is_reachable_by_anyone(open_folder):
    notes = open_folder / "notes.txt"
    notes.write_text("notes")
    notes.chmod(0o644)
    assert reachable_by_anyone(notes) and reachable_by_anyone(open_folder)
    assert not reachable_by_anyone(notes, execute=True)
    shut = open_folder / "shut"
    shut.mkdir()
    shut.chmod(0o700)
    (shut / "notes.txt").write_text("notes")
    (shut / "notes.txt").chmod(0o644)
    assert not reachable_by_anyone(shut / "notes.txt") and not reachable_by_anyone(open_folder / "missing")
