"""What both auditors share: the request, the observer that feeds live progress, the two agent logs, the MCP
client for the step server, and the audit result written at the end from the session file."""
import asyncio
import contextlib
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from audits.formats import AuditResult, audit_outcome
from audits.sandbox import Limits
from stackbench_site.jsonfiles import FormatError, load_model, write_model
from walkthroughs.formats import Gap, Session, session_path_for, utcnow, walkthrough_id_for

BACKENDS = ("rules", "claude")


class AuditError(Exception):
    """The audit could not run (not: it ran and found gaps). The message says why, for the user."""


@dataclass
class AuditRequest:
    walkthrough_path: Path
    output_dir: Path
    library_name: str = ""
    library_version: str = ""
    working_dir: Path | None = None
    limits: Limits = field(default_factory=Limits.from_env)
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


class AuditObserver:
    """Receives progress while an audit runs. The CLI prints it; the Celery task stores it on the run."""

    def step_started(self, number: int, total: int, title: str): ...

    def gap_reported(self, seq: int, gap: Gap): ...

    def command_started(self, command: str): ...

    def agent_finished(self, usage: dict | None, cost_usd: float | None): ...

    def should_stop(self) -> bool:
        return False

    def close(self): ...


class _OneThreadObserver(AuditObserver):
    """Runs every observer call on one thread of its own. The auditors call from async code and from
    helper threads; an observer that writes to Django's database may not be called from async code."""

    def __init__(self, inner: AuditObserver):
        self.inner = inner
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="audit-observer")

    def _call(self, name, *args):
        return self.pool.submit(getattr(self.inner, name), *args).result()

    def step_started(self, number, total, title):
        self._call("step_started", number, total, title)

    def gap_reported(self, seq, gap):
        self._call("gap_reported", seq, gap)

    def command_started(self, command):
        self._call("command_started", command)

    def agent_finished(self, usage, cost_usd):
        self._call("agent_finished", usage, cost_usd)

    def should_stop(self) -> bool:
        return self._call("should_stop")

    def close(self):
        self._call("close")
        self.pool.shutdown()


class AuditLog:
    """agent_logs/audit.log (for people) and agent_logs/audit_tools.jsonl (one JSON object per tool call)."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "audit.log"
        self.text = open(self.path, "a", encoding="utf-8")
        self.tools = open(folder / "audit_tools.jsonl", "a", encoding="utf-8")

    def line(self, message: str):
        self.text.write(f"{utcnow().strftime('%H:%M:%S')} {message}\n")
        self.text.flush()

    def tool_call(self, tool: str, tool_input: Any, output: Any, duration: float, is_error: bool = False):
        record = {
            "time": utcnow().isoformat(), "tool": tool, "input": tool_input,
            "output": summarize(output), "duration_ms": round(duration * 1000, 2), "is_error": is_error,
        }
        self.tools.write(json.dumps(record, default=str) + "\n")
        self.tools.flush()
        self.line(f"{'ERROR ' if is_error else ''}{tool} {summarize(tool_input, 160)} -> {summarize(output, 160)}")

    def close(self):
        for handle in (self.text, self.tools):
            # On a full disk the audit has already failed with a clear message; closing still frees the file.
            with contextlib.suppress(OSError):
                handle.close()
        # An empty log says nothing, and an empty .jsonl would read as a valid trace of no calls.
        folder = self.path.parent
        for leftover in folder.iterdir():
            if leftover.is_file() and leftover.stat().st_size == 0:
                leftover.unlink()
        with contextlib.suppress(OSError):
            folder.rmdir()


def summarize(value: Any, limit: int = 2000) -> Any:
    """Tool outputs can be huge (a command's whole output); the trace keeps a readable head."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more characters]"


class SessionFollower:
    """Reads the session file after each step-server call and passes on the gaps reported since. Both
    auditors learn of gaps this one way, from what the step server actually stored."""

    def __init__(self, path: Path, observer: AuditObserver):
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

    def saw_tool_result(self, tool: str, payload: Any):
        """Called with every step-server result: a served step is progress."""
        if tool.endswith("next_step") and isinstance(payload, dict) and "step_number" in payload:
            self.observer.step_started(payload["step_number"], payload.get("total_steps", 0), payload.get("title", ""))
        self.poll()


def step_server_command(request: AuditRequest) -> tuple[str, list[str], dict[str, str]]:
    """How to launch our MCP step server for this audit: command, arguments and its whole environment."""
    roots = [request.walkthrough_path.parent, *request.allowed_roots]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
        "STACKBENCH_SESSION_DIR": str(request.output_dir),
        "STACKBENCH_ALLOWED_ROOTS": os.pathsep.join(str(r) for r in roots),
        "PYTHONUNBUFFERED": "1",
    }
    return sys.executable, ["-m", "walkthroughs.mcp_server"], env


class StepClient:
    """Our MCP client for the step server over real stdio, logging every call to the tool trace."""

    def __init__(self, request: AuditRequest, log: AuditLog, follower: SessionFollower):
        self.request, self.log, self.follower = request, log, follower
        self._stack = None
        self.session = None

    async def __aenter__(self):
        from contextlib import AsyncExitStack

        from mcp import ClientSession, StdioServerParameters, stdio_client

        command, args, env = step_server_command(self.request)
        self._stack = AsyncExitStack()
        errlog = open(self.request.logs_dir / "step_server.stderr", "a")
        self._stack.callback(errlog.close)
        params = StdioServerParameters(command=command, args=args, env=env, cwd=str(self.request.output_dir))
        try:
            read, write = await self._stack.enter_async_context(stdio_client(params, errlog=errlog))
            self.session = await self._stack.enter_async_context(ClientSession(read, write))
            await asyncio.wait_for(self.session.initialize(), timeout=30)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc):
        await self._stack.aclose()

    async def call(self, tool: str, arguments: dict | None = None) -> dict:
        arguments = arguments or {}
        started = time.monotonic()
        result = await asyncio.wait_for(self.session.call_tool(tool, arguments), timeout=60)
        text = "".join(getattr(block, "text", "") for block in result.content)
        payload = result.structured_content if result.structured_content is not None else text
        self.log.tool_call(f"mcp__walkthrough__{tool}", arguments, payload, time.monotonic() - started, result.is_error)
        self.follower.saw_tool_result(tool, payload)
        if result.is_error:
            raise AuditError(f"the step server refused {tool}: {text}")
        return result.structured_content or json.loads(text)


def write_audit_result(request: AuditRequest, started_at: datetime, session: Session | None,
                       total_steps: int, title: str, execution_log: list) -> AuditResult:
    """The audit file, from the session file's gaps and progress (as the spec says), validated and
    written atomically."""
    gaps = session.gaps if session else []
    completed = session.completed_steps if session else 0
    total = session.total_steps if session and session.total_steps else total_steps
    failed, success = audit_outcome(total, completed, gaps)
    finished = utcnow()
    result = AuditResult(
        walkthrough_id=request.walkthrough_id, walkthrough_title=title, library_name=request.library_name,
        library_version=request.library_version, started_at=started_at, completed_at=finished,
        duration_seconds=round((finished - started_at).total_seconds(), 3), total_steps=total,
        completed_steps=completed, failed_steps=failed, success=success, gaps=gaps,
        execution_log=json.dumps(execution_log, default=str), agent_log_path=str(request.logs_dir / "audit.log"),
    )
    write_model(request.audit_path, result)
    return result


def run_audit(request: AuditRequest, backend: str = "rules", observer: AuditObserver | None = None,
              **backend_options) -> AuditResult:
    """Audit one walkthrough with the chosen backend; raises AuditError when the audit cannot run."""
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
    observer = _OneThreadObserver(observer or AuditObserver())
    try:
        if backend == "claude":
            from audits.claude_auditor import audit_with_claude

            return asyncio.run(audit_with_claude(request, observer, **backend_options))
        from audits.rules_auditor import audit_with_rules

        return asyncio.run(audit_with_rules(request, observer))
    except OSError as exc:
        raise AuditError(f"cannot write the audit's files in {request.output_dir}: {exc.strerror or exc}") from None
    finally:
        observer.close()
