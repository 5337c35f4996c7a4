import json

import pytest

from stackbench.auditing.run import run_audit
from stackbench.formats.walkthrough import WalkthroughExport
from stackbench.generation.rules import generate_walkthrough
from tests.builders import audit_request


@pytest.fixture
def kv_page(sample_dir):
    return sample_dir / "docs" / "kv-quickstart.md"


def test_each_second_level_section_becomes_a_step_with_its_operations(kv_page):
    walkthrough_id, export = generate_walkthrough(kv_page, "sqlite3", "3.40", original_path="docs/kv-quickstart.md")
    parsed = WalkthroughExport.model_validate(export)
    assert [s.title for s in parsed.ordered_steps()] == [
        "Create a workspace",
        "Create the database",
        "Load the seed data",
        "Tune the database",
        "Read a value",
    ]
    assert parsed.walkthrough.title == "A key-value store with sqlite3"
    assert parsed.original_doc_path == "docs/kv-quickstart.md"
    second = parsed.ordered_steps()[1].contentFields
    assert second.contentForUser.startswith("## Create the database") and "```python" in second.contentForUser
    assert second.operationsForAgent == (
        "1. Create kv.py with the code shown\n2. Run: python kv.py\n3. Success indicators: It prints `ready`"
    )
    assert "Prerequisites: " in second.contextForAgent and "Python 3.11" in second.contextForAgent
    assert [s.nextStepReference for s in parsed.ordered_steps()] == [1, 2, 3, 4, None]


def test_the_id_comes_from_the_content(kv_page, tmp_path):
    first, _ = generate_walkthrough(kv_page, "sqlite3")
    again, _ = generate_walkthrough(kv_page, "sqlite3")
    changed = tmp_path / "kv.md"
    changed.write_text(kv_page.read_text() + "\nOne more line.\n")
    other, _ = generate_walkthrough(changed, "sqlite3")
    assert first == again and first != other and first.startswith("wt_") and len(first) == 11


def test_the_generated_walkthrough_audits_like_the_hand_made_one(kv_page, sample_dir, tmp_path):
    walkthrough_id, export = generate_walkthrough(kv_page, "sqlite3")
    path = tmp_path / f"{walkthrough_id}.json"
    path.write_text(json.dumps(export))
    result = run_audit(audit_request(path, tmp_path / "out"))
    expected = json.loads((sample_dir / "walkthroughs" / "wt_kv_quickstart.expected.json").read_text())
    for step, gap_types in expected["gaps_expected"].items():
        assert set(gap_types) <= {g.gap_type for g in result.gaps if g.step_number == int(step)}
    for step in expected["clean_steps"]:
        assert not [g for g in result.gaps if g.step_number == step and g.severity in ("critical", "warning")]


def test_numbered_steps_are_used_when_there_are_no_sections(tmp_path):
    page = tmp_path / "howto.md"
    page.write_text(
        "# How to pipe\n\n### 1. Install\n\n```bash\npip install toolz\n```\n\n### 2. Use it\n\nRun `pipe`.\n"
    )
    _, export = generate_walkthrough(page, "toolz")
    assert [s["title"] for s in export["steps"]] == ["Install", "Use it"]
    assert export["steps"][0]["contentFields"]["operationsForAgent"] == "1. Run: pip install toolz"


def test_the_cli_writes_the_export(kv_page, tmp_path):
    from tests.builders import stackbench

    done = stackbench(
        "walkthrough", "generate", "--doc-path", str(kv_page), "-l", "sqlite3", "-v", "3", "-o", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    written = list(tmp_path.glob("wt_*.json"))
    assert len(written) == 1 and "5 steps" in done.stdout
    assert json.loads(written[0].read_text())["metadata"]["library"] == "sqlite3"


def test_a_page_is_read_as_its_reader_sees_it(tmp_path):
    docs = tmp_path / "docs"
    (docs / "snippets").mkdir(parents=True)
    (docs / "snippets" / "install.md").write_text("```bash\npip install demo\n```\n")
    page = docs / "tutorial.md"
    page.write_text(
        "---\ntitle: Front matter\n---\n# Demo\n\n(intro)=\n\nRead the [guide][g].\n\n## Install\n\n"
        '--8<-- "snippets/install.md"\n\n'
        ":::{note}\nRun `rm -rf /` never.\n:::\n\n"
        '!!! tip "Good to know"\n    It takes a second.\n\n'
        "## Use\n\nSee [the API][g] and ![logo][img].\n\n[g]: https://example.org/guide\n[img]: logo.png\n"
    )
    _, export = generate_walkthrough(page, "demo", docs_root=docs)
    install, use = (step["contentFields"]["contentForUser"] for step in export["steps"])
    assert "```bash\npip install demo\n```" in install
    assert "> **Note:**\n> Run `rm -rf /` never." in install
    assert "> **Good to know:**\n> It takes a second." in install
    assert "[the API](https://example.org/guide)" in use and "![logo](logo.png)" in use
    assert "[g]:" not in use and "title: Front matter" not in export["walkthrough"]["description"]
    assert export["walkthrough"]["description"] == "Read the [guide](https://example.org/guide)."


def test_a_later_top_heading_starts_a_section_and_contributor_notes_are_not_steps(tmp_path):
    page = tmp_path / "README.md"
    page.write_text(
        "# demo\n\nA tool.\n\n## Usage\n\n```bash\ndemo run\n```\n\n# Development\n\nCheck out the repository, then:\n\n"
        "```bash\nnpm i\nnpm start\n```\n\n## License\n\nMIT\n"
    )
    _, export = generate_walkthrough(page, "demo", "1.0")
    assert [step["title"] for step in export["steps"]] == ["Usage"]
    assert "npm start" not in export["steps"][0]["contentFields"]["contentForUser"]
