"""The Claude auditor: a Claude agent (claude-agent-sdk) driving the same MCP step server as the rule-based
auditor, following each step with Bash/Read/Write/Glob in a throwaway folder and reporting gaps through
report_gap. Same inputs, same outputs; offered only when a Claude credential is configured."""

import asyncio
import gc
import os
import shutil
import tempfile
from pathlib import Path

from stackbench.agent.runner import AgentLog, AgentWatch, ClaudeSettings, agent_options, converse
from stackbench.auditing.common import (
    AuditError,
    AuditObserver,
    AuditRequest,
    SessionFollower,
    step_server_command,
    write_audit_result,
)
from stackbench.formats.results import AuditResult
from stackbench.formats.walkthrough import GAP_TYPES
from stackbench.lib.clock import utcnow

STEP_TOOLS = ("start_walkthrough", "next_step", "report_gap", "walkthrough_status")
ALLOWED_TOOLS = ["Bash", "Read", "Write", "Glob"] + [f"mcp__walkthrough__{tool}" for tool in STEP_TOOLS]

SYSTEM_PROMPT = f"""You audit a software tutorial by following it exactly as a newcomer would, one step at a time,
in the current working directory (a throwaway folder that is yours).

Workflow:
1. Call mcp__walkthrough__start_walkthrough with the walkthrough path you are given.
2. Repeat: call mcp__walkthrough__next_step; read contentForUser (what the reader sees), operationsForAgent
   (what to do) and contextForAgent; carry the step out with Bash, Write, Read and Glob (run the commands,
   create the files with the content shown, run the code); every time something would stop or confuse a
   reader, call mcp__walkthrough__report_gap before moving on.
3. Stop when next_step answers status "complete", call mcp__walkthrough__walkthrough_status, then reply
   "All steps completed." You cannot skip ahead: steps only come from next_step.

Read each step as a careful newcomer: follow the first of several alternative ways (other package managers,
"Alternatively", tabs per OS: the one for Linux); never run prose, notes, `$ ` prompts or output lines; a block
goes in the file the sentence before it or its title names ("update" means edit that file, not replace it,
unless the block is the whole file); start dev servers in the background and request the URLs the step
mentions; when a tool is missing and the step offers another way, report it once and take that way.

Evidence first: critical and warning gaps only for what you observed while following the step:
- execution_error: a command fails or code raises (critical), or the output the step shows differs from what
  it prints (warning). Put the command and the tail of its output (expected vs actual) in context.
- logical_flow: the step needs a file, name or URL no earlier step created (critical).
- prerequisite: a tool, package, account or environment variable the tutorial never installs or mentions, that
  you found missing (critical when it blocks you, warning when you could go on another way).
- clarity: a placeholder the reader must fill in that the step never explains (warning); vague wording (info).
- completeness: no way for the reader to check the step worked (info).
- cross_reference: another page or concept referred to without a link (info).
Text alone (wording, missing links) is info, at most one per kind per step; text only in operationsForAgent
is never a reader's gap. One root cause, one gap: when a later step fails because of an earlier failure, say
so in an info gap instead of repeating it. Failures of your machine's network (a host that does not resolve)
are not the docs' fault: mention them in your final reply, never as gaps.
Severity: critical blocks progress; warning confuses or costs extra work; info is a minor improvement.
Allowed gap_type values: {", ".join(GAP_TYPES)}. Describe what the reader runs into, suggest a fix, and
give evidence. Never invent problems you did not observe, and do not fix the tutorial yourself beyond what a
reader could reasonably guess."""


def build_prompt(request: AuditRequest) -> str:
    library = f"{request.library_name} {request.library_version}".strip() or "(not given)"
    return (
        f"Audit this walkthrough by executing it step by step.\n\nWalkthrough file: {request.walkthrough_path}\n"
        f"Library: {library}\n\nBegin now: call mcp__walkthrough__start_walkthrough."
    )


async def audit_with_claude(request: AuditRequest, observer: AuditObserver, settings: ClaudeSettings) -> AuditResult:
    reason = settings.unavailable_reason()
    if reason:
        raise AuditError(reason)
    started = utcnow()
    log = AgentLog(request.logs_dir)
    follower = SessionFollower(request.session_path, observer)
    # Named like a sandbox's folder (with this worker's pid), so a worker that starts after this one was killed
    # sweeps it away with the sandboxes (sandbox.sweep_leftovers).
    root = Path(
        tempfile.mkdtemp(
            prefix=f"stackbench_sandbox_{os.getpid()}_claude_{request.walkthrough_id}_",
            dir=request.sandbox.scratch_dir,
        )
    )
    work_dir = Path(request.working_dir).resolve() if request.working_dir else root / "work"
    work_dir.mkdir(parents=True, exist_ok=True)
    (root / "home").mkdir(exist_ok=True)
    # The agent works in its throwaway folders only; the walkthrough file and the run's outputs are the step
    # server's: the agent gets steps from next_step, in order, and cannot read ahead.
    watch = AgentWatch(
        log,
        observer,
        on_step_server_result=follower.saw_tool_result,
        confine_to=[root, work_dir],
        hidden=[request.walkthrough_path, request.output_dir],
    )
    command, args, server_env = step_server_command(request)
    stderr_log = open(request.logs_dir / "claude_cli.stderr", "a", encoding="utf-8")

    def write_stderr(line: str) -> None:
        stderr_log.write(line + "\n")
        stderr_log.flush()

    options = agent_options(
        settings,
        root / "home",
        watch,
        system_prompt=SYSTEM_PROMPT,
        allowed_tools=ALLOWED_TOOLS,
        cwd=str(work_dir),
        mcp_servers={"walkthrough": {"type": "stdio", "command": command, "args": args, "env": server_env}},
        stderr=write_stderr,
    )
    problem = None
    try:
        log.line(
            f"Claude audit of {request.walkthrough_path} in {work_dir} (model {settings.model or 'default'}, "
            f"max {settings.max_turns} turns, ${settings.max_budget_usd} budget)"
        )
        problem = await converse(options, build_prompt(request), settings, watch, observer, log)
    except BaseException:
        log.close()
        raise
    finally:
        # The SDK leaves the CLI's stderr pipe to reach end-of-file on its own; give it a moment and collect
        # it while the event loop still runs, or its transport complains at exit that the loop is closed.
        await asyncio.sleep(0.5)
        gc.collect()
        await asyncio.sleep(0)
        stderr_log.close()
        shutil.rmtree(root, ignore_errors=True)
    printed = (request.logs_dir / "claude_cli.stderr").read_text(errors="replace").splitlines()
    # The CLI's own notices (⚠ …) are not why a run failed; what else it printed may be.
    stderr_tail = "\n".join(line for line in printed if not line.startswith("⚠")).strip()[-800:]
    if problem and stderr_tail:
        problem += f"\nWhat the CLI printed: {stderr_tail}"
    session = follower.poll()
    title = session.walkthrough_id if session else request.walkthrough_id
    total = session.total_steps if session else 0
    try:
        result = write_audit_result(request, started, session, total, title, execution_log=[])
        log.line(problem or "audit finished")
    finally:
        log.close()
    if problem:
        raise AuditError(problem)
    return result
