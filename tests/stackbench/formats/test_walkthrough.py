import json

import pytest

from stackbench.formats.walkthrough import Gap, Session, WalkthroughExport, session_path_for, walkthrough_id_for
from stackbench.lib.jsonfiles import FormatError, load_model, parse_model, write_model


def test_the_sample_export_loads_with_steps_in_display_order(kv_walkthrough_path):
    export = load_model(WalkthroughExport, kv_walkthrough_path)
    assert export.walkthrough.title == "A key-value store with sqlite3"
    assert [s.title for s in export.ordered_steps()][:2] == ["Create a workspace", "Create the database"]
    assert export.original_doc_path == "docs/kv-quickstart.md"


def test_steps_numbered_from_one_and_shuffled_are_ordered_by_display_order(kv_walkthrough_path):
    data = json.loads(kv_walkthrough_path.read_text())
    for step in data["steps"]:
        step["displayOrder"] += 1
    data["steps"].reverse()
    export = parse_model(WalkthroughExport, data, "shuffled.json")
    assert [s.displayOrder for s in export.ordered_steps()] == [1, 2, 3, 4, 5]


def test_a_missing_step_title_is_named_in_the_error(kv_walkthrough_path):
    data = json.loads(kv_walkthrough_path.read_text())
    del data["steps"][2]["title"]
    with pytest.raises(FormatError, match=r"bad\.json: steps\.2\.title: Field required"):
        parse_model(WalkthroughExport, data, "bad.json")


def test_malformed_json_names_the_file_and_position(write_json):
    path = write_json("broken.json", '{"steps": [')
    with pytest.raises(FormatError, match=r"broken\.json: not valid JSON"):
        load_model(WalkthroughExport, path)


def test_an_unknown_gap_type_is_refused():
    with pytest.raises(FormatError, match="gap_type"):
        parse_model(Gap, {"step_number": 1, "gap_type": "typo", "severity": "info", "description": "x"}, "gap")


def test_naive_timestamps_from_the_old_tools_are_read_as_utc():
    gap = parse_model(
        Gap,
        {
            "step_number": 1,
            "gap_type": "clarity",
            "severity": "info",
            "description": "x",
            "timestamp": "2025-01-15T12:32:15",
        },
        "gap",
    )
    assert gap.timestamp.isoformat() == "2025-01-15T12:32:15+00:00"


def test_a_session_written_and_read_back_is_unchanged(tmp_path):
    session = Session(
        walkthrough_id="wt_a",
        walkthrough_path="/x/wt_a.json",
        current_step=2,
        total_steps=3,
        completed_steps=2,
        session_started="2026-01-01T00:00:00Z",
        gaps=[Gap(step_number=2, step_title="B", gap_type="clarity", severity="info", description="d")],
    )
    write_model(tmp_path / "s.json", session)
    assert load_model(Session, tmp_path / "s.json") == session


def test_the_id_is_the_file_stem_and_the_session_sits_beside_or_in_the_output(tmp_path):
    assert walkthrough_id_for("/a/wt_ab12cd34.json") == "wt_ab12cd34"
    assert session_path_for("/a/wt_x.json") == __import__("pathlib").Path("/a/wt_x_session.json")
    assert session_path_for("/a/wt_x.json", tmp_path) == tmp_path / "wt_x_session.json"
