"""The engines' configuration, built from Django's settings. Engines read no settings and no environment: the
tasks, the views and the command line hand them these plain dataclasses."""

from pathlib import Path

from django.conf import settings

from audits.engines.sandbox import Limits
from audits.engines.validator import ValidationOptions
from walkthroughs.engines.claude_agent import ClaudeSettings


def sandbox_limits(**overrides) -> Limits:
    """Limits of a command taken from docs. The app's folder is read-only to it and var/ (database, secret key,
    broker, other runs) is hidden."""
    values = dict(
        timeout=settings.STACKBENCH_COMMAND_TIMEOUT,
        output_bytes=settings.STACKBENCH_OUTPUT_CAP_BYTES,
        memory_bytes=settings.STACKBENCH_SANDBOX_MEMORY_MB * 1024**2,
        file_size_bytes=settings.STACKBENCH_SANDBOX_FILE_MB * 1024**2,
        max_processes=settings.STACKBENCH_SANDBOX_MAX_PROCESSES,
        hidden_paths=(str(settings.VAR_DIR),),
        readonly_paths=(str(settings.BASE_DIR),),
        environment=settings.STACKBENCH_SANDBOX_ENVIRONMENT,
        path=settings.STACKBENCH_SANDBOX_PATH,
    )
    values.update(overrides)
    return Limits(**values)


def validation_options(**overrides) -> ValidationOptions:
    values = dict(
        find_links=[Path(folder) for folder in settings.STACKBENCH_FIND_LINKS],
        offline=settings.STACKBENCH_NO_INDEX,
        limits=sandbox_limits(),
        uv_cache_dir=Path(settings.STACKBENCH_UV_CACHE_DIR),
        pip_cache_dir=Path(settings.STACKBENCH_PIP_CACHE_DIR),
    )
    values.update(overrides)
    return ValidationOptions(**values)


def claude_settings(**overrides) -> ClaudeSettings:
    values = dict(
        model=settings.STACKBENCH_CLAUDE_MODEL,
        max_turns=settings.STACKBENCH_CLAUDE_MAX_TURNS,
        max_budget_usd=settings.STACKBENCH_CLAUDE_MAX_BUDGET_USD,
        timeout=settings.STACKBENCH_CLAUDE_TIMEOUT,
        cli_path=settings.STACKBENCH_CLAUDE_CLI,
        credentials=settings.STACKBENCH_CLAUDE_CREDENTIALS,
        environment=settings.STACKBENCH_CLAUDE_ENVIRONMENT,
    )
    values.update(overrides)
    return ClaudeSettings(**values)


def claude_unavailable_reason() -> str | None:
    return claude_settings().unavailable_reason()
