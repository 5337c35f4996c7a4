"""The Claude auditor with the real Claude Code CLI (bundled in claude-agent-sdk) against a scripted model: a local
Anthropic Messages API whose policy chooses each tool call. The CLI, its MCP client launching our step server,
its hooks, permission mode and Bash are the real ones; only the model is scripted."""

import json
import os

import pytest

from stackbench.auditing.common import AuditError, AuditObserver
from stackbench.auditing.run import run_audit
from tests.builders import audit_request
from tests.scripted_model import Scenario, ScriptedModel, claude_settings_for, tool_results

STEPS = [
    ("Say hello", "Run:\n\n```bash\necho hello from step one\n```", "1. Run: echo hello from step one"),
    ("Break", "Run:\n\n```bash\nls no-such-file\n```", "1. Run: ls no-such-file"),
    ("Wrap up", "You are done.", "1. Read the summary"),
]


class Recorder(AuditObserver):
    def __init__(self):
        self.seen = {"commands": [], "steps": []}

    def agent_finished(self, usage, cost_usd):
        self.seen.update(usage=usage, cost=cost_usd)

    def command_started(self, command):
        self.seen["commands"].append(command)

    def step_started(self, number, total, title):
        self.seen["steps"].append(number)


def audit(path, tmp_path, scenario=None, observer=None, **overrides):
    with ScriptedModel(scenario or Scenario()) as model:
        request = audit_request(path, tmp_path / "out", "demo", "1.0")
        try:
            result = run_audit(request, "claude", observer, claude_settings_for(model, **overrides))
        except AuditError as exc:
            return exc, request, model
        return result, request, model


def test_the_real_cli_follows_the_step_server_and_every_output_records_it(make_walkthrough, tmp_path, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "app-secret-value")
    recorder = Recorder()
    result, request, model = audit(
        make_walkthrough(STEPS), tmp_path, Scenario(bash_commands=["env"]), observer=recorder
    )
    assert (result.total_steps, result.completed_steps) == (3, 3)
    assert [(g.step_number, g.step_title, g.gap_type, g.severity) for g in result.gaps] == [
        (2, "Break", "execution_error", "critical")
    ]
    assert "no-such-file" in result.gaps[0].context
    session = json.loads(request.session_path.read_text())
    assert session["is_complete"] and len(session["gaps"]) == 1

    # The CLI launched our step server from the configuration passed to it: steps came from next_step.
    steps = [text for text, error in tool_results(model, "mcp__walkthrough__next_step") if not error]
    assert [json.JSONDecoder().raw_decode(text)[0].get("step_number") for text in steps] == [1, 2, 3, None]
    assert "Walkthrough file: " + str(request.walkthrough_path) in json.dumps(model.requests[0]["messages"][-1])
    assert any("Evidence first" in block.get("text", "") for block in model.requests[0]["system"])

    # The hooks logged every tool call and fed live progress.
    trace = [json.loads(line) for line in (request.logs_dir / "audit_tools.jsonl").read_text().splitlines()]
    tools = [row["tool"] for row in trace]
    assert tools[0] == "mcp__walkthrough__start_walkthrough" and tools.count("Bash") == 3
    assert tools.count("mcp__walkthrough__next_step") == 4 and "mcp__walkthrough__report_gap" in tools
    assert recorder.seen["commands"] == ["env", "echo hello from step one", "ls no-such-file"]
    assert recorder.seen["steps"] == [1, 2, 3]
    assert recorder.seen["cost"] > 0 and recorder.seen["usage"]["input_tokens"] >= 1000

    # The agent's commands never see the credential or the app's secrets.
    (environment, _), *_ = tool_results(model, "Bash")
    assert "HOME=" in environment
    for secret in ("sk-scripted-secret", "ANTHROPIC_API_KEY", "app-secret-value"):
        assert secret not in environment


def test_the_agent_cannot_read_the_walkthrough_and_skip_ahead(make_walkthrough, tmp_path):
    result, request, model = audit(make_walkthrough(STEPS), tmp_path, Scenario(read_walkthrough_first=True))
    (refusal, is_error), *_ = tool_results(model, "Read")
    assert is_error and "is not available to the agent: take the steps from next_step" in refusal
    assert "Say hello" not in refusal
    assert result.completed_steps == 3
    trace = (request.logs_dir / "audit_tools.jsonl").read_text()
    assert '"tool": "Read"' in trace and "refused:" in trace


def test_overloaded_answers_are_retried_by_the_cli_and_a_malformed_tool_call_is_survived(make_walkthrough, tmp_path):
    scenario = Scenario(failures_before_success=2, failure_status=529, malformed_input_once=True)
    result, request, model = audit(make_walkthrough(STEPS), tmp_path, scenario)
    assert model.statuses[:3] == [529, 529, 200]
    assert result.completed_steps == 3 and len(result.gaps) == 1
    malformed = tool_results(model, "mcp__walkthrough__report_gap")[0]
    assert malformed[1] and "gap_type" in malformed[0]
    log = (request.logs_dir / "audit.log").read_text()
    assert "the model's API answered HTTP 529 (overloaded); the CLI retries (attempt 1 of 2)" in log


@pytest.mark.parametrize(
    "scenario, overrides, message",
    [
        (Scenario(always_status=401), {}, "Claude rejected the credential (HTTP 401, authentication_failed)"),
        (
            Scenario(always_status=500),
            {"max_retries": 1},
            "the model's API kept failing after 1 retries: API Error: 500 scripted 500",
        ),
        (
            Scenario(usage_per_turn={"input_tokens": 400_000, "output_tokens": 1000}),
            {"max_budget_usd": 0.5},
            "the agent hit the budget limit",
        ),
        (Scenario(), {"max_turns": 3}, "the agent hit the turn limit ("),
        (Scenario(delay_seconds=30), {"timeout": 4}, "the Claude agent did not finish within 4 s"),
        (Scenario(), {"credentials": {}}, "No Claude credential is configured: set ANTHROPIC_API_KEY"),
        (Scenario(), {"cli_path": "/nowhere/claude"}, "STACKBENCH_CLAUDE_CLI points at /nowhere/claude"),
    ],
    ids=["bad-key", "server-error", "budget", "turns", "timeout", "no-key", "no-cli"],
)
def test_each_failure_is_a_clear_error_never_a_hang(make_walkthrough, tmp_path, scenario, overrides, message):
    failure, _, _ = audit(make_walkthrough(STEPS), tmp_path, scenario, **overrides)
    assert isinstance(failure, AuditError)
    assert message in str(failure)


def test_a_run_stopped_by_a_limit_still_writes_what_the_agent_found(make_walkthrough, tmp_path):
    failure, request, _ = audit(make_walkthrough(STEPS), tmp_path, max_turns=6)
    assert "turn limit" in str(failure)
    written = json.loads(request.audit_path.read_text())
    assert 0 < written["completed_steps"] < 3 and len(written["gaps"]) == 1


@pytest.fixture
def scripted(settings):
    """The app's settings pointed at a scripted model, as an operator would with ANTHROPIC_BASE_URL."""
    models = []

    def start(scenario):
        model = ScriptedModel(scenario).__enter__()
        models.append(model)
        settings.STACKBENCH_CLAUDE_CREDENTIALS = {"ANTHROPIC_API_KEY": "sk-scripted-secret"}
        settings.STACKBENCH_CLAUDE_CLI = None
        settings.STACKBENCH_CLAUDE_MODEL = "claude-sonnet-4-5"
        settings.STACKBENCH_CLAUDE_MAX_RETRIES = 1
        settings.STACKBENCH_CLAUDE_ENVIRONMENT = {"PATH": "/usr/bin:/bin", "ANTHROPIC_BASE_URL": model.url}
        return model

    yield start
    for model in models:
        model.__exit__(None, None, None)


@pytest.fixture
def stored_run(transactional_db, make_walkthrough):
    from audits.importing import import_paths
    from audits.models import Run
    from walkthroughs.models import Walkthrough

    import_paths([make_walkthrough(STEPS)], library_name="demo")
    walkthrough = Walkthrough.objects.get()
    return Run.objects.create(
        kind="audit", library=walkthrough.library, walkthrough=walkthrough, backend="claude", status="queued"
    )


def test_a_stored_claude_run_keeps_gaps_progress_usage_and_logs(stored_run, scripted):
    from audits.tasks import run_audit_task

    scripted(Scenario())
    run_audit_task(stored_run.pk)
    stored_run.refresh_from_db()
    assert stored_run.status == "succeeded", stored_run.error
    assert (stored_run.progress_current, stored_run.progress_total) == (3, 3)
    assert list(stored_run.gaps.values_list("step_number", "gap_type")) == [(2, "execution_error")]
    assert stored_run.cost_usd > 0 and stored_run.usage["output_tokens"] > 0
    assert stored_run.last_command == "ls no-such-file"
    assert {
        "agent_logs/audit.log",
        "agent_logs/audit_tools.jsonl",
        "wt_test_audit.json",
        "wt_test_session.json",
    } <= set(stored_run.output_files)


def test_a_stored_claude_run_that_fails_says_why_and_keeps_its_files(stored_run, scripted):
    from audits.tasks import run_audit_task

    scripted(Scenario(always_status=401))
    run_audit_task(stored_run.pk)
    stored_run.refresh_from_db()
    assert stored_run.status == "failed"
    assert "Claude rejected the credential (HTTP 401" in stored_run.error
    assert "agent_logs/audit.log" in stored_run.output_files


def test_cancel_ends_the_cli_and_every_command_it_started(make_walkthrough, tmp_path):
    import subprocess
    import time

    marker = f"time.sleep(613.{os.getpid()})"

    class CancelAfterTheCommandStarts(AuditObserver):
        started = 0.0

        def command_started(self, command):
            self.started = time.monotonic()

        def should_stop(self):
            return bool(self.started) and time.monotonic() - self.started > 2

    steps = [("Wait", f'```bash\npython3 -c "import time; {marker}"\n```', "")]
    failure, request, _ = audit(make_walkthrough(steps), tmp_path, observer=CancelAfterTheCommandStarts())
    assert str(failure).startswith("the audit was cancelled") and "⚠" not in str(failure)
    time.sleep(1)
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    assert left == "", "the command the agent started was ended with it"
