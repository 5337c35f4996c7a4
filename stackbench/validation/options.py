"""What a caller hands validation (its options, an observer of its progress) and the one error validation raises
when it cannot run at all."""

import os
from dataclasses import dataclass, field
from pathlib import Path

from stackbench.formats.results import ExampleResult, ValidationResult
from stackbench.sandbox.settings import Profile, SandboxSettings


class ValidationError(Exception):
    """Validation could not run at all; the message says why."""


@dataclass
class ValidationOptions:
    timeout: float = 30.0
    num_workers: int = field(default_factory=lambda: os.cpu_count() or 2)
    find_links: list[Path] = field(default_factory=list)
    offline: bool = False
    output_cap: int = 100_000
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    other_profiles: list[Profile] = field(default_factory=list)  # other Pythons to try, in order


class ValidationObserver:
    def document_started(self, page: str, examples: int) -> None: ...

    def sandbox_ready(self, description: dict[str, str]) -> None: ...

    def example_finished(self, page: str, result: ExampleResult) -> None: ...

    def document_finished(self, page: str, result: ValidationResult) -> None: ...

    def should_stop(self) -> bool:
        return False
