import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client

from stackbench.auditing.step_server import ServerConfig, StepServerError, StepSession, build_server

ROOT = Path(__file__).resolve().parents[3]
THREE_STEPS = [
    ("One", "# One\n\n```bash\necho 1\n```", "1. Run: echo 1"),
    ("Two", "# Two", "1. Read"),
    ("Three", "# Three", "1. Read"),
]


@pytest.fixture
def session_for(tmp_path):
    def make(output=None, roots=()):
        return StepSession(ServerConfig(output_dir=output or tmp_path / "out", allowed_roots=[Path(r) for r in roots]))

    return make


def test_steps_come_one_at_a_time_in_display_order_then_complete(session_for, make_walkthrough):
    path = make_walkthrough(THREE_STEPS, first_order=1)
    session = session_for(roots=[path.parent])
    started = session.start(str(path))
    assert started == {
        "status": "started",
        "walkthrough_id": "wt_test",
        "title": "A small tutorial",
        "description": "",
        "total_steps": 3,
        "estimated_duration_minutes": 5,
    }
    first = session.next_step()
    assert (first["step_number"], first["total_steps"], first["title"], first["displayOrder"]) == (1, 3, "One", 1)
    assert set(first) == {
        "step_number",
        "total_steps",
        "title",
        "contentForUser",
        "contextForAgent",
        "operationsForAgent",
        "introductionForAgent",
        "displayOrder",
        "nextStepReference",
    }
    assert [session.next_step()["title"], session.next_step()["title"]] == ["Two", "Three"]
    done = session.next_step()
    assert done["status"] == "complete" and done["total_steps"] == 3 and done["gaps_reported"] == 0
    assert session.status()["is_complete"] is True


def test_a_gap_belongs_to_the_step_last_served_and_is_saved_at_once(session_for, make_walkthrough, tmp_path):
    path = make_walkthrough(THREE_STEPS)
    session = session_for(roots=[path.parent])
    session.start(str(path))
    session.next_step()
    session.next_step()
    reply = session.report_gap("clarity", "warning", "vague", suggested_fix="be concrete", context="step text")
    assert reply == {
        "status": "gap_reported",
        "step_number": 2,
        "step_title": "Two",
        "gap_type": "clarity",
        "severity": "warning",
        "total_gaps_reported": 1,
    }
    saved = json.loads((tmp_path / "out" / "wt_test_session.json").read_text())
    assert saved["current_step"] == 2 and saved["completed_steps"] == 2 and saved["total_steps"] == 3
    assert saved["gaps"][0]["step_title"] == "Two" and saved["gaps"][0]["suggested_fix"] == "be concrete"
    assert set(saved) == {
        "walkthrough_id",
        "walkthrough_path",
        "current_step",
        "total_steps",
        "completed_steps",
        "is_complete",
        "gaps",
        "session_started",
        "last_updated",
    }
    status = session.status()
    assert status["gaps_by_severity"] == {"critical": 0, "warning": 1, "info": 0}
    assert status["progress_percentage"] == 66.7


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda s: s.next_step(), "next_step needs a walkthrough: call start_walkthrough"),
        (lambda s: s.report_gap("clarity", "info", "x"), "report_gap needs a walkthrough"),
        (lambda s: s.status(), "walkthrough_status needs a walkthrough"),
    ],
)
def test_calls_before_start_say_so(session_for, call, message):
    with pytest.raises(StepServerError, match=message):
        call(session_for())


def test_bad_gaps_are_refused_with_the_allowed_values(session_for, make_walkthrough):
    path = make_walkthrough(THREE_STEPS)
    session = session_for(roots=[path.parent])
    session.start(str(path))
    with pytest.raises(StepServerError, match="no step has been served yet"):
        session.report_gap("clarity", "info", "x")
    session.next_step()
    with pytest.raises(
        StepServerError,
        match="unknown gap_type 'typo'; use one of: clarity, prerequisite, "
        "logical_flow, execution_error, completeness, cross_reference",
    ):
        session.report_gap("typo", "info", "x")
    with pytest.raises(StepServerError, match="unknown severity 'blocker'; use one of: critical, warning, info"):
        session.report_gap("clarity", "blocker", "x")
    with pytest.raises(StepServerError, match="description is empty"):
        session.report_gap("clarity", "info", "  ")
    with pytest.raises(StepServerError, match="keep it under"):
        session.report_gap("clarity", "info", "x" * 20_000)
    huge = session.report_gap("execution_error", "critical", "failed", context="line\n" * 100_000)
    assert huge["total_gaps_reported"] == 1
    assert session.session.gaps[0].context.startswith("[... ")


def test_bad_walkthrough_paths_are_refused_by_name(session_for, tmp_path, make_walkthrough):
    session = session_for(roots=[tmp_path])
    with pytest.raises(StepServerError, match="does not exist"):
        session.start(str(tmp_path / "missing.json"))
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(StepServerError, match="broken.json: not valid JSON"):
        session.start(str(tmp_path / "broken.json"))
    (tmp_path / "schema.json").write_text(json.dumps({"walkthrough": {"title": "x"}, "steps": [{"title": "a"}]}))
    with pytest.raises(StepServerError, match=r"steps\.0\.displayOrder: Field required"):
        session.start(str(tmp_path / "schema.json"))
    with pytest.raises(StepServerError, match="outside the allowed folders"):
        session.start("/etc/passwd")
    with pytest.raises(StepServerError, match="outside the allowed folders"):
        session.start(str(tmp_path / ".." / ".." / "etc" / "hostname"))
    inside = make_walkthrough(THREE_STEPS)
    (tmp_path / "link.json").symlink_to("/etc/hostname")
    with pytest.raises(StepServerError, match="outside the allowed folders"):
        session.start(str(tmp_path / "link.json"))
    assert session.start(str(inside))["status"] == "started"


def test_the_default_roots_are_the_output_folder_and_the_working_directory(tmp_path, monkeypatch, make_walkthrough):
    path = make_walkthrough(THREE_STEPS)
    monkeypatch.chdir(path.parent)
    session = StepSession(ServerConfig(output_dir=tmp_path / "elsewhere"))
    assert session.start("wt_test.json")["total_steps"] == 3
    assert (tmp_path / "elsewhere" / "wt_test_session.json").exists()


def test_a_restarted_server_resumes_an_unfinished_session(session_for, make_walkthrough):
    path = make_walkthrough(THREE_STEPS)
    first = session_for(roots=[path.parent])
    first.start(str(path))
    first.next_step()
    first.next_step()
    first.report_gap("completeness", "info", "no check")
    second = session_for(roots=[path.parent])
    resumed = second.start(str(path))
    assert (resumed["status"], resumed["current_step"], resumed["gaps_reported"]) == ("resumed", 2, 1)
    assert second.next_step()["title"] == "Three"
    fresh = session_for(roots=[path.parent])
    assert fresh.start(str(path), resume=False)["status"] == "started"
    assert fresh.next_step()["title"] == "One"


def test_session_files_are_written_atomically(session_for, make_walkthrough, tmp_path, monkeypatch):
    path = make_walkthrough(THREE_STEPS)
    session = session_for(roots=[path.parent])
    session.start(str(path))
    before = (tmp_path / "out" / "wt_test_session.json").read_text()
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    with pytest.raises(OSError):
        session.next_step()
    assert (tmp_path / "out" / "wt_test_session.json").read_text() == before
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["wt_test_session.json"]


def test_the_mcp_tools_are_served_in_process(make_walkthrough, tmp_path):
    path = make_walkthrough(THREE_STEPS)

    async def scenario():
        async with Client(build_server(ServerConfig(output_dir=tmp_path, allowed_roots=[path.parent]))) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert tools == {"start_walkthrough", "next_step", "report_gap", "walkthrough_status"}
            early = await client.call_tool("next_step", {})
            assert early.is_error and "call start_walkthrough" in early.content[0].text
            await client.call_tool("start_walkthrough", {"walkthrough_path": str(path)})
            step = await client.call_tool("next_step", {})
            assert step.structured_content["title"] == "One"
            bad = await client.call_tool("report_gap", {"gap_type": "nope", "severity": "info", "description": "d"})
            assert bad.is_error and "use one of: clarity, prerequisite" in bad.content[0].text

    asyncio.run(scenario())


def test_a_real_stdio_round_trip_with_the_server_module(make_walkthrough, tmp_path):
    path = make_walkthrough(THREE_STEPS)
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "stackbench.auditing.step_server",
            "--output",
            str(tmp_path / "sessions"),
            "--allowed-root",
            str(path.parent),
        ],
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT)},
        cwd=str(tmp_path),
    )

    async def scenario():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            started = await session.call_tool("start_walkthrough", {"walkthrough_path": str(path)})
            assert started.structured_content["total_steps"] == 3
            titles = []
            while True:
                step = (await session.call_tool("next_step", {})).structured_content
                if step.get("status") == "complete":
                    break
                titles.append(step["title"])
                if step["step_number"] == 2:
                    await session.call_tool(
                        "report_gap", {"gap_type": "clarity", "severity": "warning", "description": "vague"}
                    )
            status = (await session.call_tool("walkthrough_status", {})).structured_content
            return titles, status

    titles, status = asyncio.run(scenario())
    assert titles == ["One", "Two", "Three"]
    assert status["is_complete"] and status["gaps_reported"] == 1
    saved = json.loads((tmp_path / "sessions" / "wt_test_session.json").read_text())
    assert saved["is_complete"] and saved["gaps"][0]["step_number"] == 2
