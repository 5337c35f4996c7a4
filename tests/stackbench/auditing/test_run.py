"""Auditing one walkthrough: the checks made before any auditor starts, and the chosen auditor run with an
observer that is closed whatever happens."""

import json

import pytest

from stackbench.auditing.common import AuditError, AuditObserver
from stackbench.auditing.run import run_audit
from tests.builders import audit_request

ECHO_STEPS = [
    ("Say hello", "# Say hello\n\n```bash\necho hello\n```", "1. Run: echo hello"),
    ("Read on", "# Read on", "1. Read"),
]


class Recorder(AuditObserver):
    def __init__(self):
        self.events = []

    def step_started(self, number, total, title):
        self.events.append(("step", number, total))

    def close(self):
        self.events.append(("closed",))


def test_an_unreadable_walkthrough_or_output_folder_is_a_clear_error(tmp_path, kv_walkthrough_path):
    broken = tmp_path / "wt_broken.json"
    broken.write_text("{")
    with pytest.raises(AuditError, match="not valid JSON"):
        run_audit(audit_request(broken, tmp_path / "out"))
    with pytest.raises(AuditError, match="does not exist"):
        run_audit(audit_request(tmp_path / "missing.json", tmp_path / "out"))
    readonly = tmp_path / "readonly"
    readonly.write_text("a file, not a folder")
    with pytest.raises(AuditError, match="cannot write to the output folder"):
        run_audit(audit_request(kv_walkthrough_path, readonly / "out"))
    with pytest.raises(AuditError, match="unknown backend"):
        run_audit(audit_request(kv_walkthrough_path, tmp_path / "out"), backend="magic")


def test_a_small_walkthrough_is_audited_by_the_rules_into_a_folder_made_for_it(make_walkthrough, tmp_path):
    path = make_walkthrough(ECHO_STEPS)
    output = tmp_path / "new" / "out"
    recorder = Recorder()
    result = run_audit(audit_request(path, output, "demo", "1.0"), observer=recorder)
    assert (result.walkthrough_id, result.total_steps, result.completed_steps, result.success) == (
        "wt_test",
        2,
        2,
        True,
    )
    assert json.loads((output / "wt_test_audit.json").read_text())["library_name"] == "demo"
    assert json.loads(result.execution_log)[0]["actions"][0]["command"] == "echo hello"
    assert recorder.events == [("step", 1, 2), ("step", 2, 2), ("closed",)]
    assert not (output / ".stackbench-write-test").exists(), "the write probe leaves nothing behind"


def test_the_observer_is_closed_when_the_audit_fails(tmp_path):
    broken = tmp_path / "wt_broken.json"
    broken.write_text("{")
    recorder = Recorder()
    with pytest.raises(AuditError):
        run_audit(audit_request(broken, tmp_path / "out"), observer=recorder)
    assert recorder.events == [("closed",)]


def test_a_missing_walkthrough_is_refused_before_any_folder_is_made(tmp_path):
    recorder = Recorder()
    with pytest.raises(AuditError, match="missing.json does not exist"):
        run_audit(audit_request(tmp_path / "missing.json", tmp_path / "out"), observer=recorder)
    assert not (tmp_path / "out").exists() and recorder.events == [], "no auditor started"
