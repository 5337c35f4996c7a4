"""What both auditors share: the request's paths, the observer thread, following the session file, the step
server's command line and client, and the audit file written at the end."""

import asyncio
import json
import sys
import threading
import time
from datetime import UTC, datetime

import pytest

from stackbench.agent.runner import AgentLog
from stackbench.auditing.common import (
    APP_ROOT,
    AuditError,
    AuditObserver,
    AuditRequest,
    OneThreadObserver,
    SessionFollower,
    StepClient,
    step_server_command,
    write_audit_result,
)
from stackbench.formats.results import AuditResult
from stackbench.formats.walkthrough import Gap, Session
from stackbench.lib.jsonfiles import load_model, write_model

STARTED = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
TWO_STEPS = [("One", "# One", "1. Read"), ("Two", "# Two", "1. Read")]


class Recorder(AuditObserver):
    def __init__(self):
        self.events, self.threads = [], set()

    def step_started(self, number, total, title):
        self.threads.add(threading.get_ident())
        self.events.append(("step", number, total, title))

    def gap_reported(self, seq, gap):
        self.threads.add(threading.get_ident())
        self.events.append(("gap", seq, gap.step_number))

    def should_stop(self):
        self.threads.add(threading.get_ident())
        return True


def gap(step, severity="warning"):
    return Gap(step_number=step, gap_type="clarity", severity=severity, description="unclear", timestamp=STARTED)


def session(gaps=(), completed=0, total=3):
    return Session(
        walkthrough_path="wt_demo.json",
        current_step=completed,
        completed_steps=completed,
        total_steps=total,
        gaps=list(gaps),
        session_started=STARTED,
    )


def test_a_request_names_its_files_after_the_walkthrough_in_the_output_folder(tmp_path):
    request = AuditRequest(tmp_path / "docs" / "wt_demo.json", tmp_path / "out")
    assert request.walkthrough_id == "wt_demo"
    assert request.session_path == tmp_path / "out" / "wt_demo_session.json"
    assert request.audit_path == tmp_path / "out" / "wt_demo_audit.json"
    assert request.logs_dir == tmp_path / "out" / "agent_logs"


def test_every_observer_call_runs_on_one_thread_that_is_not_the_callers():
    inner = Recorder()
    observer = OneThreadObserver(inner)
    observer.step_started(1, 2, "One")
    helper = threading.Thread(target=observer.gap_reported, args=(0, gap(1)))
    helper.start()
    helper.join()
    assert asyncio.run(asyncio.to_thread(observer.should_stop)) is True, "what the inner observer says comes back"
    observer.close()
    assert inner.events == [("step", 1, 2, "One"), ("gap", 0, 1)]
    assert len(inner.threads) == 1 and threading.get_ident() not in inner.threads
    with pytest.raises(RuntimeError):
        observer.step_started(2, 2, "Two")


def test_calls_from_several_threads_at_once_take_turns_on_the_observers_thread():
    class Slow(AuditObserver):
        def __init__(self):
            self.running, self.most, self.threads = 0, 0, set()

        def command_started(self, command):
            self.running += 1
            self.most = max(self.most, self.running)
            self.threads.add(threading.get_ident())
            time.sleep(0.05)
            self.running -= 1

    inner = Slow()
    observer = OneThreadObserver(inner)
    callers = [threading.Thread(target=observer.command_started, args=(f"echo {n}",)) for n in range(4)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    observer.close()
    assert inner.most == 1 and len(inner.threads) == 1


def test_the_follower_passes_on_each_gap_once_as_the_session_file_grows(tmp_path):
    recorder = Recorder()
    path = tmp_path / "wt_demo_session.json"
    follower = SessionFollower(path, recorder)
    assert follower.poll() is None, "no session file yet"
    write_model(path, session([gap(1)], completed=1))
    assert follower.poll().completed_steps == 1
    write_model(path, session([gap(1), gap(2, "critical")], completed=2))
    follower.poll()
    follower.poll()
    assert recorder.events == [("gap", 0, 1), ("gap", 1, 2)]


def test_the_follower_keeps_the_last_good_session_when_the_file_cannot_be_read(tmp_path):
    path = tmp_path / "wt_demo_session.json"
    follower = SessionFollower(path, Recorder())
    write_model(path, session(completed=2))
    path.write_text("{")
    assert follower.poll() is None
    write_model(path, session(completed=2))
    follower.poll()
    path.write_text("{")
    assert follower.poll().completed_steps == 2


def test_a_served_step_is_progress_and_other_results_are_not(tmp_path):
    recorder = Recorder()
    follower = SessionFollower(tmp_path / "missing.json", recorder)
    follower.saw_tool_result("mcp__walkthrough__next_step", {"step_number": 2, "total_steps": 5, "title": "Two"})
    follower.saw_tool_result("next_step", {"status": "complete", "total_steps": 5})
    follower.saw_tool_result("walkthrough_status", {"step_number": 3})
    follower.saw_tool_result("next_step", "not a step")
    assert recorder.events == [("step", 2, 5, "Two")]


def test_the_step_server_runs_from_the_app_with_only_the_walkthroughs_folder_and_the_given_roots(tmp_path):
    request = AuditRequest(tmp_path / "docs" / "wt_demo.json", tmp_path / "out", allowed_roots=[tmp_path / "extra"])
    command, args, env = step_server_command(request)
    assert command == sys.executable
    assert args == [
        "-m",
        "stackbench.auditing.step_server",
        "--output",
        str(tmp_path / "out"),
        "--allowed-root",
        str(tmp_path / "docs"),
        "--allowed-root",
        str(tmp_path / "extra"),
    ]
    assert env["PYTHONPATH"] == str(APP_ROOT) and (APP_ROOT / "stackbench" / "auditing" / "step_server.py").is_file()
    assert set(env) == {"PATH", "PYTHONPATH", "PYTHONUNBUFFERED"}, "nothing of the app's environment leaks in"


def test_the_step_client_logs_each_call_reports_progress_and_raises_on_a_refusal(make_walkthrough, tmp_path):
    path = make_walkthrough(TWO_STEPS)
    request = AuditRequest(path, tmp_path / "out")
    recorder = Recorder()
    log = AgentLog(request.logs_dir)

    async def follow():
        async with StepClient(request, log, SessionFollower(request.session_path, recorder)) as client:
            started = await client.call("start_walkthrough", {"walkthrough_path": str(path)})
            step = await client.call("next_step")
            with pytest.raises(AuditError, match="the step server refused start_walkthrough"):
                await client.call("start_walkthrough", {"walkthrough_path": str(tmp_path / "elsewhere.json")})
            return started, step

    started, step = asyncio.run(follow())
    log.close()
    assert started["total_steps"] == 2 and step["title"] == "One"
    assert recorder.events == [("step", 1, 2, "One")]
    trace = [json.loads(line) for line in (request.logs_dir / "audit_tools.jsonl").read_text().splitlines()]
    assert [record["tool"] for record in trace] == [
        "mcp__walkthrough__start_walkthrough",
        "mcp__walkthrough__next_step",
        "mcp__walkthrough__start_walkthrough",
    ]


def test_the_step_client_must_be_entered_before_a_call(tmp_path):
    request = AuditRequest(tmp_path / "wt_demo.json", tmp_path / "out")
    client = StepClient(request, AgentLog(request.logs_dir), SessionFollower(request.session_path, Recorder()))
    with pytest.raises(RuntimeError, match="async with"):
        asyncio.run(client.call("next_step"))


def test_the_audit_file_takes_gaps_and_progress_from_the_session(tmp_path):
    request = AuditRequest(tmp_path / "wt_demo.json", tmp_path / "out", "demo", "1.0")
    request.output_dir.mkdir()
    result = write_audit_result(request, STARTED, session([gap(2)], completed=2, total=3), 9, "Demo", [{"a": 1}])
    assert (result.total_steps, result.completed_steps, result.failed_steps, result.success) == (3, 2, 1, False)
    assert load_model(AuditResult, request.audit_path) == result
    assert (result.walkthrough_id, result.library_name, result.library_version) == ("wt_demo", "demo", "1.0")
    assert result.walkthrough_title == "Demo" and json.loads(result.execution_log) == [{"a": 1}]
    assert [g.step_number for g in result.gaps] == [2] and result.duration_seconds > 0
    assert result.agent_log_path == str(tmp_path / "out" / "agent_logs" / "audit.log")


def test_a_whole_clean_session_succeeds_and_a_missing_one_reached_no_step(tmp_path):
    request = AuditRequest(tmp_path / "wt_demo.json", tmp_path / "out")
    request.output_dir.mkdir()
    assert write_audit_result(request, STARTED, session([gap(1)], completed=3), 0, "Demo", []).success
    missing = write_audit_result(request, STARTED, None, 4, "Demo", [])
    assert (missing.total_steps, missing.completed_steps, missing.failed_steps, missing.success) == (4, 0, 4, False)
    untold = write_audit_result(request, STARTED, session(completed=0, total=0), 4, "Demo", [])
    assert untold.total_steps == 4, "a session that never learnt the step count leaves it to the caller"
