"""The Claude auditor against a fake Claude CLI that speaks the SDK's stream-json protocol and really drives
our MCP step server over stdio: the wiring is real; only the model is missing."""

import json
import os
import sys

import pytest

from audits.engines.auditors.claude import ALLOWED_TOOLS
from audits.engines.auditors.common import AuditError
from audits.engines.auditors.run import run_audit
from stackbench_site.configuration import claude_settings, claude_unavailable_reason
from tests.builders import BASE_DIR, audit_request

FAKE_CLI = str(BASE_DIR / "tests" / "fake_claude" / "claude")


def settings(scenario="audit", **overrides):
    return claude_settings(
        **{
            "model": scenario,
            "cli_path": FAKE_CLI,
            "credentials": {"ANTHROPIC_API_KEY": "sk-test"},
            "timeout": 20,
            "max_turns": 40,
            "max_budget_usd": 1.5,
            **overrides,
        }
    )


def audit(kv_walkthrough_path, tmp_path, scenario="audit", **overrides):
    request = audit_request(kv_walkthrough_path, tmp_path / "out", "sqlite3", "3.40")
    return run_audit(request, backend="claude", claude=settings(scenario, **overrides)), request


def test_the_agent_walks_the_step_server_and_its_gap_lands_in_every_output(kv_walkthrough_path, tmp_path, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "app-secret-value")
    monkeypatch.setenv("DATABASE_URL", "postgres://secret@db/x")
    record = tmp_path / "cli.json"
    result, request = audit(kv_walkthrough_path, tmp_path, f"audit;gap=3;record={record}")
    assert (result.total_steps, result.completed_steps, result.failed_steps, result.success) == (5, 5, 0, False)
    assert [(g.step_number, g.step_title, g.gap_type, g.severity) for g in result.gaps] == [
        (3, "Load the seed data", "execution_error", "critical")
    ]
    audit_file = json.loads(request.audit_path.read_text())
    assert audit_file["execution_gaps"] == 1 and audit_file["library_name"] == "sqlite3"
    session = json.loads(request.session_path.read_text())
    assert session["is_complete"] and session["gaps"][0]["description"] == "Scripted gap on step 3"
    trace = [json.loads(line) for line in (request.logs_dir / "audit_tools.jsonl").read_text().splitlines()]
    tools = [r["tool"] for r in trace]
    assert tools.count("Bash") == 5 and tools.count("mcp__walkthrough__next_step") == 6
    assert "mcp__walkthrough__report_gap" in tools and tools[0] == "mcp__walkthrough__start_walkthrough"
    assert all(r["duration_ms"] >= 0 and r["time"] for r in trace)
    log = (request.logs_dir / "audit.log").read_text()
    assert "Bash" in log and "agent: Following step 3: Load the seed data" in log

    cli = json.loads(record.read_text())
    argv = cli["argv"]
    assert argv[argv.index("--allowedTools") + 1].split(",") == ALLOWED_TOOLS
    assert argv[argv.index("--permission-mode") + 1] == "bypassPermissions"
    assert argv[argv.index("--max-turns") + 1] == "40" and argv[argv.index("--max-budget-usd") + 1] == "1.5"
    server = json.loads(argv[argv.index("--mcp-config") + 1])["mcpServers"]["walkthrough"]
    assert (server["type"], server["command"]) == ("stdio", sys.executable)
    assert server["args"][:4] == ["-m", "walkthroughs.engines.step_server", "--output", str(request.output_dir)]
    assert "Walkthrough file: " + str(kv_walkthrough_path) in cli["prompt"]
    env = cli["env"]
    assert env["ANTHROPIC_API_KEY"] == "sk-test"
    assert env.get("SECRET_KEY", "") == "" and env.get("DATABASE_URL", "") == ""
    if os.geteuid() == 0:
        assert env["IS_SANDBOX"] == "1"
    assert cli["cwd"] != str(BASE_DIR) and "stackbench_claude_" in cli["cwd"]


def test_usage_and_cost_reach_the_observer(kv_walkthrough_path, tmp_path):
    from audits.engines.auditors.common import AuditObserver

    seen = {}

    class Recorder(AuditObserver):
        def agent_finished(self, usage, cost_usd):
            seen.update(usage=usage, cost=cost_usd)

        def command_started(self, command):
            seen.setdefault("commands", []).append(command)

    run_audit(
        audit_request(kv_walkthrough_path, tmp_path / "out"), backend="claude", observer=Recorder(), claude=settings()
    )
    assert seen["cost"] == 0.0421 and seen["usage"]["input_tokens"] == 1500
    assert seen["commands"][0].startswith("echo following step 1")


@pytest.mark.parametrize(
    "scenario, overrides, message",
    [
        ("audit", {"credentials": {}}, "No Claude credential is configured: set ANTHROPIC_API_KEY"),
        (
            "audit",
            {"cli_path": "/nowhere/claude"},
            "STACKBENCH_CLAUDE_CLI points at /nowhere/claude, which does not exist",
        ),
        ("not_logged_in", {}, "Claude rejected the credential (Not logged in"),
        ("crash", {}, "What the CLI printed: boom: simulated crash"),
        ("hang", {"timeout": 3}, "the Claude agent did not finish within 3 s"),
        ("garbage", {}, "the Claude CLI sent a malformed message"),
        ("max_turns", {}, "the agent hit the turn limit"),
    ],
)
def test_each_failure_is_a_clear_error_never_a_hang(kv_walkthrough_path, tmp_path, scenario, overrides, message):
    with pytest.raises(AuditError) as failure:
        audit(kv_walkthrough_path, tmp_path, scenario, **overrides)
    assert message in str(failure.value)


def test_a_run_stopped_by_a_limit_still_writes_what_the_agent_found(kv_walkthrough_path, tmp_path):
    with pytest.raises(AuditError, match="turn limit"):
        audit(kv_walkthrough_path, tmp_path, "max_turns")
    written = json.loads((tmp_path / "out" / "wt_kv_quickstart_audit.json").read_text())
    assert written["completed_steps"] == 2 and written["failed_steps"] == 3 and len(written["gaps"]) == 1


def test_the_backend_is_offered_only_with_a_credential(settings):
    settings.STACKBENCH_CLAUDE_CREDENTIALS, settings.STACKBENCH_CLAUDE_CLI = {}, None
    assert "No Claude credential" in claude_unavailable_reason()
    settings.STACKBENCH_CLAUDE_CREDENTIALS = {"ANTHROPIC_API_KEY": "sk-x"}
    assert claude_unavailable_reason() is None


@pytest.fixture
def claude_env(settings):
    def configure(scenario):
        settings.STACKBENCH_CLAUDE_CREDENTIALS = {"ANTHROPIC_API_KEY": "sk-test"}
        settings.STACKBENCH_CLAUDE_CLI = FAKE_CLI
        settings.STACKBENCH_CLAUDE_MODEL = scenario

    return configure


@pytest.fixture
def stored_run(transactional_db, kv_walkthrough_path):
    from audits.importing import import_paths
    from audits.models import Run
    from walkthroughs.models import Walkthrough

    import_paths([kv_walkthrough_path], library_name="sqlite3")
    walkthrough = Walkthrough.objects.get()
    return Run.objects.create(
        kind="audit", library=walkthrough.library, walkthrough=walkthrough, backend="claude", status="queued"
    )


def test_a_stored_claude_run_keeps_gaps_progress_usage_and_logs(stored_run, claude_env):
    from audits.tasks import run_audit_task

    claude_env("audit;gap=4")
    run_audit_task(stored_run.pk)
    stored_run.refresh_from_db()
    assert stored_run.status == "succeeded", stored_run.error
    assert (stored_run.progress_current, stored_run.progress_total) == (5, 5)
    assert list(stored_run.gaps.values_list("step_number", "gap_type")) == [(4, "execution_error")]
    assert stored_run.cost_usd == 0.0421 and stored_run.usage["output_tokens"] == 300
    assert stored_run.last_command.startswith("echo following step 5")
    assert {
        "agent_logs/audit.log",
        "agent_logs/audit_tools.jsonl",
        "wt_kv_quickstart_audit.json",
        "wt_kv_quickstart_session.json",
    } <= set(stored_run.output_files)


def test_a_stored_claude_run_that_fails_says_why_and_keeps_its_files(stored_run, claude_env):
    from audits.tasks import run_audit_task

    claude_env("crash")
    run_audit_task(stored_run.pk)
    stored_run.refresh_from_db()
    assert stored_run.status == "failed"
    assert "the Claude CLI failed" in stored_run.error and "boom: simulated crash" in stored_run.error
    assert "agent_logs/audit.log" in stored_run.output_files
