import re

import pytest
from playwright.sync_api import expect

from audits.importing import import_paths
from audits.models import Run
from tests.browser.conftest import screenshot
from walkthroughs.models import Walkthrough

pytestmark = pytest.mark.slow

MERMAID_STEP = (
    "Architecture",
    "How it fits together:\n\n```mermaid\nflowchart LR; reader --> docs --> code\n```\n\n"
    "| part | role |\n|---|---|\n| docs | teach |\n",
    "1. Read the diagram",
)


@pytest.fixture
def kv(kv_walkthrough_path):
    import_paths([kv_walkthrough_path], library_name="sqlite3")
    return Walkthrough.objects.get()


def test_start_a_run_from_the_ui_and_watch_it_finish_live_then_rerun_and_compare(page, kv, celery_worker):
    page.goto(f"/walkthroughs/{kv.pk}/")
    page.click("text=Audit this walkthrough")
    page.check("input[name=backend][value=rules]")
    page.click("text=Start run")
    expect(page).to_have_url(re.compile(r"/runs/\d+/$"))
    page.evaluate("window.stillTheSamePage = true")
    expect(page.locator("#run-live .status")).to_have_text("Succeeded", timeout=60_000)
    assert page.evaluate("window.stillTheSamePage") is True, "the page reloaded instead of updating in place"
    expect(page.locator("#step-3")).to_contain_text("seed.csv")
    expect(page.locator("#how-far li").nth(2)).to_contain_text("partly done")
    expect(page.locator("#run-live")).to_contain_text("Steps completed")
    expect(page.locator("#files")).to_contain_text("wt_kv_quickstart_audit.json")
    expect(page.locator("#run-actions")).to_contain_text("Rerun")
    screenshot(page, "run-audit")

    first = Run.objects.get()
    page.click("#run-actions >> text=Rerun")
    expect(page.locator("h1")).to_contain_text(f"Rerun #{first.pk}")
    page.fill("input[name=version]", "3.99")
    page.click("text=Start run")
    expect(page.locator("#run-live .status")).to_have_text("Succeeded", timeout=60_000)
    comparison = page.locator("#comparison")
    expect(comparison).to_contain_text(f"Compared with the previous run, #{first.pk}")
    expect(comparison).to_contain_text("Still present (2)")
    expect(comparison).to_contain_text("New in this run (0)")
    screenshot(page, "run-rerun-comparison")
    assert not page.console_errors


def test_a_walkthrough_page_draws_its_mermaid_diagram_and_timeline(page, make_walkthrough, kv, import_audit):
    path = make_walkthrough([MERMAID_STEP], name="wt_diagram", title="Architecture tour")
    import_paths([path], library_name="sqlite3")
    diagram = Walkthrough.objects.get(walkthrough_id="wt_diagram")
    page.goto(f"/walkthroughs/{diagram.pk}/")
    expect(page.locator("pre.mermaid svg")).to_be_visible(timeout=15_000)
    expect(page.locator(".markdown table")).to_contain_text("teach")
    screenshot(page, "walkthrough-mermaid")

    import_audit(gaps=[(3, "Load the seed data", "logical_flow", "critical", "`seed.csv` is missing.")])
    page.goto(f"/walkthroughs/{kv.pk}/")
    expect(page.locator("table.timeline td.cell-critical")).to_have_count(1)
    expect(page.locator("table.timeline td.cell-passed")).to_have_count(4)
    string = page.locator("pre.highlight .hl-s2, pre.highlight .hl-s1").first
    expect(string).to_have_css("color", "rgb(186, 33, 33)")  # the code is coloured: the Pygments sheet is linked
    screenshot(page, "walkthrough-timeline")
    assert not page.console_errors


def test_filtering_the_gap_list_updates_it_in_place_and_the_url(page, kv, import_audit):
    import_audit(
        gaps=[
            (3, "Load the seed data", "logical_flow", "critical", "`seed.csv` is missing."),
            (4, "Tune the database", "clarity", "warning", "Nothing concrete to do."),
        ]
    )
    page.goto("/gaps/")
    expect(page.locator("#gap-results tbody tr")).to_have_count(2)
    page.evaluate("window.stillTheSamePage = true")
    page.select_option("select[name=severity]", "warning")
    expect(page.locator("#gap-results tbody tr")).to_have_count(1)
    expect(page.locator("#gap-results")).to_contain_text("Nothing concrete to do.")
    expect(page).to_have_url(re.compile(r"severity=warning"))
    page.fill("input[name=q]", "seed")
    expect(page.locator("#gap-results")).to_contain_text("Nothing matches.")
    assert page.evaluate("window.stillTheSamePage") is True
    screenshot(page, "gaps-filtered")
    page.goto("/gaps/?severity=critical")
    expect(page.locator("#gap-results tbody tr")).to_have_count(1)
    assert not page.console_errors


def test_the_main_pages_render_without_errors(page, kv, import_audit, sample_dir):
    import_audit(gaps=[(3, "Load the seed data", "logical_flow", "critical", "`seed.csv` is missing.")])
    import_paths([sample_dir / "extraction"])
    for name, url in (
        ("home", "/"),
        ("library", f"/libraries/{kv.library_id}/"),
        ("runs", "/runs/"),
        ("upload", "/upload/"),
    ):
        page.goto(url)
        expect(page.locator("h1")).to_be_visible()
        screenshot(page, name)
    assert not page.console_errors
