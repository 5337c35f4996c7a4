"""The result file family of formats.md: the audit result, and the validation files (validation result,
validation summary). Counts are derived from the lists they count, so reading a file back never changes them."""

from collections import Counter
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, computed_field

from stackbench.formats.walkthrough import (
    GAP_SEVERITY,
    INT_MAX,
    Count,
    Gap,
    Label,
    Language,
    Name,
    ShortText,
    Timestamp,
    WalkthroughId,
    doc_name,
)
from stackbench.lib.ansi import strip_ansi, strip_ansi_or_none
from stackbench.lib.severity import SeverityScale

ExampleStatus = Literal["success", "failure", "skipped"]
# error: the docs are wrong; warning: the environment or the library's internals; info: works, with a deprecation
# or an output that differs only in format.
ExampleSeverity = Literal["error", "warning", "info"]
EXAMPLE_SEVERITY = SeverityScale(get_args(ExampleSeverity))
# What a CI gate fails on, as a rank of either scale (critical and error are the same level): "open-…" every
# problem the run saw that is not triaged away (the default: a rerun cannot turn a red job green), "new-…"
# only problems the run saw first or saw come back.
GATE_LEVELS = {
    f"{which}-{name}": scale.rank(name)
    for which in ("open", "new")
    for scale in (GAP_SEVERITY, EXAMPLE_SEVERITY)
    for name in scale
}
DEFAULT_GATE_LEVEL = "open-critical"


# What an example printed or said, as its reader sees it: terminal colour codes dropped wherever it is written,
# read back or shown.
ShownText = Annotated[str | None, AfterValidator(strip_ansi_or_none)]
ShownLog = Annotated[str, AfterValidator(strip_ansi)]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class AuditResult(_Lenient):
    walkthrough_id: WalkthroughId
    walkthrough_title: Label = ""
    library_name: Name = ""
    library_version: ShortText = ""
    started_at: Timestamp
    completed_at: Timestamp | None = None
    duration_seconds: float = Field(default=0.0, ge=0)
    total_steps: Count
    completed_steps: Count
    failed_steps: Count = 0
    success: bool = False
    gaps: list[Gap] = Field(default_factory=list)
    execution_log: str = "[]"
    agent_log_path: str | None = None

    def _count(self, field: str, value: str) -> int:
        return sum(1 for gap in self.gaps if getattr(gap, field) == value)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def clarity_gaps(self) -> int:
        return self._count("gap_type", "clarity")

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def prerequisite_gaps(self) -> int:
        return self._count("gap_type", "prerequisite")

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def logical_flow_gaps(self) -> int:
        return self._count("gap_type", "logical_flow")

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def execution_gaps(self) -> int:
        return self._count("gap_type", "execution_error")

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def completeness_gaps(self) -> int:
        return self._count("gap_type", "completeness")

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def cross_reference_gaps(self) -> int:
        return self._count("gap_type", "cross_reference")

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def critical_gaps(self) -> int:
        return self._count("severity", "critical")

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def warning_gaps(self) -> int:
        return self._count("severity", "warning")

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def info_gaps(self) -> int:
        return self._count("severity", "info")


def audit_outcome(total_steps: int, completed_steps: int, gaps: list[Gap]) -> tuple[int, bool]:
    """failed_steps are the steps never reached; success means every step was reached with no critical gap."""
    failed_steps = max(total_steps - completed_steps, 0)
    success = failed_steps == 0 and not any(gap.severity == "critical" for gap in gaps)
    return failed_steps, success


class ExampleResult(_Lenient):
    example_index: Count
    line: Count = 0
    context: str = ""
    code: str = ""
    status: ExampleStatus
    severity: ExampleSeverity | None = None
    error_message: ShownText = None
    suggestions: str | None = None
    execution_output: ShownText = None
    depends_on_previous: bool = False
    depends_on_example_indices: list[Count] = Field(default_factory=list)
    actual_code_executed: str = ""
    # Extra fields: what the page shows the example printing, where it differs; a doctest session's statements
    # and how many of them ran.
    expected_output: ShownText = None
    statements: Count | None = None
    statements_run: Count | None = None
    # The earlier example of the page that failed on the same cause outside the block (an import never made, a
    # package never installed), where the failure is counted; this one is listed as info.
    repeats_example: Count | None = None


class SetupProblem(_Lenient):
    """Something the page needs that could not be set up: a package that would not install, a file that could
    not be written. Reported once for the page; only the examples that need it fail for it."""

    requirement: str = ""
    message: ShownLog
    log: ShownLog = ""


class ValidationEnvironment(_Lenient):
    """The reader's machine the examples ran on."""

    python: str = ""
    distributions: dict[str, str] = Field(default_factory=dict)


class ValidationResult(_Lenient):
    page: Label = Field(min_length=1)
    library: Name = Field(min_length=1)
    version: ShortText = ""
    language: Language = "python"
    validation_timestamp: Timestamp
    results: list[ExampleResult] = Field(default_factory=list)
    # Extra fields: the environment the examples ran in, and what could not be set up.
    environment: ValidationEnvironment | None = None
    setup_problems: list[SetupProblem] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def total_examples(self) -> int:
        return len(self.results)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def successful(self) -> int:
        return sum(1 for r in self.results if r.status == "success")

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if r.status == "failure")

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def skipped(self) -> int:
        return sum(1 for r in self.results if r.status == "skipped")


class ValidationSummary(_Lenient):
    timestamp: Timestamp
    validation_duration_seconds: float = Field(default=0.0, ge=0)
    num_workers: Annotated[int, Field(ge=1, le=INT_MAX)] = 1
    documents: list[ValidationResult] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def total_documents(self) -> int:
        return len(self.documents)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def total_examples(self) -> int:
        return sum(doc.total_examples for doc in self.documents)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def successful(self) -> int:
        return sum(doc.successful for doc in self.documents)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def failed(self) -> int:
        return sum(doc.failed for doc in self.documents)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def failed_by_severity(self) -> dict[str, int]:
        counts: Counter[str | None] = Counter(
            r.severity for doc in self.documents for r in doc.results if r.status == "failure"
        )
        return {severity: counts.get(severity, 0) for severity in EXAMPLE_SEVERITY}


def validation_file_name(page: str) -> str:
    """code_validation/<doc>_validation.json."""
    return f"{doc_name(page)}_validation.json"
