"""Running a Claude agent (claude-agent-sdk, and the Claude Code CLI it bundles): its settings, the environment
the CLI sees, the log of every tool call, the hooks that write it, and the conversation loop with its limits
(time, cancel, turns, budget) and the errors a person can act on. The Claude auditor and the Claude walkthrough
generator both run their agent through this."""

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stackbench.lib.clock import utcnow

if TYPE_CHECKING:
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, HookMatcher, Message, ResultMessage
    from claude_agent_sdk.types import HookContext, HookEvent, HookInput, HookJSONOutput

GRACE_AFTER_COMPLETE_SECONDS = 60


@dataclass
class ClaudeSettings:
    model: str | None = None
    max_turns: int = 200
    max_budget_usd: float = 5.0
    timeout: float = 1800.0
    max_retries: int = 4  # the CLI's retries of a failed model request (overloaded, rate limited, 5xx)
    cli_path: str | None = None
    credentials: dict[str, str] = field(default_factory=dict)  # ANTHROPIC_API_KEY or another Claude credential
    environment: dict[str, str] = field(default_factory=dict)  # what else of the worker's environment the CLI sees

    def unavailable_reason(self) -> str | None:
        if not self.credentials:
            return (
                "No Claude credential is configured: set ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN) in the "
                "environment of the web app and the worker to offer the Claude auditor."
            )
        if self.cli_path and not Path(self.cli_path).is_file():
            return f"STACKBENCH_CLAUDE_CLI points at {self.cli_path}, which does not exist."
        return None


def cli_environment(settings: ClaudeSettings, home: Path) -> dict[str, str]:
    """The CLI's whole environment. The SDK starts the CLI with our own environment merged under this one, so every
    variable of ours that is not passed on is blanked: commands the agent runs must not see the app's secrets."""
    env = dict.fromkeys(os.environ, "")
    env.update(settings.environment)
    env.update(settings.credentials)
    env.update(
        HOME=str(home),
        CLAUDE_CODE_ENTRYPOINT="sdk-py",
        DISABLE_AUTOUPDATER="1",
        CI="1",
        # Commands the agent runs get an environment without the credential (the CLI strips it from them).
        CLAUDE_CODE_SUBPROCESS_ENV_SCRUB="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        CLAUDE_CODE_MAX_RETRIES=str(settings.max_retries),
    )
    if os.geteuid() == 0:
        # Claude Code refuses bypassPermissions as root unless it is told it runs in a sandbox.
        env["IS_SANDBOX"] = "1"
    return env


def agent_options(settings: ClaudeSettings, home: Path, watch: "AgentWatch", **fields: Any) -> "ClaudeAgentOptions":
    """The CLI's options for one agent: our limits, model, environment and hooks, plus what its task adds (system
    prompt, tools, working folder, MCP servers). Permissions are bypassed: the agent works in a throwaway folder."""
    # The SDK takes a second to import: only runs that use an agent pay for it.
    from claude_agent_sdk import ClaudeAgentOptions

    return ClaudeAgentOptions(
        permission_mode="bypassPermissions",
        hooks=watch.hooks(),
        max_turns=settings.max_turns,
        max_budget_usd=settings.max_budget_usd,
        model=settings.model,
        env=cli_environment(settings, home),
        cli_path=settings.cli_path,
        **fields,
    )


class AgentObserver:
    """Receives what an agent does while it runs."""

    def command_started(self, command: str) -> None: ...

    def agent_finished(self, usage: dict[str, Any] | None, cost_usd: float | None) -> None: ...

    def should_stop(self) -> bool:
        return False


class AgentLog:
    """agent_logs/audit.log (for people) and agent_logs/audit_tools.jsonl (one JSON object per tool call), the two
    logs of whoever follows a walkthrough: an agent, or the rule-based auditor."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "audit.log"
        self.text = open(self.path, "a", encoding="utf-8")
        self.tools = open(folder / "audit_tools.jsonl", "a", encoding="utf-8")

    def line(self, message: str) -> None:
        self.text.write(f"{utcnow().strftime('%H:%M:%S')} {message}\n")
        self.text.flush()

    def tool_call(self, tool: str, tool_input: Any, output: Any, duration: float, is_error: bool = False) -> None:
        record = {
            "time": utcnow().isoformat(),
            "tool": tool,
            "input": tool_input,
            "output": summarize(output),
            "duration_ms": round(duration * 1000, 2),
            "is_error": is_error,
        }
        self.tools.write(json.dumps(record, default=str) + "\n")
        self.tools.flush()
        self.line(f"{'ERROR ' if is_error else ''}{tool} {summarize(tool_input, 160)} -> {summarize(output, 160)}")

    def close(self) -> None:
        for handle in (self.text, self.tools):
            # On a full disk the run has already failed with a clear message; closing still frees the file.
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


def tool_payload(response: Any) -> Any:
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


FILE_TOOLS = {"Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "NotebookEdit", "LS"}


def _inside(path: Path, root: Path) -> bool:
    return path.expanduser().resolve().is_relative_to(root)


class AgentWatch:
    """The hooks: every tool call goes to the two logs, and step-server results go to on_step_server_result
    (live progress), which is told too when the walkthrough is complete."""

    def __init__(
        self,
        log: AgentLog,
        observer: AgentObserver,
        on_step_server_result: Callable[[str, Any], None] | None = None,
        confine_to: list[Path] | None = None,
        hidden: list[Path] | None = None,
    ) -> None:
        self.log, self.observer, self.on_step_server_result = log, observer, on_step_server_result
        self.confine_to = [path.resolve() for path in confine_to or []]
        self.hidden = [path.resolve() for path in hidden or []]
        self.started: dict[str, float] = {}
        self.complete_at: float | None = None

    def refusal(self, tool: str, tool_input: dict[str, Any]) -> str | None:
        """Why a tool call may not run: a file tool reaching outside the agent's folders, or any tool naming a
        hidden path (the walkthrough file: steps come only from the step server, in order)."""
        if tool.startswith("mcp__"):
            return None
        text = json.dumps(tool_input)
        for path in self.hidden:
            if str(path) in text or (path.suffix and path.name in text and tool != "Bash"):
                return f"{path.name} is not available to the agent: take the steps from next_step, one at a time."
        if tool in FILE_TOOLS and self.confine_to:
            for key in ("file_path", "path", "notebook_path"):
                value = tool_input.get(key)
                if value and not any(_inside(Path(value), root) for root in self.confine_to):
                    return (
                        f"{value} is outside the folders this agent works in ({', '.join(map(str, self.confine_to))})."
                    )
        return None

    async def before(
        self, hook_input: "HookInput", tool_use_id: str | None, context: "HookContext"
    ) -> "HookJSONOutput":
        event: Mapping[str, Any] = hook_input  # the CLI's JSON, read as it comes: promised fields may be missing
        tool, tool_input = event.get("tool_name", "?"), event.get("tool_input") or {}
        refusal = self.refusal(tool, tool_input)
        if refusal:
            self.log.tool_call(tool, tool_input, f"refused: {refusal}", 0.0, is_error=True)
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": refusal,
                }
            }
        self.started[tool_use_id or ""] = time.monotonic()
        if event.get("tool_name") == "Bash":
            command = str((event.get("tool_input") or {}).get("command", ""))
            await asyncio.to_thread(self.observer.command_started, command[:300])
        return {}

    async def after(self, hook_input: "HookInput", tool_use_id: str | None, context: "HookContext") -> "HookJSONOutput":
        event: Mapping[str, Any] = hook_input  # the CLI's JSON, read as it comes: promised fields may be missing
        tool = event.get("tool_name", "?")
        started = self.started.pop(tool_use_id or "", None)
        duration = (event.get("duration_ms") or 0) / 1000 if started is None else time.monotonic() - started
        if event.get("hook_event_name") == "PostToolUseFailure":
            # A failed call (a command's non-zero exit, a refused input) comes with its error, not a response.
            payload, is_error = summarize(str(event.get("error", ""))), True
        else:
            payload = tool_payload(event.get("tool_response"))
            is_error = isinstance(event.get("tool_response"), dict) and bool(event["tool_response"].get("isError"))
        self.log.tool_call(tool, event.get("tool_input"), payload, duration, is_error)
        if self.on_step_server_result is not None and tool.startswith("mcp__walkthrough__"):
            await asyncio.to_thread(self.on_step_server_result, tool, payload)
            if tool.endswith("next_step") and isinstance(payload, dict) and payload.get("status") == "complete":
                self.complete_at = time.monotonic()
        return {}

    def hooks(self) -> "dict[HookEvent, list[HookMatcher]]":
        from claude_agent_sdk import HookMatcher

        return {
            "PreToolUse": [HookMatcher(hooks=[self.before])],
            "PostToolUse": [HookMatcher(hooks=[self.after])],
            "PostToolUseFailure": [HookMatcher(hooks=[self.after])],
        }


async def converse(  # type: ignore[return]  # the SDK types ClaudeSDKClient.__aexit__ as bool; it never swallows
    options: "ClaudeAgentOptions",
    prompt: str,
    settings: ClaudeSettings,
    watch: AgentWatch,
    observer: AgentObserver,
    log: AgentLog,
) -> str | None:
    """Talk to the agent until its result arrives, the walkthrough completes, a limit hits or the run is
    cancelled. Returns why the agent's work is incomplete, or None."""
    from claude_agent_sdk import (
        AssistantMessage,
        ClaudeSDKClient,
        ClaudeSDKError,
        CLIConnectionError,
        CLIJSONDecodeError,
        CLINotFoundError,
        ProcessError,
        ResultMessage,
        SystemMessage,
        TextBlock,
        ToolUseBlock,
    )

    deadline = time.monotonic() + settings.timeout
    api_error = None
    timed_out = f"the Claude agent did not finish within {settings.timeout:.0f} s"
    try:
        # The deadline is enforced by this loop, not by cancelling the client: the SDK's close() must run to
        # completion to terminate the CLI process.
        async with ClaudeSDKClient(options=options) as client:
            await client.query(prompt)
            inbox: asyncio.Queue[Message | BaseException | object] = asyncio.Queue()
            pump = asyncio.create_task(_pump(client, inbox))
            try:
                while True:
                    if time.monotonic() > deadline:
                        return timed_out
                    if await asyncio.to_thread(observer.should_stop):
                        await client.interrupt()
                        return "the audit was cancelled"
                    if (
                        watch.complete_at is not None
                        and time.monotonic() > watch.complete_at + GRACE_AFTER_COMPLETE_SECONDS
                    ):
                        return None
                    try:
                        message = await asyncio.wait_for(
                            inbox.get(), timeout=min(2.0, max(deadline - time.monotonic(), 0.01))
                        )
                    except TimeoutError:
                        continue
                    if message is _END:
                        if watch.on_step_server_result is None or watch.complete_at:
                            return None
                        return "the agent stopped before the walkthrough was complete"
                    if isinstance(message, BaseException):
                        raise message
                    if isinstance(message, SystemMessage) and message.subtype == "api_retry":
                        problem = _retry_problem(message.data, log)
                        if problem:
                            return problem
                    if isinstance(message, AssistantMessage):
                        text = " ".join(b.text for b in message.content if isinstance(b, TextBlock)).strip()
                        if getattr(message, "error", None) == "authentication_failed":
                            return f"Claude rejected the credential ({text or 'authentication failed'})"
                        if getattr(message, "error", None):
                            api_error = f"the model's API kept failing after {settings.max_retries} retries: {text}"
                        for block in message.content:
                            if isinstance(block, TextBlock) and block.text.strip():
                                log.line(f"agent: {summarize(block.text.strip(), 400)}")
                            elif isinstance(block, ToolUseBlock):
                                log.line(f"agent calls {block.name}")
                    elif isinstance(message, ResultMessage):
                        await asyncio.to_thread(observer.agent_finished, message.usage, message.total_cost_usd)
                        problem = _result_problem(message)
                        return (api_error or problem) if problem else None
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


async def _pump(client: "ClaudeSDKClient", inbox: "asyncio.Queue[Message | BaseException | object]") -> None:
    """Move the agent's messages into a queue, so waiting for one can time out without ending the stream."""
    try:
        async for message in client.receive_response():
            await inbox.put(message)
        await inbox.put(_END)
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        await inbox.put(exc)


def _retry_problem(data: dict[str, Any], log: AgentLog) -> str | None:
    """The CLI retries a failed model request and says so. A rejected credential never gets better: stop at once;
    anything else (overloaded, rate limited, a server error) is logged while the CLI retries."""
    status, error = data.get("error_status"), data.get("error") or "error"
    if status in (401, 403) or error == "authentication_failed":
        return (
            f"Claude rejected the credential (HTTP {status}, {error}): check ANTHROPIC_API_KEY, or the key of the "
            "gateway ANTHROPIC_BASE_URL points at"
        )
    log.line(
        f"the model's API answered HTTP {status} ({error}); the CLI retries (attempt {data.get('attempt')} of "
        f"{data.get('max_retries')})"
    )
    return None


def _result_problem(message: "ResultMessage") -> str | None:
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
