"""The rule-based auditor: an MCP client of the step server that follows each step in one sandboxed terminal
and reports what a newcomer would trip over. No network, no model. It never reads the walkthrough file:
it sees only what next_step serves."""

import asyncio
import os

from audits.engines.auditors.common import (
    AuditError,
    AuditObserver,
    AuditRequest,
    SessionFollower,
    StepClient,
    write_audit_result,
)
from audits.engines.auditors.gap_rules import History, Outcome, assess_step
from audits.engines.auditors.shell import CommandResult, Terminal
from audits.engines.auditors.step_reading import read_step
from audits.engines.formats import AuditResult
from audits.engines.sandbox import SandboxUnavailable, open_sandbox
from stackbench_site.lib.clock import utcnow
from walkthroughs.engines.claude_agent import AgentLog


class AuditCancelled(AuditError):
    pass


async def audit_with_rules(request: AuditRequest, observer: AuditObserver) -> AuditResult:
    started = utcnow()
    log = AgentLog(request.logs_dir)
    follower = SessionFollower(request.session_path, observer)
    # The sandbox starts while the step server does (each takes a moment; together they take the longer one).
    making = asyncio.create_task(
        asyncio.to_thread(open_sandbox, request.sandbox, request.walkthrough_id, request.working_dir)
    )
    sandbox = terminal = None
    execution_log, title, total, cancelled = [], request.walkthrough_id, 0, False
    try:
        async with StepClient(request, log, follower) as client:
            try:
                sandbox = await making
            except SandboxUnavailable as exc:
                raise AuditError(f"no sandbox for the tutorial's commands: {exc}") from None
            observer.sandbox_ready(sandbox.describe())
            terminal = Terminal(sandbox, observer.should_stop)
            log.line(
                f"audit of {request.walkthrough_path} in {sandbox.work} ({describe(sandbox)}; sandbox ready in "
                f"{sandbox.start_seconds:.2f} s)"
            )
            info = await client.call(
                "start_walkthrough", {"walkthrough_path": str(request.walkthrough_path), "resume": False}
            )
            title, total = info["title"], info["total_steps"]
            history = History(seen_text=f"{info['title']}\n{info.get('description') or ''}")
            while True:
                if observer.should_stop():
                    cancelled = True
                    break
                step = await client.call("next_step")
                if step.get("status") == "complete":
                    break
                findings, record = await asyncio.to_thread(follow_step, step, terminal, history, log, observer)
                execution_log.append(record)
                for finding in findings:
                    await client.call("report_gap", finding.arguments())
            await client.call("walkthrough_status")
    finally:
        if terminal is not None:
            terminal.close()
        # A sandbox still starting when the step server failed is closed once it has started.
        sandbox = sandbox or await _result_or_none(making)
        if sandbox is not None:
            sandbox.close()
        try:
            log.line("audit cancelled" if cancelled else "audit finished")
        finally:
            log.close()
    result = write_audit_result(request, started, follower.poll(), total, title, execution_log)
    if cancelled:
        raise AuditCancelled("the audit was cancelled")
    return result


async def _result_or_none(task: asyncio.Task):
    try:
        return await task
    except Exception:
        return None


def follow_step(step: dict, terminal: Terminal, history: History, log: AgentLog, observer: AuditObserver):
    """Do what the step says, in order, stopping at the first failure as a reader would; then judge it."""
    number = step["step_number"]
    plan = read_step(step, path_for_lookup=terminal.env["PATH"])
    outcomes: list[Outcome] = []
    unexplained = {placeholder for placeholder, _ in plan.placeholders}
    for action in plan.actions:
        if observer.should_stop():
            break
        if any(placeholder in action.text for placeholder in unexplained):
            outcomes.append(Outcome(action, skipped="contains a placeholder the reader must fill in"))
            log.line(f"step {number}: skipped (placeholder) {action.text[:120]!r}")
            continue
        observer.command_started(action.path and f"write {action.path}" or action.text.strip().splitlines()[0][:300])
        result = _perform(action, terminal, number)
        tool = {"file": "Write", "python": "Python"}.get(action.kind, "Bash")
        log.tool_call(
            tool,
            {"path": action.path} if action.kind == "file" else {"command": action.text},
            {"exit_code": result.exit_code, "timed_out": result.timed_out, "output": result.output},
            result.duration,
            is_error=not result.ok,
        )
        outcomes.append(Outcome(action, result))
        if not result.ok:
            break
    findings = assess_step(step, plan, outcomes, history, terminal.work_dir, terminal.cwd_host)
    history.remember(step, plan, outcomes)
    record = {
        "step_number": number,
        "title": step.get("title", ""),
        "actions": [
            {
                "kind": o.action.kind,
                "source": o.action.source,
                "command": o.action.path or o.action.text[:2000],
                "skipped": o.skipped or None,
                "exit_code": o.result.exit_code if o.result else None,
                "duration_seconds": round(o.result.duration, 3) if o.result else None,
                "output_tail": o.result.output[-2000:] if o.result else None,
            }
            for o in outcomes
        ],
        "gaps": [f.gap_type for f in findings],
    }
    return findings, record


def _perform(action, terminal: Terminal, step_number: int) -> CommandResult:
    if action.kind == "file":
        return _write_file(action, terminal)
    if action.kind == "background":
        return terminal.start_background(action.text)
    if action.kind == "python":
        return terminal.run_python(action.text, f"<step {step_number}>")
    return terminal.run(action.text)


def _write_file(action, terminal: Terminal) -> CommandResult:
    target = terminal.resolve_inside(action.path)
    if target is None:
        return CommandResult(
            f"write {action.path}", 1, f"{action.path} lies outside the reader's folders; not written", 0.0
        )
    existed = terminal.sandbox.host_path(target).exists()
    try:
        written = terminal.sandbox.write_file(target, action.text, append=action.append and existed)
    except OSError as exc:
        return CommandResult(f"write {action.path}", 1, f"cannot write {action.path}: {exc.strerror or exc}", 0.0)
    verb = "appended to" if action.append and existed else "wrote"
    return CommandResult(
        f"write {action.path}",
        0,
        f"{verb} {os.path.relpath(written, terminal.work_dir)} ({len(action.text.encode())} bytes)",
        0.0,
    )


def describe(sandbox) -> str:
    """The reader's machine in one line, for the log."""
    facts = sandbox.describe()
    return (
        f"sandbox: {facts['confinement']}; Python {facts['python']}, Node {facts['node']}, network: "
        f"{facts['network']}; {facts['limits']}; cgroups: {facts['cgroups']}"
    )
