import pytest
from playwright.sync_api import expect

from tests.browser.conftest import screenshot
from walkthroughs.models import Feedback, PresentedWalkthrough

pytestmark = pytest.mark.slow


@pytest.fixture
def presented(settings, symposium_repo, review_walkthrough):
    settings.STACKBENCH_REPO_ROOTS = [str(symposium_repo.parent)]
    return PresentedWalkthrough.present(review_walkthrough, str(symposium_repo))


def test_review_a_presented_walkthrough_expand_a_diff_pick_a_location_and_click_an_action(page, presented):
    page.goto(presented.get_absolute_url())
    expect(page.locator("pre.mermaid svg")).to_be_visible(timeout=15_000)
    page.evaluate("window.stillTheSamePage = true")

    tree = page.locator("#gitdiff-changes-0")
    tree.get_by_role("link", name="src/auth.py").first.click()
    diff = tree.locator("table.diff").first
    expect(diff).to_be_visible()
    expect(diff).to_contain_text("import hmac")
    expect(diff.locator("tr.add").first).to_be_visible()

    card = page.locator("#comment-highlights-2")
    expect(card).to_contain_text("5 possible locations")
    card.locator("input[value='src/auth.py:17']").check()
    card.get_by_role("button", name="Use this location").click()
    expect(page.locator("#comment-highlights-2 code.where")).to_have_text("src/auth.py:17")
    expect(page.locator("#comment-highlights-2 tr.hit")).to_contain_text('return validate_token("s")')

    page.get_by_role("button", name="Request changes").click()
    expect(page.locator("#feedback")).to_contain_text("I'd like more changes. Let's discuss them first.")
    assert page.evaluate("window.stillTheSamePage") is True
    screenshot(page, "presented-walkthrough")

    presented.refresh_from_db()
    assert presented.chosen_locations == {"highlights.2": "src/auth.py:17"}
    assert Feedback.objects.get().text == "I'd like more changes. Let's discuss them first."
    assert not page.console_errors
