"""The Claude walkthrough generator with the real Claude Code CLI against a scripted model (tests/scripted_model.py):
only the model is scripted."""

import json

import pytest

from stackbench.agent.runner import ClaudeSettings
from stackbench.generation.claude import GenerationError, generate_with_claude
from stackbench.generation.rules import generate_walkthrough
from tests.scripted_model import Scenario, ScriptedModel, claude_settings_for


@pytest.fixture
def kv_page(sample_dir):
    return sample_dir / "docs" / "kv-quickstart.md"


def test_the_claude_generator_writes_a_validated_export_with_the_real_cli(kv_page, tmp_path):
    _, drafted = generate_walkthrough(kv_page, "sqlite3", "3")
    with ScriptedModel(Scenario(generate_file=json.dumps(drafted))) as model:
        walkthrough_id, export = generate_with_claude(
            kv_page, "sqlite3", claude_settings_for(model), "3", original_path="docs/kv.md", logs=tmp_path
        )
    assert walkthrough_id == generate_walkthrough(kv_page, "sqlite3")[0]
    assert len(export["steps"]) == 5
    assert export["metadata"] == {
        **drafted["metadata"],
        "originalDocPath": "docs/kv.md",
        "generatedBy": "stackbench-claude",
        "library": "sqlite3",
        "libraryVersion": "3",
    }
    assert "Tutorial file: " in json.dumps(model.requests[0]["messages"][-1])
    trace = (tmp_path / "agent_logs" / "audit_tools.jsonl").read_text().splitlines()
    assert [json.loads(line)["tool"] for line in trace] == ["Write"]


def test_a_file_written_outside_the_agents_folder_or_a_rejected_key_is_a_generation_error(kv_page):
    outside = Scenario(generate_file="{}", generate_path="/tmp/stackbench-outside.json")
    with ScriptedModel(outside) as model, pytest.raises(GenerationError, match="without writing the walkthrough"):
        generate_with_claude(kv_page, "sqlite3", claude_settings_for(model))
    with ScriptedModel(Scenario(always_status=401)) as model, pytest.raises(GenerationError, match="rejected"):
        generate_with_claude(kv_page, "sqlite3", claude_settings_for(model))


def test_an_export_that_does_not_validate_is_refused_with_the_reason(kv_page):
    with (
        ScriptedModel(Scenario(generate_file='{"version": "1.0", "steps": []}')) as model,
        pytest.raises(GenerationError, match="^the agent wrote an invalid walkthrough: ") as failure,
    ):
        generate_with_claude(kv_page, "sqlite3", claude_settings_for(model))
    assert "the agent's walkthrough: walkthrough: Field required" in str(failure.value)


def test_without_a_credential_nothing_runs(kv_page, tmp_path):
    with pytest.raises(GenerationError, match="No Claude credential is configured"):
        generate_with_claude(kv_page, "sqlite3", ClaudeSettings(), logs=tmp_path)
    assert list(tmp_path.iterdir()) == []
