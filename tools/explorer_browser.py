"""Driving the explorer's page in headless Chromium (Debian's, through Playwright): what its
browser tests and its benchmark share."""

from __future__ import annotations

import shutil
import time

__all__ = ["CHROMIUM_FLAGS", "chromium_path", "until", "run_sql"]

#: Chromium as the explorer's tests and benchmark run it: headless, nothing from the network.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def until(page, expression: str, timeout: float = 60.0, every: float = 0.01):
    """Poll ``expression`` in the page until it is truthy (the page's Content-Security-Policy
    forbids the string evaluation Playwright's wait_for_function uses)."""
    end = time.monotonic() + timeout
    while True:
        value = page.evaluate(expression)
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {expression}")
        time.sleep(every)


def run_sql(page, sql: str, timeout: float = 60.0) -> str:
    """Type ``sql`` into the editor, run it with Ctrl+Enter, wait for its answer; the status
    line."""
    page.click(".cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(sql)
    finished = page.evaluate("window.explorer.finished")
    page.keyboard.press("Control+Enter")
    until(page, f"window.explorer.finished > {finished}", timeout)
    return page.inner_text("#status")
