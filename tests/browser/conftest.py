"""Browser tests: Playwright driving Debian's Chromium (never a downloaded browser) against the live server,
with a real Celery worker behind it. Screenshots of the main pages land in var/screenshots/."""

import os
from pathlib import Path

import pytest

from tests.builders import BASE_DIR, make_user

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]
SCREENSHOTS = BASE_DIR / "var" / "screenshots"

# Playwright's sync API keeps an event loop in this thread; the test body still talks to the database.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is missing: bin/test installs it (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server, transactional_db):
    user = make_user(
        "maintainer",
        "audits.start_run",
        "walkthroughs.manage_library",
        "audits.share_run",
        "walkthroughs.add_feedback",
        "walkthroughs.add_presentedwalkthrough",
        "walkthroughs.change_presentedwalkthrough",
    )
    user.set_password("browser-pw")
    user.save()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=live_server.url)
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda message: message.type == "error" and page.console_errors.append(message.text))
    page.on("pageerror", lambda error: page.console_errors.append(str(error)))
    page.goto("/login/")
    page.fill("#id_username", "maintainer")
    page.fill("#id_password", "browser-pw")
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/")
    yield page
    context.close()


def screenshot(page, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
