"""What a sandbox is made with: the profile of the reader's machine, as a run states it."""

from stackbench.sandbox.settings import Limits, Profile, SandboxSettings


def test_a_profile_describes_the_readers_machine_by_versions_where_it_knows_them():
    profile = Profile(python="/usr/bin/python3", python_version="3.11.2", node="/usr/bin/node", node_version="20.1.0")
    assert profile.describe() == {"python": "3.11.2", "node": "20.1.0", "network": "registries only"}


def test_a_profile_without_versions_or_node_names_the_interpreter_and_says_none():
    profile = Profile(python="/opt/python3.12/bin/python3", network="none")
    assert profile.describe() == {"python": "/opt/python3.12/bin/python3", "node": "none", "network": "none"}


def test_settings_start_from_the_default_limits_and_profile():
    settings = SandboxSettings()
    assert settings.limits == Limits() and settings.profile == Profile() and not settings.unconfined
