"""The audits app's models, a module per noun; importable from here as they always were."""

from audits.models.access import ApiToken, ShareLink
from audits.models.problems import (
    HAND_TRIAGE_STATES,
    QUIET_STATES,
    Lifecycle,
    Problem,
    ProblemComment,
    ProblemEvent,
    TriageState,
    gate_problems,
    record_problems,
)
from audits.models.runs import (
    ACTIVE_STATUSES,
    Batch,
    ExampleResult,
    Gap,
    Run,
    RunBackend,
    RunKind,
    RunStatus,
    ValidationDocument,
)
from audits.models.service import ServiceBeat

__all__ = [
    "ACTIVE_STATUSES",
    "HAND_TRIAGE_STATES",
    "QUIET_STATES",
    "ApiToken",
    "Batch",
    "ExampleResult",
    "Gap",
    "Lifecycle",
    "Problem",
    "ProblemComment",
    "ProblemEvent",
    "Run",
    "RunBackend",
    "RunKind",
    "RunStatus",
    "ServiceBeat",
    "ShareLink",
    "TriageState",
    "ValidationDocument",
    "gate_problems",
    "record_problems",
]
