"""The engines' configuration, built from Django's settings."""

from pathlib import Path

import pytest

from stackbench_site.configuration import (
    claude_settings,
    claude_unavailable_reason,
    find_uv,
    sandbox_limits,
    sandbox_settings,
    validation_options,
)


def test_the_sandbox_limits_come_from_the_settings_in_bytes_and_can_be_overridden(settings):
    settings.STACKBENCH_COMMAND_TIMEOUT = 33.0
    settings.STACKBENCH_SANDBOX_MEMORY_MB = 3
    settings.STACKBENCH_SANDBOX_DISK_MB = 5
    settings.STACKBENCH_SANDBOX_FILE_MB = 2
    settings.STACKBENCH_SANDBOX_MAX_PROCESSES = 17
    limits = sandbox_limits(max_processes=9)
    assert (limits.timeout, limits.max_processes) == (33.0, 9)
    assert (limits.memory_bytes, limits.disk_bytes, limits.file_size_bytes) == (3 * 1024**2, 5 * 1024**2, 2 * 1024**2)
    with pytest.raises(TypeError):
        sandbox_limits(no_such_limit=1)


def test_the_sandbox_hides_the_apps_folders_and_reaches_only_the_registries(settings):
    settings.STACKBENCH_REGISTRIES = ["pypi.org"]
    settings.STACKBENCH_UNCONFINED = False
    sandbox = sandbox_settings(network="none", timeout=4)
    assert sandbox.limits.timeout == 4 and sandbox.profile.network == "none"
    assert {str(settings.BASE_DIR), str(settings.VAR_DIR), settings.STACKBENCH_WORKER_HOME} == set(sandbox.hidden_paths)
    assert len(sandbox.hidden_paths) == len(set(sandbox.hidden_paths))
    assert sandbox.reachable_hosts == ("pypi.org",)
    assert sandbox.templates_dir == str(settings.VAR_DIR / "sandbox-templates")
    assert sandbox.tools == {"uv": find_uv()} and Path(find_uv()).is_file()
    assert sandbox_settings().profile.network == settings.STACKBENCH_SANDBOX_NETWORK


def test_a_python_the_worker_does_not_have_is_refused_saying_which_it_has():
    with pytest.raises(LookupError, match="Python 2.7 is not on this worker; it has 3."):
        sandbox_settings("2.7")


def test_validation_uses_the_same_sandbox_and_the_settings_for_installing(settings, tmp_path):
    settings.STACKBENCH_FIND_LINKS = [str(tmp_path)]
    settings.STACKBENCH_NO_INDEX = True
    options = validation_options(network="none", timeout=7.0)
    assert options.find_links == [tmp_path] and options.offline is True and options.timeout == 7.0
    assert options.sandbox.profile.network == "none"
    assert options.sandbox.profile not in options.other_profiles
    assert all(profile.network == "none" for profile in options.other_profiles)


def test_the_claude_settings_come_from_the_settings_and_can_be_overridden(settings):
    settings.STACKBENCH_CLAUDE_MODEL = "claude-test"
    settings.STACKBENCH_CLAUDE_MAX_TURNS = 12
    settings.STACKBENCH_CLAUDE_CREDENTIALS = {"ANTHROPIC_API_KEY": "sk-x"}
    claude = claude_settings(max_turns=3)
    assert (claude.model, claude.max_turns, claude.credentials) == ("claude-test", 3, {"ANTHROPIC_API_KEY": "sk-x"})


def test_the_backend_is_offered_only_with_a_credential(settings):
    settings.STACKBENCH_CLAUDE_CREDENTIALS, settings.STACKBENCH_CLAUDE_CLI = {}, None
    assert "No Claude credential" in claude_unavailable_reason()
    settings.STACKBENCH_CLAUDE_CREDENTIALS = {"ANTHROPIC_API_KEY": "sk-x"}
    assert claude_unavailable_reason() is None
    settings.STACKBENCH_CLAUDE_CLI = "/nowhere/claude"
    assert "STACKBENCH_CLAUDE_CLI points at /nowhere/claude" in claude_unavailable_reason()
