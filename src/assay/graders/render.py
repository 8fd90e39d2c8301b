"""Screenshots of HTML in headless Chromium, for judges that look at a UI.

Chromium is Debian's (``/usr/bin/chromium``, or ``$ASSAY_CHROMIUM``), driven by
Playwright (the ``ui`` extra: ``pip install 'assay[ui]'``); Playwright's own browser
download is never used. The page and its files are served from memory under
``http://127.0.0.1:9/`` by request interception: every other request (any other host, any
``file:`` URL) is refused, so a rendered page reaches no network and reads no local file.

Starting Chromium takes seconds, so one browser serves every render of an event loop (a
run), each in its own context; it closes after :data:`IDLE_S` without a render, or when
the loop's tasks are cancelled at its end (``asyncio.run``).
"""

from __future__ import annotations

import asyncio
import contextlib
import mimetypes
import os
import shutil
import time
import weakref
from pathlib import Path
from typing import Any

CHROMIUM_ENV = "ASSAY_CHROMIUM"
ORIGIN = "http://127.0.0.1:9/"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]
TIMEOUT_MS = 15_000
IDLE_S = 30.0


class RenderUnavailable(Exception):
    """The page could not be rendered for a reason of the harness (no Chromium, no
    Playwright, a browser that crashed or timed out)."""


class _Shared:
    """The browser of one event loop, and the task that closes it when idle."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.playwright: Any = None
        self.browser: Any = None
        self.closer: asyncio.Task[None] | None = None
        self.busy = 0
        self.last_used = time.monotonic()

    async def get(self, executable: str) -> Any:
        async with self.lock:
            if self.browser is None or not self.browser.is_connected():
                from playwright.async_api import async_playwright

                await self.close()
                self.playwright = await async_playwright().start()
                self.browser = await self.playwright.chromium.launch(
                    executable_path=executable, headless=True, args=FLAGS
                )
                self.closer = asyncio.get_running_loop().create_task(self._close_when_idle())
            self.busy += 1
            return self.browser

    def release(self) -> None:
        self.busy -= 1
        self.last_used = time.monotonic()

    async def _close_when_idle(self) -> None:
        try:
            while self.busy or time.monotonic() - self.last_used < IDLE_S:
                await asyncio.sleep(max(1.0, IDLE_S - (time.monotonic() - self.last_used)))
        finally:
            self.closer = None
            await asyncio.shield(self.close())

    async def close(self) -> None:
        browser, playwright = self.browser, self.playwright
        self.browser = self.playwright = None
        with contextlib.suppress(Exception):
            if browser is not None:
                await browser.close()
        with contextlib.suppress(Exception):
            if playwright is not None:
                await playwright.stop()


_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Shared] = weakref.WeakKeyDictionary()


async def close_browsers() -> None:
    """Close this event loop's browser now (it would close itself when idle)."""
    shared = _SHARED.pop(asyncio.get_running_loop(), None)
    if shared is not None:
        if shared.closer is not None:
            shared.closer.cancel()
        await shared.close()


def chromium_path() -> str | None:
    """The Chromium binary: ``$ASSAY_CHROMIUM``, else ``chromium`` on the PATH, else
    ``/usr/bin/chromium``; None when none exists."""
    for candidate in (os.environ.get(CHROMIUM_ENV), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


async def render_html(
    site: dict[str, bytes], page: str, width: int, height: int, full_page: bool = False
) -> bytes:
    """A PNG screenshot of ``site[page]`` at ``width`` x ``height`` CSS pixels; the other
    files of ``site`` (path -> bytes) are what the page may load (styles, images)."""
    executable = chromium_path()
    if executable is None:
        raise RenderUnavailable(
            f"no Chromium to render with (set ${CHROMIUM_ENV}, or run scripts/install-browser.sh)"
        )
    try:
        from playwright.async_api import Error as PlaywrightError
    except ImportError:
        raise RenderUnavailable("rendering needs Playwright: pip install 'assay[ui]'") from None

    async def serve(route: Any) -> None:
        url = str(route.request.url)
        path = url[len(ORIGIN) :].split("?", 1)[0].split("#", 1)[0] if url.startswith(ORIGIN) else None
        if path is None or path not in site:
            await route.abort()
            return
        kind = mimetypes.guess_type(path)[0] or "application/octet-stream"
        await route.fulfill(status=200, body=site[path], content_type=kind)

    shared = _SHARED.setdefault(asyncio.get_running_loop(), _Shared())
    try:
        browser = await shared.get(executable)
        try:
            context = await browser.new_context(viewport={"width": width, "height": height})
            try:
                tab = await context.new_page()
                await tab.route("**/*", serve)
                await tab.goto(ORIGIN + page, wait_until="load", timeout=TIMEOUT_MS)
                png: bytes = await tab.screenshot(type="png", full_page=full_page, timeout=TIMEOUT_MS)
                return png
            finally:
                await context.close()
        finally:
            shared.release()
    except PlaywrightError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RenderUnavailable(f"Chromium could not render {page}: {first}") from None
