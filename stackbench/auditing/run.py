"""Auditing one walkthrough with the chosen auditor: the rule-based one (default, offline) or the Claude agent."""

import asyncio

from stackbench.agent.runner import ClaudeSettings
from stackbench.auditing.claude import audit_with_claude
from stackbench.auditing.common import AuditError, AuditObserver, AuditRequest, OneThreadObserver
from stackbench.auditing.rules import audit_with_rules
from stackbench.formats.results import AuditResult

BACKENDS = ("rules", "claude")


def run_audit(
    request: AuditRequest,
    backend: str = "rules",
    observer: AuditObserver | None = None,
    claude: ClaudeSettings | None = None,
) -> AuditResult:
    """Audit one walkthrough; raises AuditError when the audit cannot run (not when it finds gaps)."""
    if backend not in BACKENDS:
        raise AuditError(f"unknown backend {backend!r}; use one of: {', '.join(BACKENDS)}")
    if not request.walkthrough_path.is_file():
        raise AuditError(f"{request.walkthrough_path} does not exist")
    try:
        request.output_dir.mkdir(parents=True, exist_ok=True)
        probe = request.output_dir / ".stackbench-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise AuditError(f"cannot write to the output folder {request.output_dir}: {exc.strerror}") from None
    observer = OneThreadObserver(observer or AuditObserver())
    try:
        if backend == "claude":
            return asyncio.run(audit_with_claude(request, observer, claude or ClaudeSettings()))
        return asyncio.run(audit_with_rules(request, observer))
    except OSError as exc:
        raise AuditError(f"cannot write the audit's files in {request.output_dir}: {exc.strerror or exc}") from None
    finally:
        observer.close()
