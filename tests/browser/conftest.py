"""Headless Chromium for end-to-end tests (Debian's /usr/bin/chromium driven by Playwright).

Playwright's own browser download is never used: ``scripts/install-browser.sh`` installs
Debian's chromium, and the tests launch it through ``executable_path``. Without it the
tests skip, saying why. Screenshots land in ``artifacts/screenshots/``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = os.environ.get("ASSAY_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium per test module. Not per session: Playwright's sync API keeps an
    event loop running in this thread, and later tests call ``asyncio.run``."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}; run scripts/install-browser.sh (Debian's chromium package)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (the test extra)"
    )
    profile = tempfile.mkdtemp(prefix="assay-chromium-")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            viewport={"width": 1300, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh tab that records every request and refuses any that would leave the machine."""
    tab = browser.new_page()
    tab.requests = []  # type: ignore[attr-defined]
    tab.errors = []  # type: ignore[attr-defined]

    def guard(route: Any) -> None:
        url = route.request.url
        tab.requests.append(url)
        if url.startswith(("file://", "http://127.0.0.1:", "data:")):
            route.continue_()
        else:
            route.abort()

    tab.route("**/*", guard)
    tab.on("pageerror", lambda exc: tab.errors.append(str(exc)))
    tab.set_default_timeout(10_000)
    yield tab
    tab.close()
    assert tab.errors == [], tab.errors


def shot(page: Any, name: str, full_page: bool = False) -> Path:
    """Save a screenshot under artifacts/screenshots/ (kept as a test artifact)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
