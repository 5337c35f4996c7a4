import os
import subprocess
import time

import pytest
from django.conf import settings

from audits.engines.auditors.shell import Terminal
from audits.engines.sandbox import cap_output, sandbox_env
from stackbench_site.configuration import sandbox_limits

APP_DIR = settings.BASE_DIR


@pytest.fixture
def terminal(tmp_path):
    def make(**limits):
        term = Terminal(
            tmp_path / "work", tmp_path / "home", tmp_path / "state", sandbox_limits(**{"timeout": 10, **limits})
        )
        made.append(term)
        return term

    made = []
    yield make
    for term in made:
        term.close()


def test_commands_see_none_of_the_apps_secrets(terminal, monkeypatch):
    for name, value in (
        ("SECRET_KEY", "s3cret-key-value"),
        ("DATABASE_URL", "postgres://u:pw@db/x"),
        ("CELERY_BROKER_URL", "redis://:pw@broker/0"),
        ("ANTHROPIC_API_KEY", "sk-ant-123"),
        ("PIP_INDEX_TOKEN", "tok"),
    ):
        monkeypatch.setenv(name, value)
    output = terminal().run("env; cat /proc/self/environ | tr '\\0' '\\n'").output
    for secret in ("s3cret-key-value", "postgres://", "redis://", "sk-ant-123", "tok\n"):
        assert secret not in output


def test_the_environment_is_an_allowlist():
    env = sandbox_env(__import__("pathlib").Path("/tmp/sandbox-home"), sandbox_limits())
    assert env["HOME"] == "/tmp/sandbox-home" and env["CI"] == "1"
    assert not any(key.startswith(("DJANGO", "CELERY", "DATABASE", "SECRET", "ANTHROPIC")) for key in env)


def test_the_app_folder_is_read_only_and_var_is_hidden(terminal):
    term = terminal()
    if term.jail.confinement == "process group" and os.geteuid() != 0:
        pytest.skip("mount confinement needs CAP_SYS_ADMIN")
    result = term.run(f"touch {APP_DIR}/should-not-exist; echo rc=$?")
    assert "rc=1" in result.output and not (APP_DIR / "should-not-exist").exists()
    var = sandbox_limits().hidden_paths[0]
    listing = term.run(f"ls -A {var}").output
    assert listing.strip() == ""


def test_writes_inside_the_work_folder_still_work(terminal):
    term = terminal()
    assert term.run("echo data > inside.txt && cat inside.txt").output == "data\n"


def test_a_fork_bomb_is_contained_and_killed(terminal):
    term = terminal(max_processes=64, timeout=3)
    term.run(":(){ :|:& };:", timeout=3)
    time.sleep(1)
    cgroup = term.jail.cgroup
    if cgroup is not None:
        assert len((cgroup / "cgroup.procs").read_text().split()) <= 64
    started = time.monotonic()
    term.close()
    assert time.monotonic() - started < 10
    if cgroup is not None:
        assert not cgroup.exists()
    assert subprocess.run(["true"]).returncode == 0


def test_a_fork_bomb_is_killed_at_the_process_limit_and_the_next_command_runs_at_once(terminal, pids_cgroup):
    term = terminal(max_processes=64, timeout=60)
    term.run("mkdir kept && cd kept && export KEPT=yes")
    started = time.monotonic()
    result = term.run("bomb() { bomb | bomb & }; bomb; sleep 50")
    assert result.process_limit and not result.ok and time.monotonic() - started < 10
    assert "limit of 64 processes" in result.output and "process limit" in result.evidence()
    assert term.jail._cgroup_pids() == []
    started = time.monotonic()
    after = term.run('echo "$KEPT $(basename "$PWD")"; ls / > /dev/null')
    assert after.ok and after.output == "yes kept\n" and time.monotonic() - started < 3


def test_a_command_that_ends_but_leaves_a_fork_bomb_behind_is_caught_too(terminal, pids_cgroup):
    term = terminal(max_processes=64, timeout=60)
    result = term.run("bomb() { bomb | bomb & }; bomb 2>/dev/null; sleep 0.5 2>/dev/null; true")
    assert result.process_limit and not result.ok
    assert term.jail._cgroup_pids() == []
    started = time.monotonic()
    assert term.run("ls / > /dev/null").ok and time.monotonic() - started < 3


def test_a_python_snippet_that_forks_without_end_is_killed_and_python_starts_afresh(terminal, pids_cgroup):
    term = terminal(max_processes=64, timeout=60)
    assert term.run_python("kept = 1", "<step>").ok
    started = time.monotonic()
    result = term.run_python(
        "import os, time\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        time.sleep(0.01)",
        "<step>",
    )
    assert result.process_limit and time.monotonic() - started < 10
    assert term.jail._cgroup_pids() == []
    after = term.run_python("print('kept' in globals())", "<step>")
    assert after.ok and after.output == "False\n"


def test_a_memory_hog_is_stopped_by_the_limit(terminal):
    term = terminal(memory_bytes=256 * 1024**2)
    result = term.run("python3 -c 'x = bytearray(1024**3); print(len(x))'")
    assert result.exit_code != 0 and "MemoryError" in result.output
    assert term.run("echo still-here").output == "still-here\n"


def test_a_huge_file_is_stopped_by_the_limit(terminal):
    term = terminal(file_size_bytes=1024 * 1024)
    result = term.run("head -c 5000000 /dev/zero > big.bin; echo rc=$?")
    assert "rc=0" not in result.output
    assert (term.work_dir / "big.bin").stat().st_size <= 1024 * 1024


def test_output_is_capped_keeping_the_end():
    text, cut = cap_output(b"a" * 1000 + b"THE END", 100)
    assert cut and text.endswith("THE END") and "bytes cut" in text
    assert cap_output(b"short", 100) == ("short", False)


def test_nul_bytes_in_output_become_replacement_characters():
    assert cap_output(b"a\0b", 100) == ("a\ufffdb", False)
