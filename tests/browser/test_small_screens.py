"""Pages on a phone (390 px wide) and to the eye: nothing scrolls sideways, the navigation is all there, text
has enough contrast, and a keyboard user can skip to the content."""

import pytest
from playwright.sync_api import expect

from audits.importing import import_paths
from tests.browser.conftest import screenshot
from walkthroughs.models import Walkthrough

pytestmark = pytest.mark.slow

# WCAG's contrast ratio of an element's text against its nearest opaque background, computed in the page.
CONTRAST = """(element) => {
  const rgb = (value) => value.match(/[\\d.]+/g).slice(0, 4).map(Number);
  const luminance = ([r, g, b]) => {
    const channel = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  };
  let node = element, background = null;
  while (node && !background) {
    const value = rgb(getComputedStyle(node).backgroundColor);
    if (value.length < 4 || value[3] > 0) background = value;
    node = node.parentElement;
  }
  const [a, b] = [luminance(rgb(getComputedStyle(element).color)), luminance(background || [255, 255, 255])];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""


@pytest.fixture
def kv(kv_walkthrough_path):
    import_paths([kv_walkthrough_path], library_name="sqlite3")
    return Walkthrough.objects.get()


def test_at_390_px_no_page_scrolls_sideways_and_the_navigation_is_whole(page, kv, import_audit):
    run = import_audit(gaps=[(3, "Load the seed data", "logical_flow", "critical", "`seed.csv` is missing.")])
    page.set_viewport_size({"width": 390, "height": 844})
    for name, url in (
        ("home", "/"),
        ("library", f"/libraries/{kv.library_id}/"),
        ("walkthrough", f"/walkthroughs/{kv.pk}/"),
        ("run", run.get_absolute_url()),
        ("gaps", "/gaps/"),
        ("problems", "/problems/"),
    ):
        page.goto(url)
        expect(page.locator("h1").first).to_be_visible()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{url} is {width} px wide at 390 px"
        for link in page.locator(".topbar nav a").all():
            box = link.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, f"{url}: a menu link is cut off"
        screenshot(page, f"phone-{name}")
    assert not page.console_errors


def test_small_text_has_enough_contrast_and_the_content_can_be_reached_by_keyboard(page, kv, import_audit):
    import_audit(gaps=[(3, "Load the seed data", "logical_flow", "warning", "`seed.csv` is missing.")])
    page.goto(f"/walkthroughs/{kv.pk}/")
    for selector in ("table.timeline td.cell-warning", ".legend .cell-unreached", ".muted"):
        element = page.locator(selector).first
        ratio = element.evaluate(CONTRAST)
        assert ratio >= 4.5, f"{selector} has a contrast of {ratio:.2f}"
    page.keyboard.press("Tab")
    skip = page.locator(".skip-link")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()


def test_the_apis_interactive_docs_load_from_vendored_files(page, live_server):
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto("/api/v1/docs")
    expect(page.locator(".opblock-summary-path", has_text="/api/v1/runs").first).to_be_visible(timeout=20_000)
    screenshot(page, "api-docs")
    assert all(url.startswith(live_server.url) for url in requested), "everything comes from our own server"
    assert not page.console_errors
