"""A scripted model: a local Anthropic Messages API (POST /v1/messages, streamed or not, and
/v1/messages/count_tokens) that the real Claude Code CLI talks to through ANTHROPIC_BASE_URL. A small
deterministic policy reads the conversation the CLI sends (its latest tool results) and chooses the next tool
call, as a model would: start the walkthrough, take each step, run the commands a step shows with Bash, report a
gap when one fails, finish with the status call. Scenarios change what it answers (errors, limits, misbehaviour).

Only the model is scripted: the CLI, its MCP client, hooks, permission mode and tools are the real ones."""

import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FENCE = re.compile(r"```(?:bash|sh|shell|console)\n(.*?)```", re.DOTALL)


@dataclass
class Scenario:
    """What the scripted model does. `policy` picks the next move from the conversation."""

    name: str = "audit"
    gap_on_failure: bool = True
    failures_before_success: int = 0  # answer `failure_status` this many times first (the CLI retries)
    failure_status: int = 529
    always_status: int | None = None  # answer this status to every request (401, 500)
    usage_per_turn: dict = field(default_factory=lambda: {"input_tokens": 1000, "output_tokens": 100})
    read_walkthrough_first: bool = False  # try to read the walkthrough file instead of calling next_step
    malformed_input_once: bool = False  # send one tool call whose input breaks the tool's schema
    bash_commands: list[str] = field(default_factory=list)  # extra Bash commands to run on step 1
    generate_file: str | None = None  # for the generator: the walkthrough JSON to Write, and where
    generate_path: str | None = None
    delay_seconds: float = 0.0  # wait this long before each answer (a model that hangs)


class ScriptedModel:
    """The HTTP server, on 127.0.0.1 and a free port; `requests` records every request body it answered."""

    def __init__(self, scenario: Scenario | None = None):
        self.scenario = scenario or Scenario()
        self.requests: list[dict] = []
        self.statuses: list[int] = []
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                model.answer(self, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    # -- answering ------------------------------------------------------------------------------------
    def answer(self, handler: BaseHTTPRequestHandler, body: dict):
        path = handler.path.split("?")[0]
        if path.endswith("/count_tokens"):
            return self._json(handler, 200, {"input_tokens": 100})
        if not path.endswith("/v1/messages"):
            return self._json(handler, 404, _error("not_found_error", f"no such endpoint {path}"))
        with self._lock:
            self.requests.append(body)
            status = self._status_now(body)
            self.statuses.append(status)
        if status != 200:
            kind = {401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}.get(
                status, "api_error"
            )
            return self._json(handler, status, _error(kind, f"scripted {status}"))
        if self.scenario.delay_seconds and _is_agent_turn(body):
            time.sleep(self.scenario.delay_seconds)
        blocks, stop = self.next_move(body)
        message = {
            "id": f"msg_{uuid.uuid4().hex[:20]}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "scripted"),
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": dict(self.scenario.usage_per_turn),
        }
        if body.get("stream"):
            return self._stream(handler, message)
        return self._json(handler, 200, message)

    def _status_now(self, body: dict) -> int:
        if not _is_agent_turn(body):
            return 200  # the CLI's side requests (titles, summaries) are answered, not counted
        if self.scenario.always_status:
            return self.scenario.always_status
        failed = sum(1 for status in self.statuses if status != 200)
        return self.scenario.failure_status if failed < self.scenario.failures_before_success else 200

    def _json(self, handler, status: int, payload: dict):
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        if status in (429, 529):
            handler.send_header("retry-after", "0")
        handler.end_headers()
        handler.wfile.write(data)

    def _stream(self, handler, message: dict):
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.end_headers()

        def event(name: str, data: dict):
            handler.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

        start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
        event("message_start", {"type": "message_start", "message": start})
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                )
                event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": block["text"]},
                    },
                )
            else:
                event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}},
                )
                event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                    },
                )
            event("content_block_stop", {"type": "content_block_stop", "index": index})
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        )
        event("message_stop", {"type": "message_stop"})
        handler.wfile.flush()

    # -- the policy -----------------------------------------------------------------------------------
    def next_move(self, body: dict) -> tuple[list[dict], str]:
        """The next assistant message: (content blocks, stop reason)."""
        if not _is_agent_turn(body):
            return [{"type": "text", "text": "Walkthrough audit"}], "end_turn"
        calls = _tool_calls(body["messages"])
        scenario = self.scenario
        if scenario.generate_file is not None:
            return self._generate(body, calls)
        if not calls:
            path = re.search(r"Walkthrough file: (\S+)", _first_user_text(body["messages"]))
            if scenario.read_walkthrough_first and path:
                return _use("Read", {"file_path": path.group(1)}), "tool_use"
            return _use(
                "mcp__walkthrough__start_walkthrough", {"walkthrough_path": path.group(1) if path else ""}
            ), "tool_use"
        last_name, last_input, last_result, last_error = calls[-1]
        if last_name == "Read" and len(calls) == 1:
            path = re.search(r"Walkthrough file: (\S+)", _first_user_text(body["messages"]))
            return _use(
                "mcp__walkthrough__start_walkthrough", {"walkthrough_path": path.group(1) if path else ""}
            ), "tool_use"
        if scenario.malformed_input_once and not any(name == "mcp__walkthrough__report_gap" for name, *_ in calls):
            return _use("mcp__walkthrough__report_gap", {"gap_type": 7}), "tool_use"
        if last_name.endswith("walkthrough_status"):
            return [{"type": "text", "text": "All steps completed."}], "end_turn"
        step = _latest_step(calls)
        if step is None:
            return _use("mcp__walkthrough__next_step", {}), "tool_use"
        if step.get("status") == "complete":
            return _use("mcp__walkthrough__walkthrough_status", {}), "tool_use"
        if last_name == "Bash" and last_error and scenario.gap_on_failure:
            return _use(
                "mcp__walkthrough__report_gap",
                {
                    "gap_type": "execution_error",
                    "severity": "critical",
                    "description": f"`{last_input.get('command', '')}` fails",
                    "suggested_fix": "Fix the command.",
                    "context": last_result[-1500:],
                },
            ), "tool_use"
        commands = _commands_of(step)
        if step.get("step_number") == 1:
            commands = scenario.bash_commands + commands
        ran = _bash_since_step(calls)
        if ran < len(commands):
            return [
                {"type": "text", "text": f"Following step {step.get('step_number')}: {step.get('title', '')}"},
                *_use("Bash", {"command": commands[ran], "description": "Run the step's command"}),
            ], "tool_use"
        return _use("mcp__walkthrough__next_step", {}), "tool_use"

    def _generate(self, body: dict, calls) -> tuple[list[dict], str]:
        if not calls:
            output = re.search(r"Output file: (\S+)", _first_user_text(body["messages"]))
            path = self.scenario.generate_path or (output.group(1) if output else "walkthrough.json")
            return _use("Write", {"file_path": path, "content": self.scenario.generate_file}), "tool_use"
        return [{"type": "text", "text": "Done"}], "end_turn"


def _error(kind: str, message: str) -> dict:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _use(name: str, tool_input: dict) -> list[dict]:
    return [{"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": name, "input": tool_input}]


def _is_agent_turn(body: dict) -> bool:
    """The agent's own conversation offers our tools; the CLI's side requests do not."""
    return any(
        tool.get("name", "").startswith(("mcp__walkthrough__", "Bash", "Write")) for tool in body.get("tools") or []
    )


def _first_user_text(messages: list[dict]) -> str:
    for message in messages:
        if message["role"] == "user":
            content = message["content"]
            if isinstance(content, str):
                return content
            return "\n".join(block.get("text", "") for block in content if block.get("type") == "text")
    return ""


def _tool_calls(messages: list[dict]) -> list[tuple[str, dict, str, bool]]:
    """Every tool call of the conversation with its result: (name, input, result text, is_error)."""
    results = {}
    for message in messages:
        if message["role"] == "user" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block.get("content")
                    text = (
                        content
                        if isinstance(content, str)
                        else "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))
                    )
                    results[block["tool_use_id"]] = (text, bool(block.get("is_error")))
    calls = []
    for message in messages:
        if message["role"] == "assistant" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    text, error = results.get(block["id"], ("", False))
                    calls.append((block["name"], block.get("input") or {}, text, error))
    return calls


def _latest_step(calls) -> dict | None:
    for name, _, result, error in reversed(calls):
        if name.endswith("next_step") and not error:
            try:
                # The CLI appends its own reminders to a tool's text: the step is the JSON at the start.
                return json.JSONDecoder().raw_decode(result.strip())[0]
            except ValueError:
                return None
    return None


def _bash_since_step(calls) -> int:
    count = 0
    for name, *_ in reversed(calls):
        if name.endswith("next_step"):
            return count
        count += name == "Bash"
    return count


def _commands_of(step: dict) -> list[str]:
    commands = []
    for block in FENCE.findall(step.get("contentForUser") or ""):
        for line in block.splitlines():
            line = line.strip().removeprefix("$ ").strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def claude_settings_for(model: ScriptedModel, **overrides):
    """The app's Claude settings, pointed at the scripted model, with the real CLI bundled in the SDK."""
    from stackbench_site.configuration import claude_settings

    values = {
        "model": "claude-sonnet-4-5",
        "cli_path": None,
        "credentials": {"ANTHROPIC_API_KEY": "sk-scripted-secret"},
        "environment": {"PATH": "/usr/local/bin:/usr/bin:/bin", "ANTHROPIC_BASE_URL": model.url},
        "timeout": 60,
        "max_turns": 60,
        "max_budget_usd": 5.0,
        "max_retries": 2,
    }
    values.update(overrides)
    return claude_settings(**values)


def tool_results(model: ScriptedModel, tool: str) -> list[tuple[str, bool]]:
    """(result text, is_error) of every call of a tool, as the CLI sent them back to the model."""
    last = next((body for body in reversed(model.requests) if _is_agent_turn(body)), None)
    return [(text, error) for name, _, text, error in _tool_calls(last["messages"]) if name == tool] if last else []
