"""What both auditors share: the request, the observer that feeds live progress, the MCP client for the step
server, and the audit result written at the end from the session file."""

import asyncio
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from mcp import Client

from stackbench.agent.runner import AgentLog, AgentObserver
from stackbench.auditing.step_server import ServerConfig, build_server
from stackbench.formats.results import AuditResult, audit_outcome
from stackbench.formats.walkthrough import Gap, Session, session_path_for, walkthrough_id_for
from stackbench.lib.clock import utcnow
from stackbench.lib.jsonfiles import FormatError, load_model, write_model
from stackbench.sandbox.settings import SandboxSettings

# The project's root: the step server runs as `python -m stackbench.auditing.step_server` from there.
APP_ROOT = Path(__file__).resolve().parents[2]


class AuditError(Exception):
    """The audit could not run (not: it ran and found gaps). The message says why, for the user."""


@dataclass
class AuditRequest:
    walkthrough_path: Path
    output_dir: Path
    library_name: str = ""
    library_version: str = ""
    working_dir: Path | None = None
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    allowed_roots: list[Path] = field(default_factory=list)

    @property
    def walkthrough_id(self) -> str:
        return walkthrough_id_for(self.walkthrough_path)

    @property
    def session_path(self) -> Path:
        return session_path_for(self.walkthrough_path, self.output_dir)

    @property
    def audit_path(self) -> Path:
        return self.output_dir / f"{self.walkthrough_id}_audit.json"

    @property
    def logs_dir(self) -> Path:
        return self.output_dir / "agent_logs"


class AuditObserver(AgentObserver):
    """Receives progress while an audit runs. The CLI prints it; the Celery task stores it on the run."""

    def step_started(self, number: int, total: int, title: str) -> None: ...

    def gap_reported(self, seq: int, gap: Gap) -> None: ...

    def sandbox_ready(self, description: dict) -> None: ...

    def close(self) -> None: ...


class OneThreadObserver(AuditObserver):
    """Runs every observer call on one thread of its own. The auditors call from async code and from
    helper threads; an observer that writes to Django's database may not be called from async code."""

    def __init__(self, inner: AuditObserver) -> None:
        self.inner = inner
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="audit-observer")

    def _call(self, name: str, *args: object) -> Any:  # what the inner observer's method returns
        return self.pool.submit(getattr(self.inner, name), *args).result()

    def step_started(self, number: int, total: int, title: str) -> None:
        self._call("step_started", number, total, title)

    def gap_reported(self, seq: int, gap: Gap) -> None:
        self._call("gap_reported", seq, gap)

    def sandbox_ready(self, description: dict) -> None:
        self._call("sandbox_ready", description)

    def command_started(self, command: str) -> None:
        self._call("command_started", command)

    def agent_finished(self, usage: dict[str, Any] | None, cost_usd: float | None) -> None:
        self._call("agent_finished", usage, cost_usd)

    def should_stop(self) -> bool:
        return self._call("should_stop")

    def close(self) -> None:
        self._call("close")
        self.pool.shutdown()


class SessionFollower:
    """Reads the session file after each step-server call and passes on the gaps reported since. Both
    auditors learn of gaps this one way, from what the step server actually stored."""

    def __init__(self, path: Path, observer: AuditObserver) -> None:
        self.path, self.observer = path, observer
        self.gaps_seen = 0
        self.session: Session | None = None

    def poll(self) -> Session | None:
        try:
            self.session = load_model(Session, self.path)
        except FormatError:
            return self.session
        for seq in range(self.gaps_seen, len(self.session.gaps)):
            self.observer.gap_reported(seq, self.session.gaps[seq])
        self.gaps_seen = len(self.session.gaps)
        return self.session

    def saw_tool_result(self, tool: str, payload: Any) -> None:
        """Called with every step-server result: a served step is progress."""
        if tool.endswith("next_step") and isinstance(payload, dict) and "step_number" in payload:
            self.observer.step_started(payload["step_number"], payload.get("total_steps", 0), payload.get("title", ""))
        self.poll()


def step_server_command(request: AuditRequest) -> tuple[str, list[str], dict[str, str]]:
    """How to launch our MCP step server for this audit: command, arguments and its whole environment."""
    roots = [request.walkthrough_path.parent, *request.allowed_roots]
    args = ["-m", "stackbench.auditing.step_server", "--output", str(request.output_dir)]
    for root in roots:
        args += ["--allowed-root", str(root)]
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": str(APP_ROOT), "PYTHONUNBUFFERED": "1"}
    return sys.executable, args, env


class StepClient:
    """Our MCP client for the step server, logging every call to the tool trace. The rule-based auditor is our own
    code, so the server runs in its process, over the SDK's in-memory transport: the same server, tools and
    messages as over stdio (which the Claude CLI uses), without a Python process that imports the SDK again for
    every audit (about 1.4 s here)."""

    def __init__(self, request: AuditRequest, log: AgentLog, follower: SessionFollower) -> None:
        self.request, self.log, self.follower = request, log, follower
        self.client: Client | None = None

    async def __aenter__(self) -> "StepClient":
        request = self.request
        roots = [request.walkthrough_path.parent, *request.allowed_roots]
        config = ServerConfig(output_dir=request.output_dir, allowed_roots=roots, working_dir=request.output_dir)
        self.client = Client(build_server(config), read_timeout_seconds=60)
        await self.client.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        # Closed as if nothing happened: what went wrong in the audit is raised as it is, not inside the
        # client's task group.
        if self.client is not None:
            await self.client.__aexit__(None, None, None)

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.client is None:
            raise RuntimeError("StepClient.call needs `async with StepClient(...)` first")
        arguments = arguments or {}
        started = time.monotonic()
        result = await asyncio.wait_for(self.client.call_tool(tool, arguments), timeout=60)
        text = "".join(getattr(block, "text", "") for block in result.content)
        payload = result.structured_content if result.structured_content is not None else text
        self.log.tool_call(f"mcp__walkthrough__{tool}", arguments, payload, time.monotonic() - started, result.is_error)
        self.follower.saw_tool_result(tool, payload)
        if result.is_error:
            raise AuditError(f"the step server refused {tool}: {text}")
        return result.structured_content or json.loads(text)


def write_audit_result(
    request: AuditRequest,
    started_at: datetime,
    session: Session | None,
    total_steps: int,
    title: str,
    execution_log: list,
    completed: int | None = None,
) -> AuditResult:
    """The audit file, from the session file's gaps and progress (as the spec says), validated and
    written atomically. An auditor that knows which steps it completed (every action done as the page says)
    gives their number; otherwise the steps the session went through count."""
    gaps = session.gaps if session else []
    if completed is None:
        completed = session.completed_steps if session else 0
    total = session.total_steps if session and session.total_steps else total_steps
    failed, success = audit_outcome(total, completed, gaps)
    finished = utcnow()
    result = AuditResult(
        walkthrough_id=request.walkthrough_id,
        walkthrough_title=title,
        library_name=request.library_name,
        library_version=request.library_version,
        started_at=started_at,
        completed_at=finished,
        duration_seconds=round((finished - started_at).total_seconds(), 3),
        total_steps=total,
        completed_steps=completed,
        failed_steps=failed,
        success=success,
        gaps=gaps,
        execution_log=json.dumps(execution_log, default=str),
        agent_log_path=str(request.logs_dir / "audit.log"),
    )
    write_model(request.audit_path, result)
    return result
