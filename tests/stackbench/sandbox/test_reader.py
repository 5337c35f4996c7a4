"""The newcomer inside: their environment is an allowlist with their own toolchain first."""

import pytest

from stackbench.sandbox.reader import HOME, NPM_PREFIX, SYSTEM_PATH, VENV, reader_environment
from stackbench.sandbox.settings import SandboxSettings


@pytest.mark.slow
def test_the_environment_is_an_allowlist_with_the_readers_own_toolchain_first(terminal, monkeypatch):
    for name, value in (
        ("SECRET_KEY", "s3cret-key-value"),
        ("DATABASE_URL", "postgres://u:pw@db/x"),
        ("CELERY_BROKER_URL", "redis://:pw@broker/0"),
        ("ANTHROPIC_API_KEY", "sk-ant-123"),
    ):
        monkeypatch.setenv(name, value)
    term = terminal()
    output = term.run("env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null").output
    for secret in ("s3cret-key-value", "postgres://", "redis://", "sk-ant-123", "DJANGO_SETTINGS_MODULE"):
        assert secret not in output
    assert f"PATH={HOME}/.venv/bin:{HOME}/.npm-global/bin:" in output and f"HOME={HOME}" in output
    assert term.run("id -un; command -v python pip").output.split() == [
        "reader",
        f"{HOME}/.venv/bin/python",
        f"{HOME}/.venv/bin/pip",
    ]


def test_the_readers_own_toolchain_comes_first_and_what_is_passed_through_is_kept():
    passed = {"LANG": "de_DE.UTF-8", "PIP_INDEX_URL": "https://mirror.example/simple"}
    env = reader_environment(SandboxSettings(environment=passed), HOME, "/tmp")
    assert env["PATH"].split(":")[:2] == [f"{VENV}/bin", f"{NPM_PREFIX}/bin"]
    assert env["LANG"] == "de_DE.UTF-8" and env["PIP_INDEX_URL"] == "https://mirror.example/simple"
    assert env["HOME"] == HOME and env["TMPDIR"] == "/tmp" and env["NPM_CONFIG_PREFIX"] == NPM_PREFIX
    assert reader_environment(SandboxSettings(), HOME, "/tmp")["LANG"] == "C.UTF-8"


def test_a_passed_through_variable_cannot_move_the_readers_home_or_path():
    env = reader_environment(SandboxSettings(environment={"PATH": "/elsewhere", "HOME": "/root"}), HOME, "/tmp")
    assert env["PATH"] == f"{VENV}/bin:{NPM_PREFIX}/bin:{SYSTEM_PATH}" and env["HOME"] == HOME


def test_gui_toolkits_draw_off_screen_where_the_reader_would_have_a_screen():
    assert reader_environment(SandboxSettings(), HOME, "/tmp")["QT_QPA_PLATFORM"] == "offscreen"
