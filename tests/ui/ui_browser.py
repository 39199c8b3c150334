"""What the browser tests share: Debian's headless Chromium driven by Playwright, and the
folder the screenshots go to ($LOCALMEM_UI_SCREENSHOTS, which `make screenshots` points
at docs/ui, else a temporary one). Plain functions, not fixtures: each test module wraps
them in its own fixtures (a second conftest.py would shadow the root one's imports)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def launch() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


def screenshot_folder(factory: pytest.TempPathFactory) -> Path:
    chosen = os.environ.get("LOCALMEM_UI_SCREENSHOTS")
    folder = Path(chosen) if chosen else factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def page_width(page: Page) -> int:
    """How wide the document is, scrolled content included (wider than the window: broken)."""
    return int(page.evaluate("document.documentElement.scrollWidth"))


def open_view(page: Page, address: str) -> None:
    """Open the printed address and wait until its page has moved on to the view: the
    token's answer refreshes itself, and a `goto` meanwhile would be interrupted."""
    page.goto(address)
    page.wait_for_url(lambda url: "token=" not in url)
    page.wait_for_load_state()
