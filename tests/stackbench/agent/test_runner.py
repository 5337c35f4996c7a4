"""The agent runner without a model: its settings, the CLI's environment and options, the two logs, the hooks'
decisions and the limits' messages. The conversation with the real CLI is in tests/stackbench/auditing/test_claude.py
(against tests/scripted_model.py)."""

import asyncio
import json
import os
import re

import pytest
from claude_agent_sdk import ResultMessage

from stackbench.agent.runner import (
    AgentLog,
    AgentObserver,
    AgentWatch,
    ClaudeSettings,
    _result_problem,
    _retry_problem,
    agent_options,
    cli_environment,
    converse,
    summarize,
    tool_payload,
)


class Recorder(AgentObserver):
    def __init__(self):
        self.commands = []

    def command_started(self, command):
        self.commands.append(command)


@pytest.fixture
def log(tmp_path):
    log = AgentLog(tmp_path / "agent_logs")
    yield log
    log.close()


def tool_records(log):
    log.tools.flush()
    return [json.loads(line) for line in (log.path.parent / "audit_tools.jsonl").read_text().splitlines()]


def test_the_agent_is_unavailable_without_a_credential_or_with_a_missing_cli(tmp_path):
    assert "No Claude credential is configured" in ClaudeSettings().unavailable_reason()
    key = {"ANTHROPIC_API_KEY": "sk-test"}
    assert ClaudeSettings(credentials=key).unavailable_reason() is None
    missing = ClaudeSettings(credentials=key, cli_path=str(tmp_path / "claude"))
    assert (
        missing.unavailable_reason() == f"STACKBENCH_CLAUDE_CLI points at {tmp_path / 'claude'}, which does not exist."
    )
    (tmp_path / "claude").write_text("#!/bin/sh\n")
    assert missing.unavailable_reason() is None


def test_the_cli_sees_only_what_it_is_given_and_every_other_variable_is_blanked(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKBENCH_SECRET_KEY", "app-secret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    settings = ClaudeSettings(
        credentials={"ANTHROPIC_API_KEY": "sk-test"}, environment={"LANG": "C.UTF-8"}, max_retries=7
    )
    env = cli_environment(settings, tmp_path / "home")
    assert env["STACKBENCH_SECRET_KEY"] == "" and env["LANG"] == "C.UTF-8"
    assert env["ANTHROPIC_API_KEY"] == "sk-test"
    assert env["HOME"] == str(tmp_path / "home") and env["CLAUDE_CODE_MAX_RETRIES"] == "7"
    assert env["CLAUDE_CODE_SUBPROCESS_ENV_SCRUB"] == "1" and env["DISABLE_AUTOUPDATER"] == "1"
    assert {name for name, value in env.items() if value} >= {"HOME", "ANTHROPIC_API_KEY", "LANG"}
    assert set(os.environ) <= set(env)
    assert ("IS_SANDBOX" in env) is (os.geteuid() == 0)


def test_the_options_carry_the_limits_the_environment_the_hooks_and_the_tasks_own_fields(tmp_path, log):
    settings = ClaudeSettings(model="claude-test", max_turns=9, max_budget_usd=1.5, credentials={"K": "v"})
    watch = AgentWatch(log, AgentObserver())
    options = agent_options(settings, tmp_path, watch, system_prompt="Be brief.", cwd=str(tmp_path))
    assert (options.model, options.max_turns, options.max_budget_usd) == ("claude-test", 9, 1.5)
    assert options.permission_mode == "bypassPermissions"
    assert options.system_prompt == "Be brief." and options.cwd == str(tmp_path)
    assert options.env["K"] == "v" and options.env["HOME"] == str(tmp_path)
    assert set(options.hooks) == {"PreToolUse", "PostToolUse", "PostToolUseFailure"}
    assert options.hooks["PreToolUse"][0].hooks == [watch.before]
    assert options.hooks["PostToolUseFailure"][0].hooks == [watch.after]


def test_the_log_for_people_has_a_time_on_each_line_and_the_trace_one_json_object_per_call(log):
    log.line("the agent starts")
    log.tool_call("Bash", {"command": "ls"}, "x" * 3000, 0.01234, is_error=True)
    log.text.flush()
    lines = log.path.read_text().splitlines()
    assert re.fullmatch(r"\d\d:\d\d:\d\d the agent starts", lines[0])
    assert re.fullmatch(
        r"\d\d:\d\d:\d\d ERROR Bash \{\"command\": \"ls\"\} -> x{160}… \[2840 more characters\]", lines[1]
    )
    (record,) = tool_records(log)
    assert record["tool"] == "Bash" and record["input"] == {"command": "ls"} and record["is_error"] is True
    assert record["duration_ms"] == 12.34 and record["output"].endswith("… [1000 more characters]")


def test_closing_leaves_no_empty_log_and_no_empty_folder(tmp_path):
    quiet = AgentLog(tmp_path / "quiet")
    quiet.close()
    assert not (tmp_path / "quiet").exists()
    talked = AgentLog(tmp_path / "talked")
    talked.line("one line, no tool call")
    talked.close()
    assert [path.name for path in (tmp_path / "talked").iterdir()] == ["audit.log"]


def test_a_log_appends_to_what_an_earlier_attempt_wrote(tmp_path):
    first = AgentLog(tmp_path / "logs")
    first.line("first attempt")
    first.close()
    second = AgentLog(tmp_path / "logs")
    second.line("second attempt")
    second.close()
    assert [line.split(" ", 1)[1] for line in (tmp_path / "logs" / "audit.log").read_text().splitlines()] == [
        "first attempt",
        "second attempt",
    ]


def test_a_summary_keeps_a_readable_head_and_says_how_much_was_left_out():
    assert summarize("short") == "short"
    assert summarize("abcdef", 4) == "abcd… [2 more characters]"
    assert summarize({"a": [1, 2]}) == '{"a": [1, 2]}'
    assert summarize("x" * 2000) == "x" * 2000


@pytest.mark.parametrize(
    "response, payload",
    [
        ({"structuredContent": {"status": "ok"}, "content": [{"type": "text", "text": "ignored"}]}, {"status": "ok"}),
        ({"content": [{"type": "text", "text": '{"step": '}, {"type": "text", "text": "2}"}]}, {"step": 2}),
        ([{"type": "text", "text": "plain words"}], "plain words"),
        ('{"n": 1}', {"n": 1}),
        ({"stdout": "hi", "stderr": ""}, {"stdout": "hi", "stderr": ""}),
        (None, None),
    ],
    ids=["structured", "content-list", "text-list", "json-text", "other-dict", "none"],
)
def test_a_tool_response_is_read_as_the_data_it_carries(response, payload):
    assert tool_payload(response) == payload


@pytest.fixture
def confined(tmp_path, log):
    work, walkthrough = tmp_path / "work", tmp_path / "input" / "wt_demo.json"
    work.mkdir()
    walkthrough.parent.mkdir()
    walkthrough.write_text("{}")
    return AgentWatch(log, Recorder(), confine_to=[work], hidden=[walkthrough]), work, walkthrough


def test_file_tools_stay_inside_the_agents_folders(confined, tmp_path):
    watch, work, _ = confined
    assert watch.refusal("Write", {"file_path": str(work / "notes" / "a.md")}) is None
    assert watch.refusal("Read", {"file_path": "/etc/passwd"}) == (
        f"/etc/passwd is outside the folders this agent works in ({work})."
    )
    assert "is outside the folders" in watch.refusal("Grep", {"pattern": "x", "path": str(work / ".." / "input")})
    assert "is outside the folders" in watch.refusal("NotebookEdit", {"notebook_path": str(tmp_path / "n.ipynb")})
    assert watch.refusal("Bash", {"command": "cat /etc/passwd"}) is None, "commands are confined by the sandbox"


def test_a_symlink_out_of_the_folder_is_outside_it(confined, tmp_path):
    watch, work, _ = confined
    (work / "way-out").symlink_to(tmp_path)
    assert "is outside the folders" in watch.refusal("Read", {"file_path": str(work / "way-out" / "secret")})


def test_no_tool_may_name_the_hidden_walkthrough_and_steps_come_only_from_the_step_server(confined):
    watch, work, walkthrough = confined
    expected = "wt_demo.json is not available to the agent: take the steps from next_step, one at a time."
    assert watch.refusal("Bash", {"command": f"cat {walkthrough}"}) == expected
    assert watch.refusal("Glob", {"pattern": "**/wt_demo.json", "path": str(work)}) == expected
    assert watch.refusal("Bash", {"command": "ls wt_demo.json"}) is None, "a command naming only the file name runs"
    assert watch.refusal("mcp__walkthrough__next_step", {"path": str(walkthrough)}) is None


def test_a_refused_call_is_denied_with_its_reason_and_logged_as_an_error(confined):
    watch, _, _ = confined
    decision = asyncio.run(watch.before({"tool_name": "Read", "tool_input": {"file_path": "/etc/shadow"}}, "t1", None))
    output = decision["hookSpecificOutput"]
    assert (output["hookEventName"], output["permissionDecision"]) == ("PreToolUse", "deny")
    assert output["permissionDecisionReason"].startswith("/etc/shadow is outside the folders")
    (record,) = tool_records(watch.log)
    assert record["is_error"] and record["output"].startswith("refused: /etc/shadow")
    assert watch.started == {}


def test_an_allowed_call_is_timed_and_a_command_is_told_to_the_observer(confined):
    watch, _, _ = confined
    long_command = "echo " + "y" * 400
    assert asyncio.run(watch.before({"tool_name": "Bash", "tool_input": {"command": long_command}}, "t1", None)) == {}
    assert watch.observer.commands == [long_command[:300]] and "t1" in watch.started
    asyncio.run(
        watch.after(
            {"tool_name": "Bash", "tool_input": {"command": "echo"}, "tool_response": {"stdout": "yy"}}, "t1", None
        )
    )
    (record,) = tool_records(watch.log)
    assert record["output"] == '{"stdout": "yy"}' and not record["is_error"] and "t1" not in watch.started


def test_a_failed_call_is_logged_with_its_error_and_an_untimed_one_with_the_clis_duration(confined):
    watch, _, _ = confined
    failure = {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "error": "Exit code 2", "duration_ms": 40}
    asyncio.run(watch.after(failure, "never-started", None))
    error_response = {"tool_name": "mcp__x__y", "tool_response": {"isError": True, "content": "bad input"}}
    asyncio.run(watch.after(error_response, None, None))
    failed, erred = tool_records(watch.log)
    assert (failed["output"], failed["is_error"], failed["duration_ms"]) == ("Exit code 2", True, 40.0)
    assert (erred["output"], erred["is_error"]) == ("bad input", True)


def test_step_server_results_reach_the_callback_and_completion_is_noted(log):
    seen = []
    watch = AgentWatch(log, AgentObserver(), on_step_server_result=lambda tool, payload: seen.append((tool, payload)))
    step = {"tool_name": "mcp__walkthrough__next_step", "tool_response": {"structuredContent": {"status": "step"}}}
    asyncio.run(watch.after(step, None, None))
    asyncio.run(watch.after({"tool_name": "Bash", "tool_response": "ok"}, None, None))
    assert seen == [("mcp__walkthrough__next_step", {"status": "step"})] and watch.complete_at is None
    done = {"tool_name": "mcp__walkthrough__next_step", "tool_response": '{"status": "complete"}'}
    asyncio.run(watch.after(done, None, None))
    assert seen[-1] == ("mcp__walkthrough__next_step", {"status": "complete"}) and watch.complete_at is not None


def test_a_rejected_credential_stops_at_once_and_other_api_errors_are_logged_while_the_cli_retries(log):
    assert _retry_problem({"error_status": 401, "error": "authentication_failed"}, log).startswith(
        "Claude rejected the credential (HTTP 401, authentication_failed)"
    )
    assert "HTTP 403" in _retry_problem({"error_status": 403}, log)
    assert _retry_problem({"error_status": 529, "error": "overloaded", "attempt": 2, "max_retries": 4}, log) is None
    log.text.flush()
    assert log.path.read_text().endswith(
        "the model's API answered HTTP 529 (overloaded); the CLI retries (attempt 2 of 4)\n"
    )


def result(subtype="success", is_error=False, **fields):
    return ResultMessage(
        subtype=subtype, duration_ms=1, duration_api_ms=1, is_error=is_error, num_turns=7, session_id="s", **fields
    )


@pytest.mark.parametrize(
    "message, problem",
    [
        (result(), None),
        (result("error_max_turns", True), "the agent hit the turn limit (7 turns) before finishing"),
        (result("error_max_budget_usd", True, total_cost_usd=5.123), "the agent hit the budget limit ($5.12)"),
        (result("error_during_execution", True, errors=["boom", "bang"]), "the agent ended with an error: boom, bang"),
        (result("success", True, result="Not logged in"), "Claude rejected the credential (Not logged in)"),
        (result("error_during_execution", True), "the agent ended with an error: error_during_execution"),
    ],
    ids=["success", "turns", "budget", "errors", "not-logged-in", "bare-error"],
)
def test_each_way_a_conversation_ends_says_why(message, problem):
    said = _result_problem(message)
    assert said == problem if problem is None else said.startswith(problem)


def test_a_missing_cli_is_a_clear_problem_not_a_crash(tmp_path, log):
    settings = ClaudeSettings(credentials={"ANTHROPIC_API_KEY": "sk-test"}, cli_path=str(tmp_path / "no-claude"))
    watch = AgentWatch(log, AgentObserver())
    options = agent_options(settings, tmp_path, watch)
    problem = asyncio.run(converse(options, "hello", settings, watch, AgentObserver(), log))
    assert problem.startswith("the Claude Code CLI was not found (")
    assert problem.endswith("install claude-agent-sdk or set STACKBENCH_CLAUDE_CLI")
