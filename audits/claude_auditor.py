"""The Claude auditor: a Claude agent (claude-agent-sdk) driving the same MCP step server as the rule-based
auditor, following each step with Bash/Read/Write/Glob in a throwaway folder and reporting gaps through
report_gap. Same inputs, same outputs; offered only when a Claude credential is configured."""
import asyncio
import gc
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from audits.auditing import (
    AuditError, AuditLog, AuditObserver, AuditRequest, SessionFollower, step_server_command, summarize,
    write_audit_result,
)
from audits.formats import AuditResult
from audits.sandbox import make_workspace, remove_tree
from stackbench_site.env import envfloat, envint, envstr
from walkthroughs.formats import GAP_TYPES, utcnow

CREDENTIAL_VARIABLES = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN")
PROVIDER_SWITCHES = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX")
# What the CLI process (and so every command the agent runs) may see of our environment.
CLI_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "TZ", "TERM", "SSL_CERT_FILE", "SSL_CERT_DIR", "http_proxy",
                   "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ANTHROPIC_BASE_URL",
                   "AWS_REGION", "AWS_PROFILE", "CLOUD_ML_REGION", "ANTHROPIC_VERTEX_PROJECT_ID")
STEP_TOOLS = ("start_walkthrough", "next_step", "report_gap", "walkthrough_status")
ALLOWED_TOOLS = ["Bash", "Read", "Write", "Glob"] + [f"mcp__walkthrough__{tool}" for tool in STEP_TOOLS]
GRACE_AFTER_COMPLETE_SECONDS = 60

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

Gap types (gap_type) and typical severity:
- execution_error: a command fails or code raises (critical). Put the command and the tail of its output
  in context.
- logical_flow: the step uses a file, name or resource no earlier step created (critical), e.g. reads
  config.yaml that was never written.
- prerequisite: a tool, package, account or environment variable the tutorial never installs or mentions
  (critical when it blocks you, warning otherwise), e.g. `npm` used but Node.js never mentioned.
- clarity: vague or ambiguous instructions, placeholders never explained, operations the reader is never
  shown (warning), e.g. "configure it in the usual way".
- completeness: no way for the reader to check the step worked: no expected output or success indicator
  (info).
- cross_reference: another page or concept referred to without a link (info).
Severity: critical blocks progress; warning confuses or costs extra work; info is a minor improvement.
Allowed gap_type values: {", ".join(GAP_TYPES)}. Describe what the reader runs into, suggest a fix, and
give evidence. Never invent problems you did not observe, and do not fix the tutorial yourself beyond what a
reader could reasonably guess."""


@dataclass
class ClaudeSettings:
    model: str | None = None
    max_turns: int = 200
    max_budget_usd: float = 5.0
    timeout: float = 1800.0
    cli_path: str | None = None
    credentials: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls) -> "ClaudeSettings":
        credentials = {name: os.environ[name] for name in CREDENTIAL_VARIABLES + PROVIDER_SWITCHES if os.environ.get(name)}
        return cls(
            model=envstr("STACKBENCH_CLAUDE_MODEL") or None,
            max_turns=envint("STACKBENCH_CLAUDE_MAX_TURNS", 200),
            max_budget_usd=envfloat("STACKBENCH_CLAUDE_MAX_BUDGET_USD", 5.0),
            timeout=envfloat("STACKBENCH_CLAUDE_TIMEOUT", 1800.0),
            cli_path=envstr("STACKBENCH_CLAUDE_CLI") or None,
            credentials=credentials,
        )

    def unavailable_reason(self) -> str | None:
        if not self.credentials:
            return ("No Claude credential is configured: set ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN) in the "
                    "environment of the web app and the worker to offer the Claude auditor.")
        if self.cli_path and not Path(self.cli_path).is_file():
            return f"STACKBENCH_CLAUDE_CLI points at {self.cli_path}, which does not exist."
        return None


def claude_unavailable_reason() -> str | None:
    return ClaudeSettings.from_env().unavailable_reason()


def cli_environment(settings: ClaudeSettings, home: Path) -> dict[str, str]:
    """The CLI inherits our whole environment (the SDK merges os.environ under options.env), so every variable
    not on the allowlist is blanked: commands the agent runs must not see the app's secrets."""
    env = {name: "" for name in os.environ if name not in CLI_ENVIRONMENT}
    env.update({name: os.environ[name] for name in CLI_ENVIRONMENT if name in os.environ})
    env.update(settings.credentials)
    env.update(HOME=str(home), CLAUDE_CODE_ENTRYPOINT="sdk-py", DISABLE_AUTOUPDATER="1", CI="1")
    if os.geteuid() == 0:
        # Claude Code refuses bypassPermissions as root unless it is told it runs in a sandbox.
        env["IS_SANDBOX"] = "1"
    return env


def build_prompt(request: AuditRequest) -> str:
    library = f"{request.library_name} {request.library_version}".strip() or "(not given)"
    return (f"Audit this walkthrough by executing it step by step.\n\nWalkthrough file: {request.walkthrough_path}\n"
            f"Library: {library}\n\nBegin now: call mcp__walkthrough__start_walkthrough.")


def _tool_payload(response: Any) -> Any:
    """An MCP tool response as the CLI hands it to hooks: structured content, a content list, or text."""
    if isinstance(response, dict):
        if isinstance(response.get("structuredContent"), dict):
            return response["structuredContent"]
        if "content" in response:
            response = response["content"]
        else:
            return response
    if isinstance(response, list):
        response = "".join(block.get("text", "") for block in response if isinstance(block, dict))
    if isinstance(response, str):
        try:
            return json.loads(response)
        except json.JSONDecodeError:
            return response
    return response


class _AgentWatch:
    """The hooks: every tool call goes to the two logs, and step-server results feed live progress."""

    def __init__(self, log: AuditLog, follower: SessionFollower, observer: AuditObserver):
        self.log, self.follower, self.observer = log, follower, observer
        self.started: dict[str, float] = {}
        self.complete_at: float | None = None

    async def before(self, hook_input: dict, tool_use_id: str | None, context) -> dict:
        self.started[tool_use_id or ""] = time.monotonic()
        if hook_input.get("tool_name") == "Bash":
            command = str((hook_input.get("tool_input") or {}).get("command", ""))
            await asyncio.to_thread(self.observer.command_started, command[:300])
        return {}

    async def after(self, hook_input: dict, tool_use_id: str | None, context) -> dict:
        tool = hook_input.get("tool_name", "?")
        started = self.started.pop(tool_use_id or "", None)
        duration = (hook_input.get("duration_ms") or 0) / 1000 if started is None else time.monotonic() - started
        payload = _tool_payload(hook_input.get("tool_response"))
        is_error = isinstance(hook_input.get("tool_response"), dict) and bool(hook_input["tool_response"].get("isError"))
        self.log.tool_call(tool, hook_input.get("tool_input"), payload, duration, is_error)
        if self.follower is not None and tool.startswith("mcp__walkthrough__"):
            await asyncio.to_thread(self.follower.saw_tool_result, tool, payload)
            if tool.endswith("next_step") and isinstance(payload, dict) and payload.get("status") == "complete":
                self.complete_at = time.monotonic()
        return {}


async def audit_with_claude(request: AuditRequest, observer: AuditObserver,
                            settings: ClaudeSettings | None = None) -> AuditResult:
    settings = settings or ClaudeSettings.from_env()
    reason = settings.unavailable_reason()
    if reason:
        raise AuditError(reason)
    from claude_agent_sdk import ClaudeAgentOptions, HookMatcher

    started = utcnow()
    log = AuditLog(request.logs_dir)
    follower = SessionFollower(request.session_path, observer)
    root = make_workspace(None, f"stackbench_claude_{request.walkthrough_id}_")
    work_dir = Path(request.working_dir).resolve() if request.working_dir else root / "work"
    work_dir.mkdir(parents=True, exist_ok=True)
    (root / "home").mkdir(exist_ok=True)
    watch = _AgentWatch(log, follower, observer)
    command, args, server_env = step_server_command(request)
    stderr_log = open(request.logs_dir / "claude_cli.stderr", "a", encoding="utf-8")
    options = ClaudeAgentOptions(
        system_prompt=SYSTEM_PROMPT, allowed_tools=ALLOWED_TOOLS, permission_mode="bypassPermissions",
        cwd=str(work_dir), mcp_servers={"walkthrough": {"type": "stdio", "command": command, "args": args, "env": server_env}},
        hooks={"PreToolUse": [HookMatcher(hooks=[watch.before])], "PostToolUse": [HookMatcher(hooks=[watch.after])]},
        max_turns=settings.max_turns, max_budget_usd=settings.max_budget_usd, model=settings.model,
        env=cli_environment(settings, root / "home"), cli_path=settings.cli_path,
        stderr=lambda line: (stderr_log.write(line + "\n"), stderr_log.flush()),
    )
    problem = None
    try:
        log.line(f"Claude audit of {request.walkthrough_path} in {work_dir} (model {settings.model or 'default'}, "
                 f"max {settings.max_turns} turns, ${settings.max_budget_usd} budget)")
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
        remove_tree(root)
    stderr_tail = (request.logs_dir / "claude_cli.stderr").read_text(errors="replace").strip()[-800:]
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


async def converse(options, prompt, settings: ClaudeSettings, watch: _AgentWatch, observer: AuditObserver,
                    log: AuditLog) -> str | None:
    """Talk to the agent until its result arrives, the walkthrough completes, a limit hits or the run is
    cancelled. Returns why the audit is incomplete, or None."""
    from claude_agent_sdk import (
        AssistantMessage, ClaudeSDKClient, ClaudeSDKError, CLIConnectionError, CLIJSONDecodeError,
        CLINotFoundError, ProcessError, ResultMessage, TextBlock, ToolUseBlock,
    )

    deadline = time.monotonic() + settings.timeout
    timed_out = f"the Claude agent did not finish within {settings.timeout:.0f} s"
    try:
        # The deadline is enforced by this loop, not by cancelling the client: the SDK's close() must run to
        # completion to terminate the CLI process.
        async with ClaudeSDKClient(options=options) as client:
            await client.query(prompt)
            inbox: asyncio.Queue = asyncio.Queue()
            pump = asyncio.create_task(_pump(client, inbox))
            try:
                while True:
                    if time.monotonic() > deadline:
                        return timed_out
                    if await asyncio.to_thread(observer.should_stop):
                        await client.interrupt()
                        return "the audit was cancelled"
                    if watch.complete_at is not None and time.monotonic() > watch.complete_at + GRACE_AFTER_COMPLETE_SECONDS:
                        return None
                    try:
                        message = await asyncio.wait_for(inbox.get(), timeout=min(2.0, max(deadline - time.monotonic(), 0.01)))
                    except asyncio.TimeoutError:
                        continue
                    if message is _END:
                        return None if watch.complete_at else "the agent stopped before the walkthrough was complete"
                    if isinstance(message, BaseException):
                        raise message
                    if isinstance(message, AssistantMessage):
                        if getattr(message, "error", None) == "authentication_failed":
                            text = " ".join(b.text for b in message.content if isinstance(b, TextBlock))
                            return f"Claude rejected the credential ({text.strip() or 'authentication failed'})"
                        for block in message.content:
                            if isinstance(block, TextBlock) and block.text.strip():
                                log.line(f"agent: {summarize(block.text.strip(), 400)}")
                            elif isinstance(block, ToolUseBlock):
                                log.line(f"agent calls {block.name}")
                    elif isinstance(message, ResultMessage):
                        await asyncio.to_thread(observer.agent_finished, message.usage, message.total_cost_usd)
                        return _result_problem(message)
            finally:
                pump.cancel()
                await asyncio.gather(pump, return_exceptions=True)
    except CLINotFoundError as exc:
        return f"the Claude Code CLI was not found ({exc}); install claude-agent-sdk or set STACKBENCH_CLAUDE_CLI"
    except CLIJSONDecodeError as exc:
        return f"the Claude CLI sent a malformed message: {exc}"
    except ProcessError as exc:
        text = str(exc)
        if "Not logged in" in text or "authentication" in text.lower():
            return "Claude rejected the credential (Not logged in): check ANTHROPIC_API_KEY"
        return f"the Claude CLI failed (exit code {exc.exit_code})"
    except CLIConnectionError as exc:
        return f"the Claude CLI failed: {summarize(str(exc), 600)}"
    except ClaudeSDKError as exc:
        # MessageParseError and other protocol faults: the stream did not make sense.
        return f"the Claude CLI sent a malformed message: {summarize(str(exc), 600)}"


_END = object()


async def _pump(client, inbox: asyncio.Queue):
    """Move the agent's messages into a queue, so waiting for one can time out without ending the stream."""
    try:
        async for message in client.receive_response():
            await inbox.put(message)
        await inbox.put(_END)
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        await inbox.put(exc)


def _result_problem(message) -> str | None:
    if message.subtype == "error_max_turns":
        return f"the agent hit the turn limit ({message.num_turns} turns) before finishing"
    if message.subtype == "error_max_budget_usd" or "budget" in (message.subtype or ""):
        return f"the agent hit the budget limit (${message.total_cost_usd or 0:.2f}) before finishing"
    if message.is_error:
        detail = message.result or ", ".join(message.errors or []) or message.subtype
        if "Not logged in" in (detail or ""):
            return f"Claude rejected the credential ({detail}): check ANTHROPIC_API_KEY"
        return f"the agent ended with an error: {detail}"
    return None

