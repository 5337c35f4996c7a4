"""The engines' configuration, built from Django's settings. Engines read no settings and no environment: the
tasks, the views and the command line hand them these plain dataclasses."""

import functools
import shutil
import sys
from pathlib import Path

from django.conf import settings
from uv import find_uv_bin

from stackbench.agent.runner import ClaudeSettings
from stackbench.sandbox import machine
from stackbench.sandbox.settings import Limits, SandboxSettings
from stackbench.validation.options import ValidationOptions


def sandbox_limits(**overrides) -> Limits:
    values = dict(
        timeout=settings.STACKBENCH_COMMAND_TIMEOUT,
        output_bytes=settings.STACKBENCH_OUTPUT_CAP_BYTES,
        memory_bytes=settings.STACKBENCH_SANDBOX_MEMORY_MB * 1024**2,
        file_size_bytes=settings.STACKBENCH_SANDBOX_FILE_MB * 1024**2,
        max_processes=settings.STACKBENCH_SANDBOX_MAX_PROCESSES,
        disk_bytes=settings.STACKBENCH_SANDBOX_DISK_MB * 1024**2,
        max_files=settings.STACKBENCH_SANDBOX_MAX_FILES,
        cpus=settings.STACKBENCH_SANDBOX_CPUS,
    )
    values.update(overrides)
    return Limits(**values)


def sandbox_settings(python: str = "", network: str = "", **limit_overrides) -> SandboxSettings:
    """A run's sandbox: the reader's machine (the newest Python matching `python`, the worker's Node, the network)
    and the limits. The app's folder, var/ and the worker's home are never visible inside."""
    profile = machine.profile_for(
        python, network or settings.STACKBENCH_SANDBOX_NETWORK, settings.STACKBENCH_PYTHONS or None
    )
    uv = find_uv()
    return SandboxSettings(
        limits=sandbox_limits(**limit_overrides),
        profile=profile,
        environment=settings.STACKBENCH_SANDBOX_ENVIRONMENT,
        hidden_paths=tuple(
            dict.fromkeys(str(p) for p in (settings.BASE_DIR, settings.VAR_DIR, settings.STACKBENCH_WORKER_HOME))
        ),
        reachable_hosts=tuple(settings.STACKBENCH_REGISTRIES),
        tools={"uv": uv} if uv else {},
        templates_dir=str(settings.VAR_DIR / "sandbox-templates"),
        scratch_dir=settings.STACKBENCH_SANDBOX_DIR,
        unconfined=settings.STACKBENCH_UNCONFINED,
    )


def validation_options(python: str = "", network: str = "", **overrides) -> ValidationOptions:
    """Validation in the sandbox of sandbox_settings; the library is tried on the worker's other Pythons matching
    `python`, newest first, when it cannot be installed on the first."""
    sandbox = sandbox_settings(python, network)
    others = machine.profiles_for(python, sandbox.profile.network, settings.STACKBENCH_PYTHONS or None)[1:]
    values = dict(
        find_links=[Path(folder) for folder in settings.STACKBENCH_FIND_LINKS],
        offline=settings.STACKBENCH_NO_INDEX,
        sandbox=sandbox,
        other_profiles=others,
    )
    values.update(overrides)
    return ValidationOptions(**values)


@functools.cache
def find_uv() -> str | None:
    """The uv binary (a requirement of the app), used inside sandboxes to make virtualenvs and install fast."""
    beside = Path(sys.executable).parent / "uv"
    if beside.is_file():
        return str(beside)
    try:
        return find_uv_bin()
    except FileNotFoundError:
        return shutil.which("uv")


def claude_settings(**overrides) -> ClaudeSettings:
    values = dict(
        model=settings.STACKBENCH_CLAUDE_MODEL,
        max_turns=settings.STACKBENCH_CLAUDE_MAX_TURNS,
        max_budget_usd=settings.STACKBENCH_CLAUDE_MAX_BUDGET_USD,
        timeout=settings.STACKBENCH_CLAUDE_TIMEOUT,
        max_retries=settings.STACKBENCH_CLAUDE_MAX_RETRIES,
        cli_path=settings.STACKBENCH_CLAUDE_CLI,
        credentials=settings.STACKBENCH_CLAUDE_CREDENTIALS,
        environment=settings.STACKBENCH_CLAUDE_ENVIRONMENT,
    )
    values.update(overrides)
    return ClaudeSettings(**values)


def claude_unavailable_reason() -> str | None:
    return claude_settings().unavailable_reason()
